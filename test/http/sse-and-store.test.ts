// Unit tests of the SSE codec and the in-memory event store.
import { describe, expect, it } from "vitest";
import { until } from "../kit/timing.js";
import {
  EventReplayError,
  InMemoryEventStore,
  parseEventId,
} from "../../runtime/transports/http/server/event-store.js";
import { SseDecoder, encodeSseEvent, type SseEvent } from "../../runtime/transports/http/sse.js";

function decodeAll(chunks: string[], initial = ""): { events: SseEvent[]; ids: string[]; retries: number[] } {
  const out = { events: [] as SseEvent[], ids: [] as string[], retries: [] as number[] };
  const d = new SseDecoder(
    {
      onEvent: (e) => out.events.push(e),
      onLastEventId: (id) => out.ids.push(id),
      onRetry: (ms) => out.retries.push(ms),
    },
    initial,
  );
  for (const c of chunks) d.push(c);
  d.end();
  return out;
}

describe("SSE codec", () => {
  it("encodes a priming event as id plus empty data", () => {
    expect(encodeSseEvent({ id: "s:0", data: "" })).toBe("id: s:0\ndata:\n\n");
    expect(encodeSseEvent({ retry: 500 })).toBe("retry: 500\n\n");
    expect(encodeSseEvent({ data: "a\nb" })).toBe("data: a\ndata: b\n\n");
    expect(() => encodeSseEvent({ id: "a\nb" })).toThrow();
  });

  it("round-trips events split at every byte boundary, with CRLF and CR line ends", () => {
    const wire =
      encodeSseEvent({ id: "x:1", data: '{"a":1}' }) + "retry: 30\r\n\r\n" + "id: x:2\rdata: two\r\rdata: three\n\n";
    for (let cut = 0; cut <= wire.length; cut++) {
      const r = decodeAll([wire.slice(0, cut), wire.slice(cut)]);
      expect(r.events.map((e) => [e.data, e.lastEventId])).toEqual([
        ['{"a":1}', "x:1"],
        ["two", "x:2"],
        ["three", "x:2"],
      ]);
      expect(r.retries).toEqual([30]);
    }
  });

  it("records ids of data-less events and clears the id on an empty id field", () => {
    const r = decodeAll(["id: p:0\n\n", "data: x\n\n", "id\ndata: y\n\n"], "old");
    expect(r.ids).toEqual(["p:0", ""]);
    expect(r.events.map((e) => e.lastEventId)).toEqual(["p:0", ""]);
  });

  it("ignores comments, unknown fields, a leading BOM, and an unterminated last event", () => {
    const r = decodeAll(["\ufeff: hello\nfoo: bar\nevent: ping\ndata: 1\n\n", "data: cut"]);
    expect(r.events).toEqual([{ type: "ping", data: "1", lastEventId: "" }]);
  });
});

