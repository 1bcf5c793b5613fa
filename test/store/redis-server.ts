// Test helper: a throwaway redis-server on a free loopback port, persistence off, stopped after the tests.
import { spawn, type ChildProcess } from "node:child_process";
import { connect } from "node:net";
import { freePort } from "../kit/net.js";

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Sends PING over a raw socket; true on +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let reply = "";
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once("error", () => done(false));
    socket.on("data", (chunk) => {
      reply += chunk.toString();
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG"));
    });
    socket.once("connect", () => socket.write("PING\r\n"));
  });
}

/** Starts `redis-server` (from PATH) and waits until it answers PING. */
export async function startRedis(): Promise<RedisServer> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child: ChildProcess = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "yes", "--loglevel", "warning"],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let exited = false;
    child.once("exit", () => (exited = true));
    const deadline = Date.now() + 10_000;
    while (!exited && Date.now() < deadline && !(await ping(port))) await new Promise((r) => setTimeout(r, 20));
    if (!exited && (await ping(port))) {
      return {
        port,
        url: `redis://127.0.0.1:${port}`,
        stop: () =>
          new Promise<void>((resolve) => {
            if (exited) return resolve();
            child.once("exit", () => resolve());
            child.kill("SIGKILL");
          }),
      };
    }
    child.kill("SIGKILL");
    // The port may have been taken between our probe and the server's bind: try another one.
    if (attempt >= 3) throw new Error("could not start redis-server");
  }
}
