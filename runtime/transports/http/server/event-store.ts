// Event store for resumable SSE streams: per session and stream, with a byte-bounded in-memory default.
import type { JsonRpcMessage } from "../../../rpc/jsonrpc.js";
import { limitOption } from "../../../rpc/limits.js";
import { utf8ByteLength } from "../wire.js";

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
  /**
   * Optional. Nothing will be appended to this stream again (its request was answered or taken over). A
   * client cut off before the end may still resume it, so the store keeps it for a while, then frees it.
   * A store without this method keeps a finished stream's events until deleteSession.
   */
  finishStream?(sessionId: string, streamId: string): void | Promise<void>;
  /** Optional. A finished stream reached its client in full, so no resume will ask for it: free it now. */
  deleteStream?(sessionId: string, streamId: string): void | Promise<void>;
}

/** Stream ids must not contain the separator; the transport only makes base64url ids. */
const SEP = ":";

/** @internal */
export function formatEventId(streamId: string, seq: number): string {
  return `${streamId}${SEP}${seq}`;
}

/** @internal Splits `<streamId>:<seq>`; undefined when the id does not have that shape. */
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
  bytes: number;
  /** Set when the log is freed, so its leftover entries in the session's order queue are skipped. */
  dropped: boolean;
}

interface SessionLog {
  streams: Map<string, StreamLog>;
  /** Append order across streams (one entry per event), so the oldest event of the session is dropped first. */
  order: StreamLog[];
  orderHead: number;
  /** Events held across the session's streams. */
  events: number;
  bytes: number;
  /** Finished streams and when each may be freed, in finishing order (the window is the same for all). */
  finished: Map<string, number>;
}

export interface InMemoryEventStoreOptions {
  /** Upper bound on stored message bytes per session; oldest events are dropped past it. Default 1 MiB. */
  maxBytesPerSession?: number;
  /**
   * How long a finished stream that may not have reached its client stays resumable, in ms. Default 60 000:
   * longer than a client's reconnect schedule (about 13 s with the default backoff) with room for a restart.
   */
  finishedStreamRetentionMs?: number;
  /** At most this many such finished streams are kept per session; the oldest goes first. Default 1000. */
  maxFinishedStreamsPerSession?: number;
}

/** What an InMemoryEventStore holds, summed over all sessions. */
export interface EventStoreStats {
  sessions: number;
  /** Stream logs, including finished ones still kept for a resume. */
  streams: number;
  /** Of those, finished ones. */
  finishedStreams: number;
  events: number;
  bytes: number;
}

export class InMemoryEventStore implements EventStore {
  private readonly sessions = new Map<string, SessionLog>();
  private readonly maxBytes: number;
  private readonly retentionMs: number;
  private readonly maxFinished: number;

  constructor(options: InMemoryEventStoreOptions = {}) {
    this.maxBytes = options.maxBytesPerSession ?? 1024 * 1024;
    this.retentionMs = limitOption("finishedStreamRetentionMs", options.finishedStreamRetentionMs, 60_000);
    this.maxFinished = limitOption("maxFinishedStreamsPerSession", options.maxFinishedStreamsPerSession, 1000);
  }

  append(sessionId: string, streamId: string, message?: JsonRpcMessage): string {
    let session = this.sessions.get(sessionId);
    if (session && session.finished.size > 0) {
      // Expiry is checked as the session is used, not by a timer per stream. Freeing its last stream frees the session.
      this.sweep(sessionId, session, Date.now());
      session = this.sessions.get(sessionId);
    }
    if (!session) {
      session = { streams: new Map(), order: [], orderHead: 0, events: 0, bytes: 0, finished: new Map() };
      this.sessions.set(sessionId, session);
    }
    let stream = session.streams.get(streamId);
    if (!stream) {
      // Checked once per stream, not per event: the id must survive a round trip through Last-Event-ID.
      if (parseEventId(formatEventId(streamId, 0)) === undefined) throw new Error(`invalid stream id: ${streamId}`);
      stream = { nextSeq: 0, firstKept: 0, events: [], bytes: 0, dropped: false };
      session.streams.set(streamId, stream);
    }
    const seq = stream.nextSeq++;
    const bytes = message === undefined ? 16 : utf8ByteLength(JSON.stringify(message)) + 16;
    stream.events.push({ seq, message, bytes });
    stream.bytes += bytes;
    session.order.push(stream);
    session.events++;
    session.bytes += bytes;
    this.trim(session);
    return formatEventId(streamId, seq);
  }

