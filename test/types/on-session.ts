// Compile-only checks of createStreamableHttpServer's onSession: the one-liners of the guide fit, and a wrong callback stays an error.
import { createMcpServer, createStreamableHttpServer, Server } from "mcpgen";
import type { HttpServerTransport } from "mcpgen";

const server = createMcpServer({ serverInfo: { name: "types", version: "1.0.0" } });

// McpServer.connect resolves to the session it opened: the one-liner passes it through as it is.
export const highLevel = createStreamableHttpServer({ onSession: (t) => server.connect(t) });

// The typed low-level server: a fresh session per transport.
export const lowLevel = createStreamableHttpServer({
  onSession: (t) => Server.create({ serverInfo: { name: "types", version: "1.0.0" } }).peer.connect(t),
});

// Callbacks that return nothing, or settle with nothing, fit as before.
export const returnsNothing = createStreamableHttpServer({ onSession: (t: HttpServerTransport) => void t });
export const settlesEmpty = createStreamableHttpServer({ onSession: async (t) => void (await server.connect(t)) });

// A callback that returns a value that is not a promise is still refused: onSession awaits what it returns.
// @ts-expect-error a number is neither nothing nor a promise
export const returnsNumber = createStreamableHttpServer({ onSession: () => 42 });

// And its parameter is still typed: a transport, not anything.
// @ts-expect-error the transport is not a string
export const wrongParameter = createStreamableHttpServer({ onSession: (t: string) => void t });
