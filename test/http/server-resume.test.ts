// SEP-1699 polling and resumption on the server: close with retry, GET + Last-Event-ID replay, standalone stream.
import { afterEach, describe, expect, it } from "vitest";
import { InMemoryEventStore } from "../../runtime/transports/http/server/event-store.js";
import { initialize, post, readSse, sessionHeaders, startServer, type RunningServer, type SseRead } from "./helpers.js";
import { until } from "../kit/timing.js";

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

function resumeGet(url: string, sid: string, lastEventId: string): Promise<Response> {
  return fetch(url, { headers: { accept: "text/event-stream", "last-event-id": lastEventId, ...sessionHeaders(sid) } });
}

function progressValues(messages: Record<string, unknown>[]): unknown[] {
  return messages.map((m) => (m.method ? (m.params as { progress: number }).progress : "response"));
}

describe("server-initiated close (SEP-1699)", () => {
  it("closes with retry mid-request; GET + Last-Event-ID replays the rest exactly once, in order, with the response", async () => {
    server = await startServer({ retryMs: 250 });
    const sid = await initialize(server.url);
    const res = await post(
      server.url,
      { jsonrpc: "2.0", id: 10, method: "wait", params: { gate: "g", before: 2, after: 2 } },
      sessionHeaders(sid),
    );
    const transport = server.responder.transports[0];
    const live: SseRead = { events: [], messages: [], ended: false };
    const reading = readSse(res, undefined, live);
    await until(() => live.messages.length === 2);
    await transport.closeSseStream(10);
    const first = await reading;
    expect(first.ended).toBe(true);
    expect(first.retry).toBe(250);
    expect(progressValues(first.messages)).toEqual([1, 2]);

    server.responder.open("g");
    // The request goes on without a connection; its messages wait in the store.
    await until(() => transport.pendingRequestCount === 0);
    const last = first.events.at(-1)!.id;
    const resumed = await resumeGet(server.url, sid, last);
    expect(resumed.status).toBe(200);
    const second = await readSse(resumed);
    expect(second.ended).toBe(true);
    expect(progressValues(second.messages)).toEqual([3, 4, "response"]);
    expect(second.messages.at(-1)).toEqual({ jsonrpc: "2.0", id: 10, result: { done: 4 } });
  });

  it("a resumed connection receives the pending request's later messages live", async () => {
    server = await startServer();
    const sid = await initialize(server.url);
    const res = await post(
      server.url,
      { jsonrpc: "2.0", id: 11, method: "wait", params: { gate: "h", before: 1, after: 2 } },
      sessionHeaders(sid),
    );
    const first = await readSse(res, (r) => r.messages.length === 1);
    await server.responder.transports[0].closeSseStream(11);
    const resumed = await resumeGet(server.url, sid, first.events.at(-1)!.id);
    expect(resumed.status).toBe(200);
    const reading = readSse(resumed);
    server.responder.open("h");
    const second = await reading;
    expect(second.events[0].data).toBe(""); // nothing to replay yet: a fresh priming event
    expect(progressValues(second.messages)).toEqual([2, 3, "response"]);
  });

  it("replays only the stream the Last-Event-ID belongs to", async () => {
    server = await startServer();
    const sid = await initialize(server.url);
    const a = await post(
      server.url,
      { jsonrpc: "2.0", id: "a", method: "wait", params: { gate: "a", before: 1, after: 2 } },
      sessionHeaders(sid),
    );
    const aRead = await readSse(a, (r) => r.messages.length === 1);
    const t = server.responder.transports[0];
    await t.closeSseStream("a");
    // Other traffic while A is disconnected: another request's stream and the standalone stream.
    const b = await post(
      server.url,
      { jsonrpc: "2.0", id: "b", method: "progress", params: { count: 3 } },
      sessionHeaders(sid),
    );
    await readSse(b);
    await readSse(
      await post(
        server.url,
        { jsonrpc: "2.0", id: "c", method: "broadcast", params: { text: "hi" } },
        sessionHeaders(sid),
      ),
    );
    server.responder.open("a");
    await until(() => t.pendingRequestCount === 0);
    const replay = await readSse(await resumeGet(server.url, sid, aRead.events.at(-1)!.id));
    expect(
      replay.messages.every((m) =>
        m.method === "notifications/progress"
          ? (m.params as { progressToken: string }).progressToken === "a"
          : m.id === "a",
      ),
    ).toBe(true);
    expect(progressValues(replay.messages)).toEqual([2, 3, "response"]);
  });

  it("auto-closes every connection after closeSseAfterMs, and resuming still completes the request", async () => {
    server = await startServer({ closeSseAfterMs: 60, retryMs: 10 });
    const sid = await initialize(server.url);
    const res = await post(
      server.url,
      { jsonrpc: "2.0", id: 1, method: "wait", params: { gate: "z", before: 1, after: 1 } },
      sessionHeaders(sid),
    );
    const first = await readSse(res);
    expect(first.ended).toBe(true);
    expect(first.retry).toBe(10);
    expect(progressValues(first.messages)).toEqual([1]);
    server.responder.open("z");
    const second = await readSse(await resumeGet(server.url, sid, first.events.at(-1)!.id));
    expect(progressValues(second.messages)).toEqual([2, "response"]);
  });
});

