// One HTTP request/response pair behind a small interface, so the server logic serves node:http and fetch alike.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { ClientAddressOf } from "./remote-address.js";

export type HeaderRecord = Readonly<Record<string, string | undefined>>;

/*
 * Node's request and response (node:http IncomingMessage and ServerResponse) as the public declarations name them:
 * structural, so that an app importing the package typechecks without Node's types (a browser app imports the
 * same declarations), while Node's own objects, and the frameworks' that extend them, fit.
 */

/** A node:http request: what `nodeListener` is handed by node:http, Express, Fastify (`request.raw`), Koa (`ctx.req`). */
export interface NodeRequest {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  on(event: string, listener: (...args: never[]) => void): unknown;
}

/** A node:http response (ServerResponse), the other argument of a request listener. */
export interface NodeResponse {
  writeHead(status: number, headers?: Record<string, string>): unknown;
  write(chunk: string): unknown;
  end(): unknown;
  on(event: string, listener: (...args: never[]) => void): unknown;
}

/**
 * A node:http request listener. Declared through a method so its parameters are compared both ways: a listener
 * written for Node's own classes (an Express app, `(req: IncomingMessage, res: ServerResponse) => ...`) fits
 * where one is asked for, and one of these fits `http.createServer`.
 */
export type NodeRequestListener = { listener(req: NodeRequest, res: NodeResponse): void }["listener"];

/** A response body being streamed (SSE). */
export interface StreamSink {
  write(chunk: string): void;
  end(): void;
  /** True once ended by us or closed by the peer. */
  readonly closed: boolean;
  /** Bytes written but not yet taken by the connection: what a reader that does not read makes pile up. */
  readonly buffered: number;
  /** Called once when the peer goes away or the sink is ended. */
  onClose(callback: () => void): void;
  /**
   * Called at most once, when the platform shows that the client received the whole body after we ended it.
   * Node: the client sent its next request on the same keep-alive connection, which HTTP/1.1 clients do
   * only once the previous response was read to its end. A fetch adapter shows nothing of the kind.
   */
  onDelivered(callback: () => void): void;
}

/**
 * The bookkeeping both kinds of stream share: `fire` (the peer went away, or we ended) runs the onClose
 * callbacks once and writes after it are dropped; `confirm` runs the onDelivered callbacks once. `gone`
 * reports a close the platform knows of before firing.
 */
function closableSink(io: { write(chunk: string): void; end(): void; buffered(): number; gone?: () => boolean }): {
  sink: StreamSink;
  fire: () => void;
  confirm: () => void;
} {
  const closing = latch();
  const delivery = latch();
  const gone = io.gone;
  const sink: StreamSink = {
    get closed() {
      return closing.fired || (gone !== undefined && gone());
    },
    get buffered() {
      return io.buffered();
    },
    write(chunk) {
      if (!sink.closed) io.write(chunk);
    },
    end() {
      if (!closing.fired) io.end();
      closing.fire();
    },
    onClose: closing.on,
    onDelivered: delivery.on,
  };
  return { sink, fire: closing.fire, confirm: delivery.fire };
}

/** Something that happens once: callbacks given before run when it fires, those given after run at once. */
function latch(): { readonly fired: boolean; fire(): void; on(callback: () => void): void } {
  let fired = false;
  const callbacks: (() => void)[] = [];
  return {
    get fired() {
      return fired;
    },
    fire() {
      if (fired) return;
      fired = true;
      for (const cb of callbacks.splice(0)) cb();
    },
    on(callback) {
      if (fired) callback();
      else callbacks.push(callback);
    },
  };
}

/**
 * Per keep-alive connection: confirms the last SSE body finished on it, once the next request arrives there.
 * Weak, so a connection that closes takes its unconfirmed entry with it.
 */
const awaitingNextRequest = new WeakMap<Socket, () => void>();