describe("InMemoryEventStore", () => {
  const msg = (n: number) => ({ jsonrpc: "2.0" as const, method: "m", params: { n } });

  it("replays only after the given id, only on its stream", () => {
    const s = new InMemoryEventStore();
    const p = s.append("S", "a", undefined);
    s.append("S", "b", msg(0));
    const a1 = s.append("S", "a", msg(1));
    s.append("S", "a", msg(2));
    expect(s.replayAfter("S", p)).toEqual({
      streamId: "a",
      events: [
        { eventId: a1, message: msg(1) },
        { eventId: "a:2", message: msg(2) },
      ],
    });
    expect(s.replayAfter("S", "a:2").events).toEqual([]);
  });

  it("keeps sessions apart even with the same stream ids", () => {
    const s = new InMemoryEventStore();
    s.append("S1", "a", msg(1));
    const id = s.append("S1", "a", msg(2));
    expect(() => s.replayAfter("S2", "a:0")).toThrow(EventReplayError);
    s.append("S2", "a", msg(9));
    expect(s.replayAfter("S2", "a:0").events).toEqual([]);
    expect(s.replayAfter("S1", "a:0").events).toEqual([{ eventId: id, message: msg(2) }]);
  });

  it("drops the oldest events past the byte bound and refuses a replay that would be partial", () => {
    const s = new InMemoryEventStore({ maxBytesPerSession: 400 });
    const first = s.append("S", "a", undefined);
    for (let i = 0; i < 20; i++) s.append("S", "a", msg(i));
    expect(s.sizeOf("S")).toBeLessThanOrEqual(400);
    let err: unknown;
    try {
      s.replayAfter("S", first);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(EventReplayError);
    expect((err as EventReplayError).reason).toBe("expired");
    // From the newest events on, replay is still complete.
    expect(s.replayAfter("S", "a:19").events.map((e) => e.eventId)).toEqual(["a:20"]);
  });

  it("classifies malformed and unknown ids", () => {
    const s = new InMemoryEventStore();
    s.append("S", "a", msg(1));
    const reason = (id: string) => {
      try {
        s.replayAfter("S", id);
        return "ok";
      } catch (e) {
        return (e as EventReplayError).reason;
      }
    };
    expect(reason("zzz")).toBe("malformed");
    expect(reason("a:7")).toBe("unknown");
    expect(reason("b:0")).toBe("unknown");
    expect(reason("a:0")).toBe("ok");
    expect(parseEventId("ab_c-1:42")).toEqual({ streamId: "ab_c-1", seq: 42 });
  });

  it("frees a session", () => {
    const s = new InMemoryEventStore();
    s.append("S", "a", msg(1));
    s.deleteSession("S");
    expect(s.sizeOf("S")).toBe(0);
    expect(() => s.replayAfter("S", "a:0")).toThrow(EventReplayError);
  });

  it("frees a deleted stream at once, and the session with its last stream", () => {
    const s = new InMemoryEventStore();
    s.append("S", "a", undefined);
    s.append("S", "a", msg(1));
    s.append("S", "b", msg(2));
    const before = s.sizeOf("S");
    s.deleteStream("S", "a");
    expect(s.stats()).toEqual({
      sessions: 1,
      streams: 1,
      finishedStreams: 0,
      events: 1,
      bytes: before - 16 - (JSON.stringify(msg(1)).length + 16),
    });
    expect(() => s.replayAfter("S", "a:0")).toThrow(/unknown/);
    expect(s.replayAfter("S", "b:0").events).toEqual([]);
    s.deleteStream("S", "b");
    expect(s.stats()).toEqual({ sessions: 0, streams: 0, finishedStreams: 0, events: 0, bytes: 0 });
    expect(s.sizeOf("S")).toBe(0);
  });

  it("keeps a finished stream resumable for its retention window, then frees it without a timer of its own", async () => {
    const s = new InMemoryEventStore({ finishedStreamRetentionMs: 50 });
    s.append("S", "a", undefined);
    s.append("S", "a", msg(1));
    s.append("S", "live", msg(2));
    s.finishStream("S", "a");
    // Unknown streams and a second finish change nothing.
    s.finishStream("S", "nope");
    s.finishStream("S", "a");
    expect(s.stats().finishedStreams).toBe(1);
    expect(s.replayAfter("S", "a:0").events).toEqual([{ eventId: "a:1", message: msg(1) }]);
    await until(() => s.stats().streams === 1);
    expect(() => s.replayAfter("S", "a:0")).toThrow(/unknown/);
    // A stream that is not finished stays, however old.
    expect(s.replayAfter("S", "live:0").events).toEqual([]);
  });

  it("keeps at most maxFinishedStreamsPerSession finished streams, the oldest freed first", () => {
    const s = new InMemoryEventStore({ maxFinishedStreamsPerSession: 3 });
    for (let i = 0; i < 5; i++) {
      s.append("S", `r${i}`, msg(i));
      s.finishStream("S", `r${i}`);
    }
    s.append("T", "r0", msg(0));
    s.finishStream("T", "r0");
    expect(s.stats()).toMatchObject({ sessions: 2, streams: 4, finishedStreams: 4 });
    expect(() => s.replayAfter("S", "r1:0")).toThrow(/unknown/);
    expect(s.replayAfter("S", "r2:0").events).toEqual([]);
    expect(s.replayAfter("T", "r0:0").events).toEqual([]);
  });

  it("with retention 0, finishing a stream frees it", () => {
    const s = new InMemoryEventStore({ finishedStreamRetentionMs: 0 });
    s.append("S", "a", msg(1));
    s.finishStream("S", "a");
    expect(s.stats().streams).toBe(0);
  });

  it("still drops the oldest events first after many streams came and went", () => {
    const s = new InMemoryEventStore({ maxBytesPerSession: 2000 });
    s.append("S", "keep", msg(-1));
    for (let i = 0; i < 5000; i++) {
      s.append("S", `r${i}`, msg(i));
      s.deleteStream("S", `r${i}`);
    }
    // The order queue behind the byte bound stays proportional to what is held, not to what was ever appended.
    const order = (s as unknown as { sessions: Map<string, { order: unknown[] }> }).sessions.get("S")!.order;
    expect(order.length).toBeLessThan(2000);
    for (let i = 0; i < 100; i++) s.append("S", "keep", msg(i));
    expect(s.sizeOf("S")).toBeLessThanOrEqual(2000);
    const kept = s.stats().events;
    const replay = s.replayAfter("S", `keep:${100 - kept}`).events;
    expect(replay.map((e) => e.eventId)).toEqual(Array.from({ length: kept }, (_, i) => `keep:${101 - kept + i}`));
  });
});
