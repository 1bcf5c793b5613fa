// The HTTP requester contract of the Streamable HTTP client, and its implementation over fetch and web streams.

/** The parts of an HTTP response the client transport uses. */
export interface WireResponse {
  readonly status: number;
  readonly ok: boolean;
  /** A header value (repeated headers joined with ", "), or null. */
  header(name: string): string | null;
  /** Every header, names lower-case, repeated headers joined with ", ". */
  headers(): Record<string, string>;
  /** The whole body as UTF-8 text. */
  text(): Promise<string>;
  /**
   * Feeds the body to `onText` as UTF-8 text as it arrives. Settles when the body ends, the connection drops
   * or `signal` aborts; never rejects (a broken stream is simply over, the caller decides what comes next).
   */
  stream(onText: (text: string) => void, signal: AbortSignal): Promise<void>;
  /** Lets go of the body without reading it. */
  discard(): Promise<void>;
}

export interface WireRequest {
  method: "GET" | "POST" | "DELETE";
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export interface WireRequester {
  send(url: URL, request: WireRequest): Promise<WireResponse>;
  /** Frees pooled connections. */
  close(): void;
}

class FetchResponse implements WireResponse {
  constructor(private readonly response: Response) {}
  get status(): number {
    return this.response.status;
  }
  get ok(): boolean {
    return this.response.ok;
  }
  header(name: string): string | null {
    return this.response.headers.get(name);
  }
  headers(): Record<string, string> {
    // Headers iterates with lower-case names and repeated values already combined.
    return Object.fromEntries(this.response.headers);
  }
  text(): Promise<string> {
    return this.response.text();
  }
  async stream(onText: (text: string) => void, signal: AbortSignal): Promise<void> {
    const body = this.response.body;
    if (!body) return;
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    const abort = () => void reader.cancel().catch(() => undefined);
    signal.addEventListener("abort", abort, { once: true });
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        onText(value);
      }
    } catch {
      // A dropped connection ends the stream like any other end.
    } finally {
      signal.removeEventListener("abort", abort);
    }
  }
  async discard(): Promise<void> {
    await this.response.body?.cancel().catch(() => undefined);
  }
}

/**
 * Requests through `fetchImpl`, by default the platform's own fetch, looked up per request so that a fetch
 * installed after the transport was made (a polyfill, an instrumented one) still applies.
 */
export function fetchRequester(
  fetchImpl: typeof fetch = (input, init) => globalThis.fetch(input, init),
): WireRequester {
  return {
    async send(url, request) {
      const response = await fetchImpl(url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: request.signal,
      });
      return new FetchResponse(response);
    },
    close() {},
  };
}
