// The HTTP server's rejection paths (406, 415, 400, 413, 405, 404, 400 version), each followed by a working request.
import { request as httpRequest } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ACCEPT_BOTH,
  initialize,
  readBody,
  post,
  readSse,
  sessionHeaders,
  startServer,
  type RunningServer,
} from "./helpers.js";

let server: RunningServer;
let sessionId: string;

beforeEach(async () => {
  server = await startServer({ maxBodyBytes: 64 * 1024 });
  sessionId = await initialize(server.url);
});
afterEach(async () => {
  await server.stop();
});

/** The server still answers a normal request on the same session. */
async function stillServes(): Promise<void> {
  const res = await post(
    server.url,
    { jsonrpc: "2.0", id: 99, method: "echo", params: { ok: true } },
    sessionHeaders(sessionId),
  );
  expect(res.status).toBe(200);
  const read = await readSse(res);
  expect(read.messages.at(-1)).toMatchObject({ id: 99, result: { echo: { ok: true } } });
}

async function errorOf(res: Response): Promise<{ code: number; message: string }> {
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = (await res.json()) as { jsonrpc: string; id?: unknown; error: { code: number; message: string } };
  expect(body.jsonrpc).toBe("2.0");
  expect(body).not.toHaveProperty("id");
  return body.error;
}

describe("POST rejections", () => {
  it("406 when Accept lacks text/event-stream", async () => {
    const res = await post(
      server.url,
      { jsonrpc: "2.0", id: 1, method: "echo" },
      { ...sessionHeaders(sessionId), accept: "application/json" },
    );
    expect(res.status).toBe(406);
    expect((await errorOf(res)).code).toBe(-32600);
    await stillServes();
  });

  it("406 when Accept lacks application/json", async () => {
    const res = await post(
      server.url,
      { jsonrpc: "2.0", id: 1, method: "echo" },
      { ...sessionHeaders(sessionId), accept: "text/event-stream" },
    );
    expect(res.status).toBe(406);
    await stillServes();
  });

  it("415 on a non-JSON Content-Type", async () => {
    const res = await post(
      server.url,
      { jsonrpc: "2.0", id: 1, method: "echo" },
      { ...sessionHeaders(sessionId), "content-type": "text/plain" },
    );
    expect(res.status).toBe(415);
    expect((await errorOf(res)).code).toBe(-32600);
    await stillServes();
  });

  it("400 with -32700 on invalid JSON", async () => {
    const res = await post(server.url, '{"jsonrpc":"2.0", "id": 1, "method": ', sessionHeaders(sessionId));
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe(-32700);
    await stillServes();
  });

  it("400 with -32700 on invalid UTF-8", async () => {
    const res = await fetch(server.url, {
      method: "POST",
      headers: { accept: ACCEPT_BOTH, "content-type": "application/json", ...sessionHeaders(sessionId) },
      body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe(-32700);
    await stillServes();
  });

  it.each([
    ["a batch array", [{ jsonrpc: "2.0", id: 1, method: "echo" }]],
    ["a wrong jsonrpc version", { jsonrpc: "1.0", id: 1, method: "echo" }],
    ["a bare number", 42],
    ["a response with both result and error", { jsonrpc: "2.0", id: 1, result: {}, error: { code: 1, message: "x" } }],
    ["non-object params", { jsonrpc: "2.0", id: 1, method: "echo", params: [1, 2] }],
  ])("400 with -32600 on %s", async (_name, body) => {
    const res = await post(server.url, body, sessionHeaders(sessionId));
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe(-32600);
    await stillServes();
  });

  it("413 with a JSON-RPC error body when the body exceeds the limit", async () => {
    const big = { jsonrpc: "2.0", id: 1, method: "echo", params: { pad: "x".repeat(100 * 1024) } };
    const res = await post(server.url, big, sessionHeaders(sessionId));
    expect(res.status).toBe(413);
    expect((await errorOf(res)).message).toMatch(/too large/i);
    await stillServes();
  });

  it("413 also for a chunked body without Content-Length that grows past the limit", async () => {
    const url = new URL(server.url);
    const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "POST",
          headers: {
            accept: ACCEPT_BOTH,
            "content-type": "application/json",
            "transfer-encoding": "chunked",
            ...sessionHeaders(sessionId),
          },
        },
        (res) => void readBody(res).then(resolve, reject),
      );
      req.on("error", reject);
      req.write('{"jsonrpc":"2.0","id":1,"method":"echo","params":{"pad":"');
      for (let i = 0; i < 10; i++) req.write("x".repeat(16 * 1024));
      req.end('"}}');
    });
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body)).toMatchObject({ jsonrpc: "2.0", error: { code: -32600 } });
    await stillServes();
  });

  it("a body just under the limit is accepted", async () => {
    const res = await post(
      server.url,
      { jsonrpc: "2.0", id: 5, method: "echo", params: { pad: "y".repeat(60 * 1024) } },
      sessionHeaders(sessionId),
    );
    expect(res.status).toBe(200);
    const read = await readSse(res);
    expect(read.messages.at(-1)).toMatchObject({ id: 5 });
  });
});

describe("other methods and headers", () => {
  it("405 for PUT with an Allow header", async () => {
    const res = await fetch(server.url, { method: "PUT", headers: sessionHeaders(sessionId), body: "{}" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, POST, DELETE");
    await stillServes();
  });

  it("406 for GET without text/event-stream in Accept", async () => {
    const res = await fetch(server.url, { headers: { ...sessionHeaders(sessionId), accept: "application/json" } });
    expect(res.status).toBe(406);
    await stillServes();
  });

  it("400 on an unsupported MCP-Protocol-Version, and a missing one is taken as 2025-03-26 (accepted)", async () => {
    const bad = await post(
      server.url,
      { jsonrpc: "2.0", id: 1, method: "echo" },
      { "mcp-session-id": sessionId, "mcp-protocol-version": "1999-01-01" },
    );
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).message).toContain("MCP-Protocol-Version");
    const absent = await post(server.url, { jsonrpc: "2.0", id: 2, method: "echo" }, { "mcp-session-id": sessionId });
    expect(absent.status).toBe(200);
    await readSse(absent);
    await stillServes();
  });

  it("400 on an unsupported MCP-Protocol-Version when 2025-03-26 is not supported and the header is absent", async () => {
    await server.stop();
    server = await startServer({ supportedProtocolVersions: ["2025-11-25"] });
    sessionId = await initialize(server.url);
    const absent = await post(server.url, { jsonrpc: "2.0", id: 2, method: "echo" }, { "mcp-session-id": sessionId });
    expect(absent.status).toBe(400);
    await stillServes();
  });

  it("404 for other paths when a path is configured", async () => {
    await server.stop();
    server = await startServer({ path: "/mcp" });
    const res = await post(server.url.replace("/mcp", "/other"), {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {},
    });
    expect(res.status).toBe(404);
    sessionId = await initialize(server.url);
    await stillServes();
  });
});
