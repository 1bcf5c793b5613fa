// Session lifecycle, stateless mode and reply modes (JSON vs SSE, 202) of the HTTP server, driven by raw fetch.
import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { createStreamableHttpServer } from "../../runtime/transports/http/server/server.js";
import {
  initialize,
  initializeMessage,
  makeResponder,
  post,
  readSse,
  sessionHeaders,
  serverPerTest,
} from "./helpers.js";
import { listen } from "../kit/net.js";
import { sleep, until } from "../kit/timing.js";

const start = serverPerTest();

describe("stateful sessions", () => {
  it("issues a visible-ASCII session id at initialize and delivers the request with it", async () => {
    const server = await start();
    const res = await post(server.url, initializeMessage(7));
    expect(res.status).toBe(200);
    const id = res.headers.get("mcp-session-id");
    expect(id).toMatch(/^[\x21-\x7e]{22,}$/);
    const read = await readSse(res);
    expect(read.messages).toEqual([
      { jsonrpc: "2.0", id: 7, result: expect.objectContaining({ protocolVersion: "2025-11-25" }) },
    ]);
    expect(server.responder.received[0].info?.sessionId).toBe(id);
    expect(server.mcp.sessions.has(id!)).toBe(true);
  });

  it("gives each initialize its own session and transport", async () => {
    const server = await start();
    const a = await initialize(server.url);
    const b = await initialize(server.url);
    expect(a).not.toBe(b);
    expect(server.responder.transports.map((t) => t.sessionId)).toEqual([a, b]);
  });

  it("requires the session id after initialize (400), rejects unknown ids (404)", async () => {
    const server = await start();
    await initialize(server.url);
    const missing = await post(
      server.url,
      { jsonrpc: "2.0", id: 1, method: "echo" },
      { "mcp-protocol-version": "2025-11-25" },
    );
    expect(missing.status).toBe(400);
    const unknown = await post(
      server.url,
      { jsonrpc: "2.0", id: 1, method: "echo" },
      sessionHeaders("no-such-session"),
    );
    expect(unknown.status).toBe(404);
    const getUnknown = await fetch(server.url, { headers: { accept: "text/event-stream", ...sessionHeaders("nope") } });
    expect(getUnknown.status).toBe(404);
  });

  it("DELETE ends the session: onclose fires, later requests get 404", async () => {
    const server = await start();
    const id = await initialize(server.url);
    const del = await fetch(server.url, { method: "DELETE", headers: sessionHeaders(id) });
    expect(del.status).toBe(200);
    expect(server.responder.closed.map((t) => t.sessionId)).toEqual([id]);
    expect(server.mcp.sessions.has(id)).toBe(false);
    const after = await post(server.url, { jsonrpc: "2.0", id: 1, method: "echo" }, sessionHeaders(id));
    expect(after.status).toBe(404);
    const again = await fetch(server.url, { method: "DELETE", headers: sessionHeaders(id) });
    expect(again.status).toBe(404);
  });

  it("transport.close() from the app terminates the session and ends its open GET stream", async () => {
    const server = await start();
    const id = await initialize(server.url);
    const get = await fetch(server.url, { headers: { accept: "text/event-stream", ...sessionHeaders(id) } });
    expect(get.status).toBe(200);
    const reading = readSse(get);
    await server.responder.transports[0].close();
    const read = await reading;
    expect(read.ended).toBe(true);
    const after = await post(server.url, { jsonrpc: "2.0", id: 1, method: "echo" }, sessionHeaders(id));
    expect(after.status).toBe(404);
  });

  it("initialize carrying a session id is refused", async () => {
    const server = await start();
    const id = await initialize(server.url);
    const res = await post(server.url, initializeMessage(3), sessionHeaders(id));
    expect(res.status).toBe(400);
  });

  it("sessionIdleTimeoutMs closes idle sessions, but not one with a connected stream", async () => {
    const server = await start({ sessionIdleTimeoutMs: 60 });
    const idle = await initialize(server.url);
    const busy = await initialize(server.url);
    const get = await fetch(server.url, { headers: { accept: "text/event-stream", ...sessionHeaders(busy) } });
    expect(get.status).toBe(200);
    await until(() => server!.responder.closed.length === 1);
    expect(server.responder.closed[0].sessionId).toBe(idle);
    expect((await post(server.url, { jsonrpc: "2.0", id: 1, method: "echo" }, sessionHeaders(idle))).status).toBe(404);
    await sleep(150);
    expect(server.mcp.sessions.has(busy)).toBe(true);
    await get.body?.cancel();
  });

  it("a custom session id generator is used", async () => {
    let n = 0;
    const server = await start({ sessionIdGenerator: () => `custom-${++n}` });
    expect(await initialize(server.url)).toBe("custom-1");
  });
});