export interface HttpExchange {
  readonly method: string;
  readonly url: URL;
  /** Lower-cased names; repeated headers joined with ", ". */
  readonly headers: HeaderRecord;
  /**
   * Address the request arrived on (the Node socket's, or what a fetch adapter reports; undefined when
   * unknown), for the DNS-rebinding defaults. Never taken from Host or the URL: the client chooses those.
   */
  readonly localAddress: string | undefined;
  /**
   * Address the request came from, for per-client quotas: the peer of the connection (or what a fetch adapter
   * reports), or the entry a trusted proxy wrote (see clientAddressHeader); undefined when unknown.
   */
  readonly clientAddress: string | undefined;
  /**
   * The body, or "too-large" once more than `limit` bytes arrived (the rest is discarded), or "consumed" when
   * something before the endpoint (a framework's body parser) already read the stream and left no parsed body.
   */
  readBody(limit: number): Promise<Uint8Array | "too-large" | "consumed">;
  respond(status: number, headers: Record<string, string>, body?: string): void;
  openStream(status: number, headers: Record<string, string>): StreamSink;
  readonly responded: boolean;
  /**
   * Calls `callback` once if the client goes away before anything was responded (Node: the connection closed; fetch:
   * the request's signal aborted), so a request waiting for a single JSON reply learns that nobody reads it. At once
   * when it is gone already.
   */
  onGone(callback: () => void): void;
}

function nodeHeaders(req: IncomingMessage): HeaderRecord {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** `clientAddressOf`: how the client's address is read from the socket's peer and the headers. */
export function nodeExchange(
  request: NodeRequest,
  response: NodeResponse,
  clientAddressOf: ClientAddressOf = (peer) => peer,
): HttpExchange {
  // Node's own objects: the structural types only keep Node's types out of the declarations.
  const req = request as IncomingMessage;
  const res = response as ServerResponse;
  const headers = nodeHeaders(req);
  let responded = false;
  const socket = req.socket;
  const previous = awaitingNextRequest.get(socket);
  if (previous) {
    awaitingNextRequest.delete(socket);
    previous();
  }
  return {
    method: (req.method ?? "GET").toUpperCase(),
    url: new URL(req.url ?? "/", "http://localhost"),
    headers,
    localAddress: req.socket.localAddress,
    clientAddress: clientAddressOf(req.socket.remoteAddress, headers),
    get responded() {
      return responded;
    },
    readBody(limit) {
      // Behind a body-parsing middleware (express.json() and the like) the stream is already drained.
      const parsed = (req as { body?: unknown }).body;
      if (parsed !== undefined && req.readableEnded) {
        const bytes = Buffer.isBuffer(parsed)
          ? parsed
          : Buffer.from(typeof parsed === "string" ? parsed : JSON.stringify(parsed));
        return Promise.resolve(bytes.length > limit ? "too-large" : bytes);
      }
      // Drained and nothing left on req.body: waiting for "end" would wait forever.
      if (req.readableEnded) return Promise.resolve("consumed");
      return new Promise((resolve, reject) => {
        const declared = Number(headers["content-length"]);
        const drain = () => {
          // Keep reading and discarding so the client can finish sending and then read our 413.
          req.removeAllListeners("data");
          req.resume();
          resolve("too-large");
        };
        if (Number.isFinite(declared) && declared > limit) return drain();
        const chunks: Buffer[] = [];
        let size = 0;
        req.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > limit) return drain();
          chunks.push(chunk);
        });
        let ended = false;
        req.on("end", () => {
          ended = true;
          if (size <= limit) resolve(Buffer.concat(chunks));
        });
        req.on("error", reject);
        // A client that goes away mid-body must not leave the handler waiting forever.
        req.on("close", () => {
          if (!ended && size <= limit) reject(new Error("request body aborted"));
        });
      });
    },
    respond(status, responseHeaders, body) {
      if (responded) return;
      responded = true;
      res.writeHead(
        status,
        body === undefined
          ? responseHeaders
          : Object.assign({}, responseHeaders, { "content-length": String(Buffer.byteLength(body)) }),
      );
      res.end(body);
    },
    openStream(status, responseHeaders) {
      responded = true;
      res.writeHead(status, responseHeaders);
      res.flushHeaders();
      req.socket.setNoDelay(true);
      const { sink, fire, confirm } = closableSink({
        gone: () => res.destroyed,
        write: (chunk) => res.write(chunk),
        end: () => res.end(),
        // The response's own queue plus the socket's: writes go to the socket once headers are out.
        buffered: () => res.writableLength,
      });
      res.on("close", fire);
      // "finish" (the end handed to the OS) is no proof the client got it: a client already gone answers the
      // bytes with a reset later. Its next request on this connection is. Node emits "finish" even when a dying
      // socket failed the last write, hence the destroyed check.
      res.on("finish", () => {
        if (!socket.destroyed) awaitingNextRequest.set(socket, confirm);
      });
      return sink;
    },
    onGone(callback) {
      // Gone already (while the request was being let in): its close was emitted before anyone listened.
      if (res.destroyed) {
        if (!responded) callback();
        return;
      }
      res.on("close", () => {
        if (!responded) callback();
      });
    },
  };
}

