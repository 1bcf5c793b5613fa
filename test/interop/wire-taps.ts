// What crossed the wire in an interop test: a fetch that records each HTTP exchange, and the stdio taps of tapped-example-server.mjs.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A JSON-RPC message as it was on the wire, loosely read. */
export interface WireMessage {
  jsonrpc?: string;
  id?: string | number;
  method?: string;
  params?: { _meta?: Record<string, unknown>; [key: string]: unknown };
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** One HTTP exchange: the request as sent and the reply as it streamed in (complete once the body ended). */
export interface HttpExchange {
  method: string;
  headers: Record<string, string>;
  body?: string;
  status?: number;
  replyHeaders?: Record<string, string>;
  reply: string;
  /** Settles when the reply's body has been read to its end (or the exchange failed). */
  done: Promise<void>;
}

/** The messages a request body or reply body carries (JSON, a JSON batch, or SSE `data:` lines). */
export function messagesIn(text: string | undefined, contentType = ""): WireMessage[] {
  if (text === undefined || text.trim() === "") return [];
  if (contentType.startsWith("text/event-stream")) {
    return text
      .split(/\r?\n\r?\n/)
      .map((event) =>
        event
          .split(/\r?\n/)
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""))
          .join("\n"),
      )
      .filter((data) => data !== "")
      .flatMap((data) => [JSON.parse(data) as WireMessage | WireMessage[]].flat());
  }
  return [JSON.parse(text) as WireMessage | WireMessage[]].flat();
}

/**
 * A fetch for a client transport that records every exchange. The reply body is teed, not buffered, so a stream
 * the client must answer into (an elicitation on a tools/call stream) flows as it would untapped.
 */
export function tappingFetch(): { fetch: typeof fetch; exchanges: HttpExchange[] } {
  const exchanges: HttpExchange[] = [];
  const tapped: typeof fetch = async (input, init) => {
    let finish!: () => void;
    const exchange: HttpExchange = {
      method: init?.method ?? "GET",
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
      body: typeof init?.body === "string" ? init.body : undefined,
      reply: "",
      done: new Promise((resolve) => (finish = resolve)),
    };
    exchanges.push(exchange);
    let response: Response;
    try {
      response = await fetch(input, init);
    } catch (error) {
      finish();
      throw error;
    }
    exchange.status = response.status;
    exchange.replyHeaders = Object.fromEntries(response.headers.entries());
    if (response.body === null) {
      finish();
      return response;
    }
    const [record, deliver] = response.body.tee();
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of record) exchange.reply += decoder.decode(chunk, { stream: true });
    })()
      .catch(() => undefined)
      .finally(finish);
    return new Response(deliver, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return { fetch: tapped, exchanges };
}

/** The messages of each POST and of its reply, in the order the POSTs went out. */
export function postedMessages(exchanges: readonly HttpExchange[]): { sent: WireMessage[]; replies: WireMessage[] }[] {
  return exchanges
    .filter((e) => e.method === "POST")
    .map((e) => ({
      sent: messagesIn(e.body, "application/json"),
      replies: messagesIn(e.reply, e.replyHeaders?.["content-type"]),
    }));
}

/** What one process of the tapped stdio server read and wrote, as JSON-RPC lines. */
export interface StdioTap {
  received: WireMessage[];
  sent: WireMessage[];
}

/** A fresh directory for MCPGEN_TAP_DIR, and the taps of the processes that wrote to it (one per process started). */
export function stdioTapDir(): { dir: string; taps(): StdioTap[]; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "mcpgen-stdio-tap-"));
  return {
    dir,
    taps: () =>
      readdirSync(dir)
        .filter((f) => f.endsWith(".jsonl"))
        .map((f) => {
          const chunks = readFileSync(join(dir, f), "utf8")
            .split("\n")
            .filter((l) => l !== "")
            .map((l) => JSON.parse(l) as { direction: "in" | "out"; data: string });
          const lines = (direction: "in" | "out") =>
            chunks
              .filter((c) => c.direction === direction)
              .map((c) => c.data)
              .join("")
              .split("\n")
              .filter((l) => l.trim() !== "")
              .map((l) => JSON.parse(l) as WireMessage);
          return { received: lines("in"), sent: lines("out") };
        }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Requests among `messages` (a method and an id), by method. */
export function requestMethods(messages: readonly WireMessage[]): string[] {
  return messages.filter((m) => m.method !== undefined && m.id !== undefined).map((m) => m.method!);
}