describe("mounting", () => {
  it("works behind middleware that already parsed the JSON body", async () => {
    const responder = makeResponder();
    const mcp = createStreamableHttpServer({ onSession: responder.attach });
    const http = createServer((req, res) => {
      // A stand-in for express.json(): drain the stream, hang the parsed value on req.body.
      let text = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => (text += c));
      req.on("end", () => {
        (req as { body?: unknown }).body = text ? JSON.parse(text) : undefined;
        mcp.nodeListener(req, res);
      });
    });
    const listening = await listen(http);
    try {
      const url = `${listening.origin}/mcp`;
      const sid = await initialize(url);
      const read = await readSse(
        await post(url, { jsonrpc: "2.0", id: 3, method: "echo", params: { m: 1 } }, sessionHeaders(sid)),
      );
      expect(read.messages.at(-1)).toMatchObject({ id: 3, result: { echo: { m: 1 } } });
    } finally {
      await mcp.close();
      await listening.close();
    }
  });
});

describe("a body read before the endpoint", () => {
  // A stand-in for a framework whose body parser drains the stream and keeps the value to itself (Fastify's default).
  it.each([
    ["nodeListener", "node"],
    ["fetch", "fetch"],
  ] as const)(
    "%s answers 500 with a JSON-RPC error that says to mount the endpoint before body parsers",
    async (_, kind) => {
      const mcp = createStreamableHttpServer({ onSession: makeResponder().attach });
      const http = createServer((req, res) => {
        req.resume();
        req.on("end", () => {
          if (kind === "node") return mcp.nodeListener(req, res);
          const request = new Request(`http://${req.headers.host}${req.url}`, {
            method: req.method,
            headers: req.headers as Record<string, string>,
            body: "{}",
          });
          void request.text().then(async () => {
            const response = await mcp.fetch(request, { localAddress: "127.0.0.1" });
            res.writeHead(response.status, Object.fromEntries(response.headers));
            res.end(await response.text());
          });
        });
      });
      const listening = await listen(http);
      try {
        const url = `${listening.origin}/mcp`;
        const response = await post(url, initializeMessage(1));
        expect(response.status).toBe(500);
        const body = (await response.json()) as { error: { code: number; message: string } };
        expect(body.error.code).toBe(-32603);
        expect(body.error.message).toMatch(/body parser ran first/);
        // The endpoint goes on: a request whose body it reads itself is served.
        const direct = createServer((req, res) => mcp.nodeListener(req, res));
        const other = await listen(direct);
        try {
          expect((await post(`${other.origin}/mcp`, initializeMessage(2))).status).toBe(200);
        } finally {
          await other.close();
        }
      } finally {
        await mcp.close();
        await listening.close();
      }
    },
  );
});

describe("stateless mode", () => {
  it("gives every POST a fresh transport, no session id, and closes it after the reply", async () => {
    const server = await start({ stateless: true });
    const first = await post(server.url, initializeMessage(1));
    expect(first.status).toBe(200);
    expect(first.headers.get("mcp-session-id")).toBeNull();
    const read1 = await readSse(first);
    expect(read1.messages.at(-1)).toMatchObject({ id: 1 });
    // No ids without sessions: there is no GET to resume with.
    expect(read1.events.every((e) => e.id === "")).toBe(true);
    const second = await post(
      server.url,
      { jsonrpc: "2.0", id: 2, method: "progress", params: { count: 2 } },
      { "mcp-protocol-version": "2025-11-25" },
    );
    const read2 = await readSse(second);
    expect(read2.messages.map((m) => m.method ?? "response")).toEqual([
      "notifications/progress",
      "notifications/progress",
      "response",
    ]);
    expect(server.responder.transports).toHaveLength(2);
    expect(server.responder.transports.every((t) => t.sessionId === undefined)).toBe(true);
    await until(() => server!.responder.closed.length === 2);
  });

  it("answers GET and DELETE with 405", async () => {
    const server = await start({ stateless: true });
    const get = await fetch(server.url, { headers: { accept: "text/event-stream" } });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    const del = await fetch(server.url, { method: "DELETE" });
    expect(del.status).toBe(405);
  });

  it("accepts notifications with 202", async () => {
    const server = await start({ stateless: true });
    const res = await post(server.url, { jsonrpc: "2.0", method: "notifications/initialized" });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe("");
  });
});

