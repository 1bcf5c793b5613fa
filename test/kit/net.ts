// Loopback networking for tests: a server on a port the OS picks, and a port with nothing listening on it.
import type { Server as HttpServer } from "node:http";
import { createServer, type AddressInfo, type Server } from "node:net";

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