  replayAfter(sessionId: string, lastEventId: string): ReplayResult {
    const parsed = parseEventId(lastEventId);
    if (!parsed) throw new EventReplayError("malformed", `malformed Last-Event-ID: ${JSON.stringify(lastEventId)}`);
    const session = this.sessions.get(sessionId);
    if (session && session.finished.size > 0) this.sweep(sessionId, session, Date.now());
    const stream = session?.streams.get(parsed.streamId);
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

  finishStream(sessionId: string, streamId: string): void {
    const session = this.sessions.get(sessionId);
    if (!session?.streams.has(streamId) || session.finished.has(streamId)) return;
    const now = Date.now();
    session.finished.set(streamId, now + this.retentionMs);
    this.sweep(sessionId, session, now);
  }

  deleteStream(sessionId: string, streamId: string): void {
    const session = this.sessions.get(sessionId);
    if (session) this.drop(sessionId, session, streamId);
  }

  /** Bytes held for a session (for tests and metrics). */
  sizeOf(sessionId: string): number {
    return this.sessions.get(sessionId)?.bytes ?? 0;
  }

  /** Totals over all sessions, after freeing finished streams whose retention ended (for tests and metrics). */
  stats(): EventStoreStats {
    const now = Date.now();
    const out: EventStoreStats = { sessions: 0, streams: 0, finishedStreams: 0, events: 0, bytes: 0 };
    for (const [id, session] of [...this.sessions]) {
      this.sweep(id, session, now);
      if (!this.sessions.has(id)) continue;
      out.sessions++;
      out.streams += session.streams.size;
      out.finishedStreams += session.finished.size;
      out.events += session.events;
      out.bytes += session.bytes;
    }
    return out;
  }

  /** Frees finished streams past their retention, then the oldest ones beyond the count bound. */
  private sweep(sessionId: string, session: SessionLog, now: number): void {
    for (const [streamId, expires] of session.finished) {
      if (expires > now && session.finished.size <= this.maxFinished) break;
      this.drop(sessionId, session, streamId);
    }
  }

  private drop(sessionId: string, session: SessionLog, streamId: string): void {
    session.finished.delete(streamId);
    const stream = session.streams.get(streamId);
    if (!stream) return;
    session.streams.delete(streamId);
    stream.dropped = true;
    session.events -= stream.events.length;
    session.bytes -= stream.bytes;
    stream.events = [];
    if (session.streams.size === 0) {
      this.sessions.delete(sessionId);
      return;
    }
    this.compact(session);
  }

  private trim(session: SessionLog): void {
    while (session.bytes > this.maxBytes && session.orderHead < session.order.length) {
      const stream = session.order[session.orderHead++];
      const dropped = stream.dropped ? undefined : stream.events.shift();
      if (!dropped) continue;
      session.events--;
      session.bytes -= dropped.bytes;
      stream.bytes -= dropped.bytes;
      stream.firstKept = dropped.seq + 1;
    }
    this.compact(session);
  }

  /**
   * The order queue gets one entry per event; trimming consumes entries from the head and a freed stream leaves
   * its entries behind. Rebuilt once those outnumber the events held, so it stays proportional to what is held
   * (amortized constant work per event).
   */
  private compact(session: SessionLog): void {
    if (session.order.length <= 2 * session.events + 1024) return;
    const order: StreamLog[] = [];
    for (let i = session.orderHead; i < session.order.length; i++) {
      if (!session.order[i].dropped) order.push(session.order[i]);
    }
    session.order = order;
    session.orderHead = 0;
  }
}