describe("reply modes", () => {
  it("202 with no body for notifications and responses, delivered to the session", async () => {
    const server = await start();
    const id = await initialize(server.url);
    const note = await post(server.url, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionHeaders(id));
    expect(note.status).toBe(202);
    expect(await note.text()).toBe("");
    const resp = await post(server.url, { jsonrpc: "2.0", id: "s1", result: {} }, sessionHeaders(id));
    expect(resp.status).toBe(202);
    const methods = server.responder.received.map((r) => r.message);
    expect(methods).toContainEqual({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect(methods).toContainEqual({ jsonrpc: "2.0", id: "s1", result: {} });
  });

  it("SSE (default): a priming event (id, empty data) comes first, then messages with ids, then the stream ends", async () => {
    const server = await start();
    const id = await initialize(server.url);
    const res = await post(
      server.url,
      { jsonrpc: "2.0", id: 4, method: "progress", params: { count: 2 } },
      sessionHeaders(id),
    );
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    expect(res.headers.get("mcp-session-id")).toBe(id);
    const read = await readSse(res);
    expect(read.ended).toBe(true);
    expect(read.events[0].data).toBe("");
    expect(read.events[0].id).not.toBe("");
    expect(read.messages).toHaveLength(3);
    expect(read.messages[2]).toEqual({ jsonrpc: "2.0", id: 4, result: { done: 2 } });
    const ids = read.events.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    const streamOf = (eid: string) => eid.slice(0, eid.lastIndexOf(":"));
    expect(new Set(ids.map(streamOf)).size).toBe(1);
  });

  it("event ids are unique across streams of one session and name their stream", async () => {
    const server = await start();
    const id = await initialize(server.url);
    const a = await readSse(
      await post(server.url, { jsonrpc: "2.0", id: 1, method: "progress", params: { count: 1 } }, sessionHeaders(id)),
    );
    const b = await readSse(
      await post(server.url, { jsonrpc: "2.0", id: 2, method: "progress", params: { count: 1 } }, sessionHeaders(id)),
    );
    const all = [...a.events, ...b.events].map((e) => e.id);
    expect(new Set(all).size).toBe(all.length);
    expect(a.events[0].id.split(":")[0]).not.toBe(b.events[0].id.split(":")[0]);
  });

  it("JSON mode answers with one application/json body", async () => {
    const server = await start({ responseMode: "json" });
    const init = await post(server.url, initializeMessage(1));
    expect(init.headers.get("content-type")).toBe("application/json");
    const sid = init.headers.get("mcp-session-id")!;
    expect(sid).toBeTruthy();
    expect(await init.json()).toMatchObject({ id: 1, result: { protocolVersion: "2025-11-25" } });
    const echo = await post(
      server.url,
      { jsonrpc: "2.0", id: 2, method: "echo", params: { a: 1 } },
      sessionHeaders(sid),
    );
    expect(echo.headers.get("content-type")).toBe("application/json");
    expect(await echo.json()).toMatchObject({ id: 2, result: { echo: { a: 1 } } });
  });

  it("JSON mode switches to SSE when the handler sends progress before its response", async () => {
    const server = await start({ responseMode: "json" });
    const sid = (await post(server.url, initializeMessage(1))).headers.get("mcp-session-id")!;
    const res = await post(
      server.url,
      { jsonrpc: "2.0", id: 2, method: "progress", params: { count: 2 } },
      sessionHeaders(sid),
    );
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const read = await readSse(res);
    expect(read.events[0].data).toBe("");
    expect(read.messages.map((m) => m.method ?? m.id)).toEqual(["notifications/progress", "notifications/progress", 2]);
  });

  it("responseMode can be chosen per method", async () => {
    const server = await start({ responseMode: (method) => (method === "echo" ? "json" : "sse") });
    const init = await post(server.url, initializeMessage(1));
    expect(init.headers.get("content-type")).toBe("text/event-stream");
    await readSse(init);
    const sid = init.headers.get("mcp-session-id")!;
    const echo = await post(server.url, { jsonrpc: "2.0", id: 2, method: "echo" }, sessionHeaders(sid));
    expect(echo.headers.get("content-type")).toBe("application/json");
    await echo.json();
  });

  it("a request id already in flight on the session is refused", async () => {
    const server = await start();
    const sid = await initialize(server.url);
    const first = await post(
      server.url,
      { jsonrpc: "2.0", id: 9, method: "wait", params: { gate: "g", before: 0, after: 0 } },
      sessionHeaders(sid),
    );
    const dup = await post(server.url, { jsonrpc: "2.0", id: 9, method: "echo" }, sessionHeaders(sid));
    expect(dup.status).toBe(400);
    server.responder.open("g");
    expect((await readSse(first)).messages.at(-1)).toMatchObject({ id: 9, result: { done: 0 } });
  });

  // The transport knows no method by name: which requests may carry a live id is the layer above's to say.
  it.each([
    { name: "not listed (default)", reusableIdMethods: undefined, status: 400 },
    { name: "listed in reusableIdMethods", reusableIdMethods: ["echo"], status: 200 },
  ])(
    "a request reusing an id in flight, its method $name, is answered $status",
    async ({ reusableIdMethods, status }) => {
      const server = await start(reusableIdMethods === undefined ? {} : { reusableIdMethods });
      const sid = await initialize(server.url);
      const first = await post(
        server.url,
        { jsonrpc: "2.0", id: 9, method: "wait", params: { gate: "g", before: 0, after: 0 } },
        sessionHeaders(sid),
      );
      const again = await post(server.url, { jsonrpc: "2.0", id: 9, method: "echo" }, sessionHeaders(sid));
      expect(again.status).toBe(status);
      // Accepted, it answers on a stream of its own (the layer above decides where its messages go).
      if (status === 200) expect(again.headers.get("content-type")).toBe("text/event-stream");
      await again.body?.cancel();
      server.responder.open("g");
      // The first request keeps its stream either way (until a layer above takes the id over, nothing moves).
      expect((await readSse(first)).messages).toContainEqual(expect.objectContaining({ id: 9 }));
    },
  );
});
