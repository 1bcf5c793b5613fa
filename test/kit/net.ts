// Loopback networking for tests: a server on a port the OS picks, a port with nothing listening on it, connection counts.
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { Server as HttpServer } from "node:http";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";

export interface Listening {
  port: number;
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Drops open connections (for HTTP servers) and stops listening. */
  close(): Promise<void>;
}

/** Starts `server` on 127.0.0.1 at a port the OS picks (listen(0)). */
export async function listen(server: Server | HttpServer): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      if ("closeAllConnections" in server) server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A loopback port the OS just handed out and that has nothing listening on it any more: a dead server for
 * connection-refused cases, or a free port for a child process to bind.
 */
export async function freePort(): Promise<number> {
  const listening = await listen(createServer());
  await listening.close();
  return listening.port;
}

/** `http://127.0.0.1:<port>` with nothing listening behind it. */
export async function deadOrigin(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}

/**
 * Counts the TCP connections this process opens or tries to open to `port` on loopback, whether they connect or
 * are refused: a client's reconnect attempts against a server that is gone.
 */
export function countConnections(port: number): { readonly count: number; stop(): void } {
  let count = 0;
  const seen = new WeakSet<Socket>();
  const onSocket = (message: unknown) => {
    const socket = (message as { socket: Socket }).socket;
    const note = () => {
      if (seen.has(socket)) return;
      seen.add(socket);
      count++;
    };
    socket.once("connect", () => socket.remotePort === port && note());
    socket.once("error", (error: Error & { port?: number }) => error.port === port && note());
  };
  subscribe("net.client.socket", onSocket);
  return {
    get count() {
      return count;
    },
    stop: () => unsubscribe("net.client.socket", onSocket),
  };
}
