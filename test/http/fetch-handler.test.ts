// The web-standard handler (Request -> Response): a POST round trip, a GET SSE stream, and the client over it.
import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { createStreamableHttpServer, type StreamableHttpServer } from "../../runtime/transports/http/server/server.js";
import { ACCEPT_BOTH, initializeMessage, makeResponder, readSse, sessionHeaders } from "./helpers.js";
import { until } from "../kit/timing.js";

const URL_ = "http://127.0.0.1:3000/mcp";
// What an adapter passes on from the wire; a Request made in process has no Host until given one.
const HOST = { host: "127.0.0.1:3000" };
let mcp: StreamableHttpServer | undefined;
afterEach(async () => {
  await mcp?.close();
  mcp = undefined;
});

function postRequest(body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(URL_, {
    method: "POST",
    headers: { ...HOST, accept: ACCEPT_BOTH, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

describe("fetch-style handler", () => {
  it("answers a POST with a JSON body in json mode and with SSE by default", async () => {
    const responder = makeResponder();
    mcp = createStreamableHttpServer({
      onSession: responder.attach,
      responseMode: (m) => (m === "initialize" ? "json" : "sse"),
    });
    const init = await mcp.fetch(postRequest(initializeMessage(1)));
    expect(init.status).toBe(200);
    expect(init.headers.get("content-type")).toBe("application/json");
    const sid = init.headers.get("mcp-session-id")!;
    expect(await init.json()).toMatchObject({ id: 1, result: { protocolVersion: "2025-11-25" } });
    const echo = await mcp.fetch(
      postRequest({ jsonrpc: "2.0", id: 2, method: "progress", params: { count: 1 } }, sessionHeaders(sid)),
    );
    expect(echo.headers.get("content-type")).toBe("text/event-stream");
    const read = await readSse(echo);
    expect(read.events[0].data).toBe("");
    expect(read.messages.map((m) => m.method ?? m.id)).toEqual(["notifications/progress", 2]);
  });

  it("serves a GET SSE stream, rejects bad input the same way as the Node listener", async () => {
    const responder = makeResponder();
    mcp = createStreamableHttpServer({ onSession: responder.attach, maxBodyBytes: 1024 });
    const init = await mcp.fetch(postRequest(initializeMessage(1)));
    const sid = init.headers.get("mcp-session-id")!;
    await readSse(init);
    const get = await mcp.fetch(
      new Request(URL_, { headers: { ...HOST, accept: "text/event-stream", ...sessionHeaders(sid) } }),
    );
    expect(get.status).toBe(200);
    expect(get.headers.get("content-type")).toBe("text/event-stream");
    const reading = readSse(get, (r) => r.messages.length === 1);
    await until(() => responder.transports[0].standaloneConnected);
    await responder.transports[0].send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    const got = await reading;
    expect(got.events[0].data).toBe("");
    expect(got.messages).toEqual([{ jsonrpc: "2.0", method: "notifications/tools/list_changed" }]);

    const tooBig = await mcp.fetch(
      postRequest({ jsonrpc: "2.0", id: 3, method: "echo", params: { pad: "z".repeat(2000) } }, sessionHeaders(sid)),
    );
    expect(tooBig.status).toBe(413);
    const bad = await mcp.fetch(
      new Request(URL_, {
        method: "POST",
        headers: { ...HOST, accept: ACCEPT_BOTH, "content-type": "application/json", ...sessionHeaders(sid) },
        body: "{",
      }),
    );
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const evil = await mcp.fetch(postRequest(initializeMessage(1), { origin: "http://evil.example" }));
    expect(evil.status).toBe(403);
  });

  it("carries the client transport end to end, in process", async () => {
    const responder = makeResponder();
    const server = createStreamableHttpServer({ onSession: responder.attach });
    mcp = server;
    const inProcess = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const request = new Request(input, init);
      request.headers.set("host", new URL(request.url).host);
      return server.fetch(request);
    };
    const client = new StreamableHttpClientTransport({ url: URL_, fetch: inProcess });
    const messages: JsonObject[] = [];
    client.onmessage = (m) => messages.push(m as JsonObject);
    await client.send(initializeMessage(0));
    await until(() => messages.some((m) => m.id === 0));
    await client.send({ jsonrpc: "2.0", id: 1, method: "echo", params: { via: "fetch" } });
    await until(() => messages.some((m) => m.id === 1));
    expect(messages.find((m) => m.id === 1)).toMatchObject({ result: { echo: { via: "fetch" } } });
    await client.close();
    expect(responder.closed).toHaveLength(1);
  });
});
