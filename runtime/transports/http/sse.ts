// Server-Sent Events framing: encode events on the server, decode a byte stream on the client (WHATWG rules).

export interface SseEventFields {
  /** Event id; an empty string clears the receiver's last event id. */
  id?: string;
  event?: string;
  /** May span lines; each line becomes one `data:` field. An empty string still emits `data:`. */
  data?: string;
  /** Reconnection delay the receiver must wait, in milliseconds. */
  retry?: number;
}

function assertSingleLine(name: string, value: string): void {
  if (/[\r\n]/.test(value)) throw new Error(`SSE ${name} must not contain line breaks`);
}

/** One SSE event block, terminated by the blank line that dispatches it. */
export function encodeSseEvent(fields: SseEventFields): string {
  let out = "";
  if (fields.retry !== undefined) {
    if (!Number.isInteger(fields.retry) || fields.retry < 0)
      throw new Error("SSE retry must be a non-negative integer");
    out += `retry: ${fields.retry}\n`;
  }
  if (fields.id !== undefined) {
    assertSingleLine("id", fields.id);
    if (fields.id.includes("\0")) throw new Error("SSE id must not contain NUL");
    out += fields.id === "" ? "id\n" : `id: ${fields.id}\n`;
  }
  if (fields.event !== undefined) {
    assertSingleLine("event", fields.event);
    out += `event: ${fields.event}\n`;
  }
  if (fields.data !== undefined) {
    for (const line of fields.data.split(/\r\n|\r|\n/)) out += line === "" ? "data:\n" : `data: ${line}\n`;
  }
  return out + "\n";
}

export interface SseEvent {
  /** `message` unless the event named another type. */
  type: string;
  data: string;
  /** The stream's last event id after this event (empty string when none or cleared). */
  lastEventId: string;
}

export interface SseDecoderCallbacks {
  /** An event with a data field (possibly empty data, e.g. a priming event). */
  onEvent?: (event: SseEvent) => void;
  /** The last event id changed (set, or cleared to ""), whether or not an event was dispatched. */
  onLastEventId?: (id: string) => void;
  onRetry?: (ms: number) => void;
}

/**
 * Incremental decoder. Unlike a browser it hands data-less events' ids to onLastEventId too, because a
 * priming event's only content is its id and that id is what resumption needs.
 */
export class SseDecoder {
  private buffer = "";
  private data: string[] = [];
  private hasData = false;
  private eventType = "";
  private idBuffer: string;
  private dispatchedId: string;
  private sawAnything = false;
  private readonly callbacks: SseDecoderCallbacks;

  constructor(callbacks: SseDecoderCallbacks, initialLastEventId = "") {
    this.callbacks = callbacks;
    this.idBuffer = initialLastEventId;
    this.dispatchedId = initialLastEventId;
  }

  get lastEventId(): string {
    return this.dispatchedId;
  }

  push(chunk: string): void {
    if (!this.sawAnything && chunk.length > 0) {
      this.sawAnything = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    this.buffer += chunk;
    let start = 0;
    for (;;) {
      let end = -1;
      let next = -1;
      for (let i = start; i < this.buffer.length; i++) {
        const c = this.buffer.charCodeAt(i);
        if (c === 10) {
          end = i;
          next = i + 1;
          break;
        }
        if (c === 13) {
          // A CR at the very end may be the first half of CRLF: wait for more input.
          if (i + 1 >= this.buffer.length) break;
          end = i;
          next = this.buffer.charCodeAt(i + 1) === 10 ? i + 2 : i + 1;
          break;
        }
      }
      if (end < 0) break;
      this.line(this.buffer.slice(start, end));
      start = next;
    }
    this.buffer = this.buffer.slice(start);
  }

  /** The stream ended; an unterminated trailing event is discarded, as the standard requires. */
  end(): void {
    this.buffer = "";
    this.data = [];
    this.hasData = false;
    this.eventType = "";
  }

  private line(line: string): void {
    if (line === "") return this.dispatch();
    if (line.charCodeAt(0) === 58) return; // comment
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case "data":
        this.data.push(value);
        this.hasData = true;
        break;
      case "event":
        this.eventType = value;
        break;
      case "id":
        if (!value.includes("\0")) this.idBuffer = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.callbacks.onRetry?.(Number(value));
        break;
      default:
        break;
    }
  }

  private dispatch(): void {
    if (this.idBuffer !== this.dispatchedId) {
      this.dispatchedId = this.idBuffer;
      this.callbacks.onLastEventId?.(this.dispatchedId);
    }
    if (this.hasData) {
      this.callbacks.onEvent?.({
        type: this.eventType || "message",
        data: this.data.join("\n"),
        lastEventId: this.dispatchedId,
      });
    }
    this.data = [];
    this.hasData = false;
    this.eventType = "";
  }
}
