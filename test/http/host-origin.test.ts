// DNS-rebinding defaults: one table of Host/Origin cases, the same verdicts from the Node listener and the fetch handler.
import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { checkHostAndOrigin } from "../../runtime/transports/http/server/security.js";
import {
  createStreamableHttpServer,
  type FetchRequestInfo,
  type StreamableHttpServer,
  type StreamableHttpServerOptions,
} from "../../runtime/transports/http/server/server.js";
import { ACCEPT_BOTH, initializeMessage, makeResponder, readBody, startServer, type RunningServer } from "./helpers.js";

interface Outcome {
  status: number;
  body: string;
}

/** One way in: sends an initialize with the given Host (undefined: none at all) and Origin. */
interface EntryPoint {
  readonly port: number;
  send(host: string | undefined, origin: string | undefined): Promise<Outcome>;
  /** Sessions the server opened so far. */
  sessionCount(): number;
  stop(): Promise<void>;
}

/** A real socket on 127.0.0.1; node:http's client so Host can be forged or left out (setHost: false). */
async function nodeListener(options: Partial<StreamableHttpServerOptions>): Promise<EntryPoint> {
  const server: RunningServer = await startServer(options);
  return {
    port: server.port,
    send: (host, origin) =>
      new Promise((resolve, reject) => {
        const data = JSON.stringify(initializeMessage());
        const headers: Record<string, string | number> = {
          accept: ACCEPT_BOTH,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(data),
        };
        if (host !== undefined) headers.host = host;
        if (origin !== undefined) headers.origin = origin;
        const req = httpRequest(
          { host: "127.0.0.1", port: server.port, path: "/mcp", method: "POST", setHost: false, headers },
          (res) => void readBody(res).then(resolve, reject),
        );
        req.on("error", reject);
        req.end(data);
      }),
    sessionCount: () => server.responder.transports.length,
    stop: () => server.stop(),
  };
}

/** The fetch handler fed what an adapter makes of the same request: a URL built from Host, the headers as sent. */
function fetchHandler(options: Partial<StreamableHttpServerOptions>, info: FetchRequestInfo | undefined): EntryPoint {
  const responder = makeResponder();
  const mcp: StreamableHttpServer = createStreamableHttpServer({ onSession: responder.attach, ...options });
  const port = 3000;
  return {
    port,
    async send(host, origin) {
      const headers: Record<string, string> = { accept: ACCEPT_BOTH, "content-type": "application/json" };
      if (host !== undefined) headers.host = host;
      if (origin !== undefined) headers.origin = origin;
      const request = new Request(`http://${host ?? `127.0.0.1:${port}`}/mcp`, {
        method: "POST",
        headers,
        body: JSON.stringify(initializeMessage()),
      });
      const res = await mcp.fetch(request, info);
      return { status: res.status, body: await res.text() };
    },
    sessionCount: () => responder.transports.length,
    stop: () => mcp.close(),
  };
}

const ENTRY_POINTS: { name: string; open: (options: Partial<StreamableHttpServerOptions>) => Promise<EntryPoint> }[] = [
  { name: "Node listener on 127.0.0.1", open: nodeListener },
  { name: "fetch handler, adapter reports no address", open: async (o) => fetchHandler(o, undefined) },
  {
    name: "fetch handler, adapter reports 127.0.0.1",
    open: async (o) => fetchHandler(o, { localAddress: "127.0.0.1" }),
  },
];

interface Case {
  name: string;
  host: (port: number) => string | undefined;
  origin?: (port: number) => string;
  allowed: boolean;
}

const CASES: Case[] = [
  { name: "Host 127.0.0.1:port", host: (p) => `127.0.0.1:${p}`, allowed: true },
  { name: "Host localhost:port", host: (p) => `localhost:${p}`, allowed: true },
  { name: "Host [::1]:port", host: (p) => `[::1]:${p}`, allowed: true },
  { name: "Host LOCALHOST (case does not matter)", host: () => "LOCALHOST", allowed: true },
  {
    name: "Origin of a loopback page on the same port",
    host: (p) => `localhost:${p}`,
    origin: (p) => `http://localhost:${p}`,
    allowed: true,
  },
  {
    name: "Origin of a loopback page on another port",
    host: (p) => `127.0.0.1:${p}`,
    origin: () => "http://127.0.0.1:5173",
    allowed: true,
  },
  { name: "Host evil.example", host: () => "evil.example", allowed: false },
  { name: "Host evil.example:port", host: (p) => `evil.example:${p}`, allowed: false },
  { name: "Host localhost. (trailing dot)", host: (p) => `localhost.:${p}`, allowed: false },
  {
    name: "Host 127.0.0.1.nip.io (a public name for a loopback address)",
    host: (p) => `127.0.0.1.nip.io:${p}`,
    allowed: false,
  },
  { name: "Host localhost.evil.example", host: (p) => `localhost.evil.example:${p}`, allowed: false },
  { name: "no Host header", host: () => undefined, allowed: false },
  { name: "Origin evil.example", host: (p) => `127.0.0.1:${p}`, origin: () => "http://evil.example", allowed: false },
  {
    name: "Origin localhost. (trailing dot)",
    host: (p) => `localhost:${p}`,
    origin: (p) => `http://localhost.:${p}`,
    allowed: false,
  },
  {
    name: "Origin 127.0.0.1.nip.io",
    host: (p) => `127.0.0.1:${p}`,
    origin: (p) => `http://127.0.0.1.nip.io:${p}`,
    allowed: false,
  },
  { name: "Origin null", host: (p) => `127.0.0.1:${p}`, origin: () => "null", allowed: false },
];

