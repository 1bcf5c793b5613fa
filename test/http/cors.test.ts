// CORS for browser pages on other origins: preflights, the headers on every answer, and agreement with the Origin check.
import { afterEach, describe, expect, it } from "vitest";
import {
  createStreamableHttpServer,
  type StreamableHttpServerOptions,
} from "../../runtime/transports/http/server/server.js";
import { ACCEPT_BOTH, initializeMessage, makeResponder, startServer } from "./helpers.js";

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

/** One way in: a request with the given method and headers, answered in full (an SSE body is cancelled after its headers). */
interface EntryPoint {
  send(method: string, headers: Record<string, string>, body?: string): Promise<Answer>;
  stop(): Promise<void>;
}

async function answer(res: Response): Promise<Answer> {
  const sse = res.headers.get("content-type") === "text/event-stream";
  const body = sse ? "" : await res.text();
  if (sse) await res.body?.cancel();
  return { status: res.status, headers: res.headers, body };
}

const ENTRIES: Record<string, (options: Partial<StreamableHttpServerOptions>) => Promise<EntryPoint>> = {
  "Node listener": async (options) => {
    const server = await startServer(options);
    return {
      send: async (method, headers, body) => answer(await fetch(server.url, { method, headers, body })),
      stop: () => server.stop(),
    };
  },
  "fetch handler": async (options) => {
    const responder = makeResponder();
    const mcp = createStreamableHttpServer({ onSession: responder.attach, ...options });
    return {
      send: async (method, headers, body) => {
        const request = new Request("http://127.0.0.1:3000/mcp", {
          method,
          headers: { host: "127.0.0.1:3000", ...headers },
          body,
        });
        return answer(await mcp.fetch(request, { localAddress: "127.0.0.1" }));
      },
      stop: () => mcp.close(),
    };
  },
};

const APP = "http://localhost:5173";
const OTHER = "http://localhost:8080";
const MCP_HEADERS = [
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
  "mcp-method",
  "mcp-name",
  "content-type",
  "authorization",
  "accept",
];

function preflight(origin: string, method = "POST", extra: Record<string, string> = {}): Record<string, string> {
  return {
    origin,
    "access-control-request-method": method,
    "access-control-request-headers": "content-type, mcp-session-id",
    ...extra,
  };
}

function initializeFrom(origin: string | undefined): [string, Record<string, string>, string] {
  const headers: Record<string, string> = { accept: ACCEPT_BOTH, "content-type": "application/json" };
  if (origin !== undefined) headers.origin = origin;
  return ["POST", headers, JSON.stringify(initializeMessage())];
}

function corsHeaders(a: Answer): Record<string, string> {
  const out: Record<string, string> = {};
  a.headers.forEach((value, name) => {
    if (name.startsWith("access-control-")) out[name] = value;
  });
  return out;
}

let entry: EntryPoint | undefined;
afterEach(async () => {
  await entry?.stop();
  entry = undefined;
});

