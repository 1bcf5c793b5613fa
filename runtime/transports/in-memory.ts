// In-process transport pair for tests and embedding: asynchronous delivery, messages passed by reference.
import type { JsonRpcMessage } from "../rpc/jsonrpc.js";
import { SENT, type InboundInfo, type SendOptions, type Transport } from "../rpc/transport.js";

/** Queued behind earlier messages so a close never overtakes data sent before it. */
const CLOSE = Symbol("close");

/** A queued message whose sender asked to hear when it was handed over (rare: most messages are queued bare). */
class Delivery {
  constructor(
    readonly message: unknown,
    readonly ondelivered: () => void,
  ) {}
}

export interface InMemoryTransportOptions {
  /** Attached to every message this end receives (e.g. a principal, to test auth-aware handlers). */
  info?: InboundInfo;
}

/**
 * One end of an in-memory link. Messages are delivered on a microtask, never from inside `send()`, in order,
 * and are NOT cloned: the receiver gets the very object the sender passed, so senders must not mutate a
 * message after sending it (the session never does). Closing one end closes the other once it has received
 * everything sent before the close.
 */
export class InMemoryTransport implements Transport {
  onmessage?: (message: unknown, info?: InboundInfo) => void;
  onmalformed?: (error: Error, info?: InboundInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** The other end; set by createInMemoryPair. */
  peer: InMemoryTransport | undefined = undefined;
  /** A message counts as delivered once the peer's onmessage has been called with it. */
  readonly confirmsDelivery = true;

  private readonly info: InboundInfo | undefined;
  private readonly queue: unknown[] = [];
  private scheduled = false;
  private started = false;
  private closed = false;

  constructor(options: InMemoryTransportOptions = {}) {
    this.info = options.info;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  start(): Promise<void> {
    if (this.started) return Promise.reject(new Error("InMemoryTransport already started"));
    this.started = true;
    // Messages may have arrived before start(); deliver them now.
    if (this.queue.length > 0) this.schedule();
    return SENT;
  }

  send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    const peer = this.peer;
    if (this.closed || peer === undefined || peer.closed)
      return Promise.reject(new Error("InMemoryTransport is closed"));
    const ondelivered = options?.ondelivered;
    peer.enqueue(ondelivered === undefined ? message : new Delivery(message, ondelivered));
    return SENT;
  }

  /** Inject a raw frame as if it came off a wire: anything JSON.parse could return, delivered asynchronously. */
  receiveRaw(value: unknown): void {
    this.enqueue(value);
  }

  /** Inject a frame that failed to parse (what a byte transport reports as onmalformed). */
  receiveMalformed(error: Error): void {
    queueMicrotask(() => {
      if (!this.closed) this.onmalformed?.(error, this.info);
    });
  }

  close(): Promise<void> {
    if (this.closed) return SENT;
    this.shut();
    const peer = this.peer;
    if (peer !== undefined && !peer.closed) peer.enqueue(CLOSE);
    return SENT;
  }

  private enqueue(item: unknown): void {
    if (this.closed) return;
    this.queue.push(item);
    if (this.started && !this.scheduled) this.schedule();
  }

  private schedule(): void {
    this.scheduled = true;
    queueMicrotask(this.flush);
  }

  // Drains everything queued, including what arrives during delivery, in one microtask.
  private readonly flush = (): void => {
    const queue = this.queue;
    let i = 0;
    for (; i < queue.length; i++) {
      if (this.closed) break;
      const item = queue[i];
      if (item === CLOSE) {
        this.shut();
        break;
      }
      const delivery = item instanceof Delivery ? item : undefined;
      const onmessage = this.onmessage;
      if (onmessage !== undefined) {
        try {
          onmessage(delivery === undefined ? item : delivery.message, this.info);
        } catch (error) {
          this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        }
      }
      // Cut before this point (the loop breaks above), the message was lost, and the callback never comes.
      if (delivery !== undefined && onmessage !== undefined) delivery.ondelivered();
    }
    queue.length = 0;
    this.scheduled = false;
  };

  private shut(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    this.onclose?.();
  }
}

/** Two linked ends: what one sends, the other receives. */
export function createInMemoryPair(
  options: { clientInfo?: InboundInfo; serverInfo?: InboundInfo } = {},
): [client: InMemoryTransport, server: InMemoryTransport] {
  const client = new InMemoryTransport({ info: options.clientInfo });
  const server = new InMemoryTransport({ info: options.serverInfo });
  client.peer = server;
  server.peer = client;
  return [client, server];
}

/**
 * A link that can be cut: `cut()` closes both ends at once, as a dropped connection would. Reconnecting is
 * `reconnect()`, which hands out a fresh pair on the same link object; sessions that outlive a connection
 * (resumable requests) attach to the new ends.
 */
export class InMemoryLink {
  client: InMemoryTransport;
  server: InMemoryTransport;

  constructor(private readonly options: { clientInfo?: InboundInfo; serverInfo?: InboundInfo } = {}) {
    [this.client, this.server] = createInMemoryPair(options);
  }

  /** Close both ends immediately; anything in flight is lost. */
  cut(): void {
    const { client, server } = this;
    client.peer = undefined;
    server.peer = undefined;
    void client.close();
    void server.close();
  }

  /** A fresh pair of ends; the previous ones are cut first if still open. */
  reconnect(): [client: InMemoryTransport, server: InMemoryTransport] {
    if (!this.client.isClosed || !this.server.isClosed) this.cut();
    [this.client, this.server] = createInMemoryPair(this.options);
    return [this.client, this.server];
  }
}