let entry: EntryPoint | undefined;
afterEach(async () => {
  await entry?.stop();
  entry = undefined;
});

describe.each(ENTRY_POINTS)("DNS-rebinding defaults: $name", ({ name, open }) => {
  it.each(CASES)("$name", async ({ host, origin, allowed }) => {
    entry = await open({});
    const sent = await entry.send(host(entry.port), origin?.(entry.port));
    if (allowed) {
      expect(sent.status).toBe(200);
      expect(entry.sessionCount()).toBe(1);
      return;
    }
    // Node's own HTTP/1.1 parser answers a request without Host with 400 before any listener runs.
    const expected = host(entry.port) === undefined && name.startsWith("Node") ? 400 : 403;
    expect(sent.status).toBe(expected);
    if (expected === 403)
      expect(JSON.parse(sent.body)).toMatchObject({
        jsonrpc: "2.0",
        error: { code: -32600, message: expect.stringMatching(/^(Host|Origin) not allowed/) },
      });
    expect(entry.sessionCount()).toBe(0);
  });
});

describe("DNS-rebinding protection of the fetch handler", () => {
  it("is off only when the app turns it off, or when the adapter reports a non-loopback address in auto mode", async () => {
    const evil = (e: EntryPoint) => e.send("evil.example", "http://evil.example");
    entry = fetchHandler({ dnsRebindingProtection: false }, undefined);
    expect((await evil(entry)).status).toBe(200);
    await entry.stop();
    // Reached on a LAN or public address: the Node listener on such an address does the same.
    entry = fetchHandler({}, { localAddress: "10.0.0.5" });
    expect((await evil(entry)).status).toBe(200);
    await entry.stop();
    for (const localAddress of ["::1", "::ffff:127.0.0.1", "127.0.0.2"]) {
      entry = fetchHandler({}, { localAddress });
      expect((await evil(entry)).status).toBe(403);
      await entry.stop();
    }
    entry = fetchHandler({ dnsRebindingProtection: true }, { localAddress: "10.0.0.5" });
    expect((await evil(entry)).status).toBe(403);
  });

  it("takes allowedHosts for a public deployment, whatever the adapter reports", async () => {
    entry = fetchHandler({ allowedHosts: ["mcp.example.com"] }, undefined);
    expect((await entry.send("mcp.example.com", undefined)).status).toBe(200);
    expect((await entry.send("evil.example", undefined)).status).toBe(403);
    expect((await entry.send("mcp.example.com", "https://evil.example")).status).toBe(403);
    expect((await entry.send("mcp.example.com", "https://mcp.example.com")).status).toBe(200);
  });
});

describe("pinned origins (allowedOrigins with full origins)", () => {
  const pinned = { allowedOrigins: ["http://localhost:5173"] };
  const ORIGINS: { origin: string; allowed: boolean }[] = [
    { origin: "http://localhost:5173", allowed: true },
    { origin: "http://localhost:8080", allowed: false },
    { origin: "https://localhost:5173", allowed: false },
    { origin: "http://127.0.0.1:5173", allowed: false },
    { origin: "http://localhost", allowed: false },
  ];

  describe.each(ENTRY_POINTS)("$name", ({ open }) => {
    it.each(ORIGINS)("Origin $origin -> allowed: $allowed", async ({ origin, allowed }) => {
      entry = await open(pinned);
      const sent = await entry.send(`localhost:${entry.port}`, origin);
      expect(sent.status).toBe(allowed ? 200 : 403);
      // No Origin (a non-browser client) is not affected by the origin list.
      expect((await entry.send(`localhost:${entry.port}`, undefined)).status).toBe(200);
    });
  });

  it("compares full origins the way browsers send them: default port dropped, trailing slash ignored", () => {
    const policy = { allowedOrigins: ["https://app.example:443/", "HTTP://Dev.Example:80"] };
    expect(
      checkHostAndOrigin({ host: "localhost", origin: "https://app.example" }, policy, "127.0.0.1"),
    ).toBeUndefined();
    expect(
      checkHostAndOrigin({ host: "localhost", origin: "http://dev.example" }, policy, "127.0.0.1"),
    ).toBeUndefined();
    expect(
      checkHostAndOrigin({ host: "localhost", origin: "https://app.example:8443" }, policy, "127.0.0.1")?.status,
    ).toBe(403);
    expect(checkHostAndOrigin({ host: "localhost", origin: "http://app.example" }, policy, "127.0.0.1")?.status).toBe(
      403,
    );
  });
});