/**
 * Wraps a fetch Request; `response` settles when the server logic responds or starts a stream. `localAddress`
 * is the address the adapter accepted the request on, `peerAddress` the one it came from, when it knows them.
 */
export function webExchange(
  request: Request,
  localAddress?: string,
  peerAddress?: string,
  clientAddressOf: ClientAddressOf = (peer) => peer,
): { exchange: HttpExchange; response: Promise<Response> } {
  const headers: Record<string, string | undefined> = {};
  request.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  // No Host header is made up from the URL: adapters build the URL from Host, so it proves nothing, and a
  // request without Host is refused where the allow-list applies, as the Node listener does.
  const url = new URL(request.url);
  let resolveResponse!: (response: Response) => void;
  const response = new Promise<Response>((resolve) => (resolveResponse = resolve));
  let responded = false;
  const encoder = new TextEncoder();
  const exchange: HttpExchange = {
    method: request.method.toUpperCase(),
    url,
    headers,
    localAddress,
    clientAddress: clientAddressOf(peerAddress, headers),
    get responded() {
      return responded;
    },
    async readBody(limit) {
      if (request.bodyUsed) return "consumed";
      const declared = Number(headers["content-length"]);
      if (Number.isFinite(declared) && declared > limit) {
        await request.body?.cancel().catch(() => undefined);
        return "too-large";
      }
      if (!request.body) return new Uint8Array(0);
      const reader = request.body.getReader();
      const chunks: Uint8Array[] = [];
      let size = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > limit) {
          await reader.cancel().catch(() => undefined);
          return "too-large";
        }
        chunks.push(value);
      }
      return concatBytes(chunks, size);
    },
    respond(status, responseHeaders, body) {
      if (responded) return;
      responded = true;
      resolveResponse(new Response(body ?? null, { status, headers: responseHeaders }));
    },
    openStream(status, responseHeaders) {
      responded = true;
      let controller!: ReadableStreamDefaultController<Uint8Array>;
      const { sink, fire } = closableSink({
        write: (chunk) => controller.enqueue(encoder.encode(chunk)),
        end: () => controller.close(),
        // With a high-water mark of 0 and sizes in bytes, -desiredSize is what the consumer has not taken yet.
        buffered: () => -(controller.desiredSize ?? 0),
      });
      const body = new ReadableStream<Uint8Array>(
        {
          start(c) {
            controller = c;
          },
          cancel() {
            fire();
          },
        },
        { highWaterMark: 0, size: (chunk) => chunk.byteLength },
      );
      request.signal?.addEventListener("abort", fire, { once: true });
      resolveResponse(new Response(body, { status, headers: responseHeaders }));
      return sink;
    },
    onGone(callback) {
      if (request.signal?.aborted === true) {
        if (!responded) callback();
        return;
      }
      request.signal?.addEventListener(
        "abort",
        () => {
          if (!responded) callback();
        },
        { once: true },
      );
    },
  };
  return { exchange, response };
}

/** The chunks of a body in one array (Buffer.concat without Buffer, which workers and browsers lack). */
function concatBytes(chunks: readonly Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