describe.each(Object.keys(ENTRIES))("CORS through the %s", (name) => {
  const start = async (options: Partial<StreamableHttpServerOptions>) => (entry = await ENTRIES[name]!(options));

  it("answers a listed origin's preflight 204 with the methods and every header the client sends", async () => {
    const server = await start({ cors: { allowedOrigins: [APP] } });
    const a = await server.send("OPTIONS", preflight(APP));
    expect(a.status).toBe(204);
    expect(a.body).toBe("");
    const h = corsHeaders(a);
    expect(h["access-control-allow-origin"]).toBe(APP);
    expect(h["access-control-allow-methods"]).toBe("GET, POST, DELETE");
    expect(h["access-control-allow-headers"]!.split(", ").sort()).toEqual([...MCP_HEADERS].sort());
    expect(h["access-control-max-age"]).toBe("600");
    expect(a.headers.get("vary")).toContain("origin");
  });

  it("refuses a preflight from an origin not listed with 403 and no CORS headers, even one the Origin check accepts", async () => {
    const server = await start({ cors: { allowedOrigins: [APP] } });
    const a = await server.send("OPTIONS", preflight(OTHER));
    expect(a.status).toBe(403);
    expect(corsHeaders(a)).toEqual({});
    // The same origin's plain POST passes the DNS-rebinding defaults (a loopback name), but without CORS headers a page cannot read it.
    const post = await server.send(...initializeFrom(OTHER));
    expect(post.status).toBe(200);
    expect(corsHeaders(post)).toEqual({});
  });

  it("puts the CORS headers on every answer to a listed origin: an SSE reply, and errors the page must read", async () => {
    const server = await start({ cors: { allowedOrigins: [APP] } });
    const init = await server.send(...initializeFrom(APP));
    expect(init.status).toBe(200);
    expect(init.headers.get("content-type")).toBe("text/event-stream");
    expect(corsHeaders(init)).toEqual({
      "access-control-allow-origin": APP,
      "access-control-expose-headers": "mcp-session-id, www-authenticate",
    });
    expect(init.headers.get("mcp-session-id")).toBeTruthy();
    const gone = await server.send(
      "POST",
      { ...initializeFrom(APP)[1], "mcp-session-id": "no-such-session" },
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    );
    expect(gone.status).toBe(404);
    expect(corsHeaders(gone)["access-control-allow-origin"]).toBe(APP);
  });

  it("is off by default: a preflight gets 405 as any other unsupported method, and no answer carries CORS headers", async () => {
    const server = await start({});
    const a = await server.send("OPTIONS", preflight(APP));
    expect(a.status).toBe(405);
    expect(corsHeaders(a)).toEqual({});
    expect(corsHeaders(await server.send(...initializeFrom(APP)))).toEqual({});
  });

  it("accepts a listed origin the Origin allow-list does not name: one list to keep, not two", async () => {
    const cross = "https://app.example";
    const server = await start({ allowedOrigins: [APP], cors: { allowedOrigins: [cross] } });
    const a = await server.send(...initializeFrom(cross));
    expect(a.status).toBe(200);
    expect(corsHeaders(a)["access-control-allow-origin"]).toBe(cross);
    expect((await server.send("OPTIONS", preflight(cross))).status).toBe(204);
    // An origin on neither list is still refused by the Origin check.
    const refused = await server.send(...initializeFrom("https://evil.example"));
    expect(refused.status).toBe(403);
    expect(refused.body).toContain("Origin not allowed");
  });

  it("answers a preflight without authentication, and a listed origin can read the 401 of its request", async () => {
    const server = await start({ cors: { allowedOrigins: [APP] }, authenticate: () => null });
    expect(
      (
        await server.send(
          "OPTIONS",
          preflight(APP, "POST", { "access-control-request-headers": "authorization, content-type" }),
        )
      ).status,
    ).toBe(204);
    const denied = await server.send(...initializeFrom(APP));
    expect(denied.status).toBe(401);
    expect(corsHeaders(denied)["access-control-allow-origin"]).toBe(APP);
  });

  it("offers POST only when stateless, and takes maxAgeSeconds, extra headers and a private-network preflight", async () => {
    const server = await start({
      stateless: true,
      cors: { allowedOrigins: ["localhost"], maxAgeSeconds: 60, allowedHeaders: ["X-Api-Key"] },
    });
    const a = await server.send(
      "OPTIONS",
      preflight(APP, "POST", { "access-control-request-private-network": "true" }),
    );
    expect(a.status).toBe(204);
    const h = corsHeaders(a);
    expect(h["access-control-allow-methods"]).toBe("POST");
    expect(h["access-control-max-age"]).toBe("60");
    expect(h["access-control-allow-headers"]!.split(", ")).toContain("x-api-key");
    expect(h["access-control-allow-private-network"]).toBe("true");
    // A bare hostname in the list accepts any port and scheme.
    expect(
      corsHeaders(await server.send("OPTIONS", preflight("https://localhost:9443")))["access-control-allow-origin"],
    ).toBe("https://localhost:9443");
  });
});

describe("CORS and the Host check", () => {
  it("a listed origin does not excuse a Host outside the allow-list", async () => {
    const mcp = createStreamableHttpServer({ onSession: makeResponder().attach, cors: { allowedOrigins: [APP] } });
    const [method, headers, body] = initializeFrom(APP);
    const request = new Request("http://rebound.example:3000/mcp", {
      method,
      headers: { ...headers, host: "rebound.example:3000" },
      body,
    });
    const res = await mcp.fetch(request, { localAddress: "127.0.0.1" });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("Host not allowed");
    await mcp.close();
  });
});

describe("CORS options", () => {
  const onSession = () => undefined;
  it.each([
    ["a wildcard", { allowedOrigins: ["*"] }, /no wildcards/],
    ["an empty entry", { allowedOrigins: [""] }, /no wildcards/],
    ["a negative max age", { allowedOrigins: [APP], maxAgeSeconds: -1 }, /maxAgeSeconds/],
    ["a fractional max age", { allowedOrigins: [APP], maxAgeSeconds: 1.5 }, /maxAgeSeconds/],
    ["a header name with a space", { allowedOrigins: [APP], allowedHeaders: ["x key"] }, /allowedHeaders/],
  ])("refuses %s when the server is created", (_, cors, message) => {
    expect(() => createStreamableHttpServer({ onSession, cors })).toThrow(message);
  });
});
