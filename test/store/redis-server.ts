// Test helper: a throwaway redis-server on a free loopback port, persistence off, stopped after the tests; stores on it.
import { spawn, type ChildProcess } from "node:child_process";
import { connect } from "node:net";
import { afterAll, beforeAll } from "vitest";
import { RedisOperationStore, type RedisOperationStoreOptions } from "../../runtime/store/redis.js";
import { freePort } from "../kit/net.js";
import { sleep } from "../kit/timing.js";

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
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--protected-mode",
        "yes",
        "--loglevel",
        "warning",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let exited = false;
    child.once("exit", () => (exited = true));
    const deadline = Date.now() + 10_000;
    while (!exited && Date.now() < deadline && !(await ping(port))) await sleep(20);
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

export interface RedisForTests {
  /** The server, once the beforeAll hook has run. */
  readonly server: RedisServer;
  /** A Redis store on the server (not yet awaited ready); closed after the tests, after what `closeAfter` holds. */
  store(options: Omit<RedisOperationStoreOptions, "url">): RedisOperationStore;
  /** Closes `closable` (a manager over the stores) after the tests, before the stores. */
  closeAfter<T extends { close(): void }>(closable: T): T;
}

/** A redis-server for the calling file or describe block: started before its tests, stopped after them. */
export function redisForTests(): RedisForTests {
  let server: RedisServer | undefined;
  const stores: RedisOperationStore[] = [];
  const closables: { close(): void }[] = [];
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    for (const c of closables) c.close();
    for (const s of stores) await s.close();
    await server?.stop();
  });
  return {
    get server() {
      if (server === undefined) throw new Error("redis-server is started in beforeAll");
      return server;
    },
    store(options) {
      const store = new RedisOperationStore({ ...options, url: this.server.url });
      stores.push(store);
      return store;
    },
    closeAfter(closable) {
      closables.push(closable);
      return closable;
    },
  };
}
