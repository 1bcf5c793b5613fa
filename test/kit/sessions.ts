// Sessions wired to a pair of method tables (client-to-server, server-to-client), and a connected in-memory pair.
import type { DispatchTable } from "../../runtime/rpc/dispatch.js";
import type { InboundInfo } from "../../runtime/rpc/transport.js";
import { ServerSession, type ServerSessionOptions } from "../../runtime/mcp/lifecycle.js";
import { ClientSession, type ClientSessionOptions } from "../../runtime/mcp/client-session.js";
import { Session, type SessionOptions } from "../../runtime/rpc/session/session.js";
import { createInMemoryPair, type InMemoryTransport } from "../../runtime/transports/in-memory.js";

/** The method tables a client and a server are built on; without `isMessage` the session's own check applies. */
export interface MethodTables {
  clientToServer: DispatchTable;
  serverToClient: DispatchTable;
  isMessage?: (value: unknown) => boolean;
}

type Wiring = Pick<SessionOptions, "inbound" | "outbound" | "isMessage">;

export interface ConnectOptions {
  server?: Partial<ServerSessionOptions>;
  client?: Partial<ClientSessionOptions>;
  /** Attached to every message the server end receives (as an authenticated transport would). */
  serverInfo?: InboundInfo;
  /** Runs on the server session before it connects (install extensions, register handlers). */
  setup?: (server: ServerSession) => void;
}

export interface ConnectedPair {
  client: ClientSession;
  server: ServerSession;
  clientEnd: InMemoryTransport;
  serverEnd: InMemoryTransport;
}

export interface SessionKit {
  /** What a session on `side` receives and sends. */
  wiring(side: "client" | "server"): Wiring;
  /** A plain JSON-RPC session for `side` (no lifecycle). */
  session(side: "client" | "server", options?: Partial<SessionOptions>): Session;
  serverSession(options?: Partial<ServerSessionOptions>): ServerSession;
  clientSession(options?: Partial<ClientSessionOptions>): ClientSession;
  /** A server and a client session over an in-memory pair, the server connected first, the handshake done. */
  connectedPair(options?: ConnectOptions): Promise<ConnectedPair>;
}

/** The session helpers over `tables`. */
export function sessionKit(tables: MethodTables): SessionKit {
  const wiring = (side: "client" | "server"): Wiring => {
    const [inbound, outbound] =
      side === "server"
        ? [tables.clientToServer, tables.serverToClient]
        : [tables.serverToClient, tables.clientToServer];
    return tables.isMessage === undefined ? { inbound, outbound } : { inbound, outbound, isMessage: tables.isMessage };
  };
  const serverSession = (options: Partial<ServerSessionOptions> = {}): ServerSession =>
    new ServerSession({ ...wiring("server"), serverInfo: { name: "test-server", version: "1" }, ...options });
  const clientSession = (options: Partial<ClientSessionOptions> = {}): ClientSession =>
    new ClientSession({ ...wiring("client"), clientInfo: { name: "test-client", version: "1" }, ...options });
  return {
    wiring,
    session: (side, options = {}) => new Session({ ...wiring(side), ...options }),
    serverSession,
    clientSession,
    async connectedPair(options = {}) {
      const [clientEnd, serverEnd] = createInMemoryPair(
        options.serverInfo === undefined ? {} : { serverInfo: options.serverInfo },
      );
      const server = serverSession(options.server);
      options.setup?.(server);
      await server.connect(serverEnd);
      const client = clientSession(options.client);
      await client.connect(clientEnd);
      return { client, server, clientEnd, serverEnd };
    },
  };
}
