// Event store for resumable SSE streams: per session and stream, with a byte-bounded in-memory default.
import type { JsonRpcMessage } from "../jsonrpc.js";

export interface StoredEvent {
  eventId: string;
  /** Undefined for a priming event: it carries only an id, as a resume point. */
  message?: JsonRpcMessage;
}

export interface ReplayResult {
  /** The stream the Last-Event-ID belongs to; resumption continues on it. */
  streamId: string;
  /** Events after the given id, oldest first (priming markers included; senders skip them). */
  events: StoredEvent[];
}

export type EventReplayFailure =
  /** The id is not one this store could have issued. */
  | "malformed"
  /** Well-formed but unknown in this session (never issued, or the session's events were freed). */
  | "unknown"
  /** Events after the id were already dropped to stay within bounds: replay would be partial. */
  | "expired";

export class EventReplayError extends Error {
  readonly reason: EventReplayFailure;
  constructor(reason: EventReplayFailure, message: string) {
    super(message);
    this.name = "EventReplayError";
    this.reason = reason;
  }
}

/**
 * Storage behind resumability. A store may be shared by many sessions; every operation is keyed by the
 * session so that one session's Last-Event-ID can never reach another's events.
 */
export interface EventStore {
  /** Records one event (a message, or a priming marker when message is undefined); returns its id. */
  append(sessionId: string, streamId: string, message?: JsonRpcMessage): string | Promise<string>;
  /** Everything after lastEventId on its stream, or an EventReplayError; never a partial list. */
  replayAfter(sessionId: string, lastEventId: string): ReplayResult | Promise<ReplayResult>;
  /** Frees all of a session's events. */
  deleteSession(sessionId: string): void | Promise<void>;
}

/** Stream ids must not contain the separator; the transport only makes base64url ids. */
const SEP = ":";

export function formatEventId(streamId: string, seq: number): string {
  return `${streamId}${SEP}${seq}`;
}

/** Splits `<streamId>:<seq>`; undefined when the id does not have that shape. */
export function parseEventId(eventId: string): { streamId: string; seq: number } | undefined {
  const at = eventId.lastIndexOf(SEP);
  if (at <= 0) return undefined;
  const streamId = eventId.slice(0, at);
  const digits = eventId.slice(at + 1);
  if (!/^(0|[1-9]\d{0,15})$/.test(digits) || !/^[A-Za-z0-9_-]+$/.test(streamId)) return undefined;
  return { streamId, seq: Number(digits) };
}

interface StreamLog {
  nextSeq: number;
  /** Events with seq < firstKept were dropped; replay from before that point would be partial. */
  firstKept: number;
  events: { seq: number; message?: JsonRpcMessage; bytes: number }[];
}

interface SessionLog {
  streams: Map<string, StreamLog>;
  /** Append order across streams, so the oldest event of the session is dropped first. */
  order: { streamId: string; seq: number }[];
  orderHead: number;
  bytes: number;
}

export interface InMemoryEventStoreOptions {
  /** Upper bound on stored message bytes per session; oldest events are dropped past it. Default 1 MiB. */
  maxBytesPerSession?: number;
}

export class InMemoryEventStore implements EventStore {
  private readonly sessions = new Map<string, SessionLog>();
  private readonly maxBytes: number;

  constructor(options: InMemoryEventStoreOptions = {}) {
    this.maxBytes = options.maxBytesPerSession ?? 1024 * 1024;
  }

  append(sessionId: string, streamId: string, message?: JsonRpcMessage): string {
    let session = this.sessions.get(sessionId);
    if (!session) {
      session = { streams: new Map(), order: [], orderHead: 0, bytes: 0 };
      this.sessions.set(sessionId, session);
    }
    let stream = session.streams.get(streamId);
    if (!stream) {
      // Checked once per stream, not per event: the id must survive a round trip through Last-Event-ID.
      if (parseEventId(formatEventId(streamId, 0)) === undefined) throw new Error(`invalid stream id: ${streamId}`);
      stream = { nextSeq: 0, firstKept: 0, events: [] };
      session.streams.set(streamId, stream);
    }
    const seq = stream.nextSeq++;
    const bytes = message === undefined ? 16 : Buffer.byteLength(JSON.stringify(message)) + 16;
    stream.events.push({ seq, message, bytes });
    session.order.push({ streamId, seq });
    session.bytes += bytes;
    this.trim(session);
    return formatEventId(streamId, seq);
  }

  replayAfter(sessionId: string, lastEventId: string): ReplayResult {
    const parsed = parseEventId(lastEventId);
    if (!parsed) throw new EventReplayError("malformed", `malformed Last-Event-ID: ${JSON.stringify(lastEventId)}`);
    const stream = this.sessions.get(sessionId)?.streams.get(parsed.streamId);
    if (!stream || parsed.seq >= stream.nextSeq) {
      throw new EventReplayError("unknown", `unknown Last-Event-ID: ${lastEventId}`);
    }
    // The event right after lastEventId must still be here, else the client would miss some silently.
    if (parsed.seq + 1 < stream.firstKept) {
      throw new EventReplayError("expired", `events after ${lastEventId} are no longer available`);
    }
    const events: StoredEvent[] = [];
    for (const e of stream.events) {
      if (e.seq > parsed.seq) {
        events.push(
          e.message === undefined
            ? { eventId: formatEventId(parsed.streamId, e.seq) }
            : { eventId: formatEventId(parsed.streamId, e.seq), message: e.message },
        );
      }
    }
    return { streamId: parsed.streamId, events };
  }

  deleteSession(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  /** Bytes held for a session (for tests and metrics). */
  sizeOf(sessionId: string): number {
    return this.sessions.get(sessionId)?.bytes ?? 0;
  }

  private trim(session: SessionLog): void {
    while (session.bytes > this.maxBytes && session.orderHead < session.order.length) {
      const { streamId } = session.order[session.orderHead++];
      const stream = session.streams.get(streamId);
      const dropped = stream?.events.shift();
      if (!stream || !dropped) continue;
      session.bytes -= dropped.bytes;
      stream.firstKept = dropped.seq + 1;
    }
    // Compact the order queue now and then instead of shifting on every drop.
    if (session.orderHead > 1024 && session.orderHead * 2 > session.order.length) {
      session.order = session.order.slice(session.orderHead);
      session.orderHead = 0;
    }
  }
}