describe("standalone GET stream", () => {
  it("is primed, carries unrelated messages, and a second concurrent GET gets 409", async () => {
    server = await startServer();
    const sid = await initialize(server.url);
    const get = await fetch(server.url, { headers: { accept: "text/event-stream", ...sessionHeaders(sid) } });
    expect(get.status).toBe(200);
    expect(get.headers.get("content-type")).toBe("text/event-stream");
    const reading = readSse(get, (r) => r.messages.length === 1);
    const second = await fetch(server.url, { headers: { accept: "text/event-stream", ...sessionHeaders(sid) } });
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: { code: number } }).error.code).toBe(-32600);
    const post1 = await readSse(
      await post(
        server.url,
        { jsonrpc: "2.0", id: 1, method: "broadcast", params: { text: "x" } },
        sessionHeaders(sid),
      ),
    );
    // The unrelated notification is not on the POST's stream...
    expect(post1.messages.map((m) => m.method ?? "response")).toEqual(["response"]);
    const got = await reading;
    // ...but on the GET stream, after its priming event.
    expect(got.events[0].data).toBe("");
    expect(got.messages).toEqual([{ jsonrpc: "2.0", method: "notifications/message", params: { text: "x" } }]);
  });

  it("keeps messages sent while no GET is open for the next GET", async () => {
    server = await startServer();
    const sid = await initialize(server.url);
    await readSse(
      await post(
        server.url,
        { jsonrpc: "2.0", id: 1, method: "broadcast", params: { text: "early" } },
        sessionHeaders(sid),
      ),
    );
    const got = await readSse(
      await fetch(server.url, { headers: { accept: "text/event-stream", ...sessionHeaders(sid) } }),
      (r) => r.messages.length === 1,
    );
    expect(got.messages[0]).toMatchObject({ params: { text: "early" } });
  });

  it("closeStandaloneStream sends retry and ends the connection; resuming it replays what came after", async () => {
    server = await startServer({ retryMs: 40 });
    const sid = await initialize(server.url);
    const get = await fetch(server.url, { headers: { accept: "text/event-stream", ...sessionHeaders(sid) } });
    const reading = readSse(get);
    // The priming event is written before the close: both go through the session's ordered queue.
    await server.responder.transports[0].closeStandaloneStream();
    const first = await reading;
    expect(first.ended).toBe(true);
    expect(first.retry).toBe(40);
    await readSse(
      await post(
        server.url,
        { jsonrpc: "2.0", id: 1, method: "broadcast", params: { text: "while away" } },
        sessionHeaders(sid),
      ),
    );
    // The stream is free again for a plain GET, but a resume is what recovers the message.
    const resumed = await resumeGet(server.url, sid, first.events.at(-1)!.id);
    const got = await readSse(resumed, (r) => r.messages.length === 1);
    expect(got.messages[0]).toMatchObject({ params: { text: "while away" } });
  });
});

describe("replay failures", () => {
  it("answers 410 with a JSON-RPC error when the events after Last-Event-ID were dropped, never a partial replay", async () => {
    server = await startServer({ eventStore: new InMemoryEventStore({ maxBytesPerSession: 600 }) });
    const sid = await initialize(server.url);
    const res = await post(
      server.url,
      { jsonrpc: "2.0", id: 1, method: "wait", params: { gate: "d", before: 0, after: 20 } },
      sessionHeaders(sid),
    );
    const first = await readSse(res, (r) => r.events.length === 1);
    await server.responder.transports[0].closeSseStream(1);
    server.responder.open("d");
    await until(() => server!.responder.transports[0].pendingRequestCount === 0);
    const resumed = await resumeGet(server.url, sid, first.events[0].id);
    expect(resumed.status).toBe(410);
    const body = (await resumed.json()) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toMatch(/no longer available/);
    // Still serving.
    const echo = await readSse(await post(server.url, { jsonrpc: "2.0", id: 2, method: "echo" }, sessionHeaders(sid)));
    expect(echo.messages.at(-1)).toMatchObject({ id: 2 });
  });

  it.each(["garbage", "", "abc:", ":5", "abc:01", "a b:1"])(
    "answers 400 to a malformed Last-Event-ID %j",
    async (bad) => {
      server = await startServer();
      const sid = await initialize(server.url);
      const res = await resumeGet(server.url, sid, bad);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/Last-Event-ID/);
    },
  );

  it("never replays another session's events, even with a shared store", async () => {
    const store = new InMemoryEventStore();
    server = await startServer({ eventStore: store });
    const a = await initialize(server.url);
    const b = await initialize(server.url);
    // A's request is still running when its connection is cut, so its stream stays resumable.
    const aRes = await post(
      server.url,
      { jsonrpc: "2.0", id: 1, method: "wait", params: { gate: "a", before: 2, after: 0 } },
      sessionHeaders(a),
    );
    const aRead = await readSse(aRes, (r) => r.messages.length === 2);
    const primingOfA = aRead.events[0].id;
    const asB = await resumeGet(server.url, b, primingOfA);
    expect(asB.status).toBe(400);
    const resumed = await resumeGet(server.url, a, primingOfA);
    server.responder.open("a");
    const asA = await readSse(resumed);
    expect(progressValues(asA.messages)).toEqual([1, 2, "response"]);
  });

  it("frees a session's stored events when it ends", async () => {
    const store = new InMemoryEventStore();
    server = await startServer({ eventStore: store });
    const sid = await initialize(server.url);
    await readSse(
      await post(server.url, { jsonrpc: "2.0", id: 1, method: "progress", params: { count: 2 } }, sessionHeaders(sid)),
    );
    expect(store.sizeOf(sid)).toBeGreaterThan(0);
    await fetch(server.url, { method: "DELETE", headers: sessionHeaders(sid) });
    expect(store.sizeOf(sid)).toBe(0);
  });
});
