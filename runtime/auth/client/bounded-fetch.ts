// The fetch every OAuth request goes through: each response body read once, and never past the size cap.
import { OAuthError } from "./errors.js";

/** Statuses whose Response must have a null body (the Fetch standard's "null body status"). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * `inner` (default the platform's fetch) with every response read into memory up to `maxBytes`: a larger body, by
 * its Content-Length or as it streams, is an OAuthError "response_too_large" and the rest of it is never read. The
 * response handed back holds the bytes read, so the parsers and any clone of it work on at most `maxBytes`.
 * `Infinity` turns the cap off.
 */
export function boundedFetch(inner: typeof fetch | undefined, maxBytes: number): typeof fetch {
  return async (input, init) => {
    // Looked up per call, so a fetch installed after the client was made is the one used.
    const response = await (inner ?? globalThis.fetch)(input, init);
    if (maxBytes === Infinity) return response;
    return readBounded(response, urlOf(input), maxBytes);
  };
}

async function readBounded(response: Response, url: string, maxBytes: number): Promise<Response> {
  const body = response.body;
  if (body === null) return response;
  const declared = response.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > maxBytes) {
    await body.cancel().catch(() => undefined);
    throw tooLarge(url, maxBytes, response.status);
  }
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      // Cancelling drops the connection: the server's remaining bytes are never received, let alone kept.
      await reader.cancel().catch(() => undefined);
      throw tooLarge(url, maxBytes, response.status);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new Response(NULL_BODY.has(response.status) ? null : bytes, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

function tooLarge(url: string, maxBytes: number, status: number): OAuthError {
  return new OAuthError(
    "response_too_large",
    `the response from ${url} is larger than ${maxBytes} bytes (maxResponseBytes); the rest of it was not read`,
    { url, status },
  );
}

function urlOf(input: Parameters<typeof fetch>[0]): string {
  if (typeof input === "string") return input;
  if (input instanceof URL) return input.href;
  return input.url;
}
