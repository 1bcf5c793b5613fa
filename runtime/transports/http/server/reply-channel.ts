// A request's reply channel on the HTTP server: its stream's connection coming and going, and a contender's take-over.
import type { ReplyChannel } from "../../../rpc/transport.js";
import type { OutStream } from "./sse-output.js";

/** What a channel asks of the session transport that owns its stream, through that transport's write queue. */
export interface StreamOwner {
  enqueue<T>(work: () => Promise<T>): Promise<T>;
  handOver(stream: OutStream, key: string): void;
  endOwnStream(stream: OutStream): void;
  abandonRequest(stream: OutStream, key: string): void;
}

/** The ReplyChannel of one request stream: reports its connection coming and going, and a contender's take-over. */
export class HttpReplyChannel implements ReplyChannel {
  /** Who watches the connection (see ReplyChannel.watchConnection): usually the session, sometimes one layer more. */
  private listeners: ((connected: boolean) => void)[] = [];
  /** What the layer above was last told of the connection. */
  private reported: boolean;

  constructor(
    private readonly transport: StreamOwner,
    readonly stream: OutStream,
    readonly key: string,
    /**
     * owner: the id routes here. contending: the request shares its id with an earlier one still in flight and has
     * not taken it over (see openRequestStream). released: it never will; nothing more is sent for it.
     */
    private state: "owner" | "contending" | "released",
    /** See ReplyChannel.lossCancels: set on the 2026-07-28 lane, where a closed stream cancels the request. */
    readonly lossCancels = false,
  ) {
    this.reported = this.connected;
  }

  /** Whether what is sent for this request goes on its own stream rather than by its id. */
  get ownRoute(): boolean {
    return this.state !== "owner";
  }

  get connected(): boolean {
    const stream = this.stream;
    if (stream.jsonReply !== undefined) return true;
    const sink = stream.sink;
    return sink !== undefined && !sink.closed;
  }

  /** @internal The stream's connection may have changed; told only while the request still waits for its response. */
  changed(): void {
    const now = this.connected;
    if (now === this.reported) return;
    this.reported = now;
    if (this.stream.done || !this.stream.pending.has(this.key)) return;
    for (const listener of this.listeners) listener(now);
    // The request is over with its connection: its stream ends (and a transport of its own closes) even when
    // nobody above watched, so the request holds nothing of the server's any more.
    if (!now && this.lossCancels) this.abandon();
  }

  watchConnection(listener: (connected: boolean) => void): void {
    this.listeners.push(listener);
  }

  takeOver(): void {
    if (this.state !== "contending" || this.stream.done) return;
    // At once, so what is sent from here on takes the id's route; the switch itself queues behind earlier sends.
    this.state = "owner";
    void this.transport.enqueue(async () => this.transport.handOver(this.stream, this.key)).catch(() => undefined);
  }

  release(): void {
    if (this.state !== "contending") return;
    this.state = "released";
    void this.transport.enqueue(async () => this.transport.endOwnStream(this.stream)).catch(() => undefined);
  }

  abandon(): void {
    if (this.state === "contending") return this.release();
    if (this.state !== "owner") return;
    this.state = "released";
    void this.transport
      .enqueue(async () => this.transport.abandonRequest(this.stream, this.key))
      .catch(() => undefined);
  }
}
