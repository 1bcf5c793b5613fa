// Which HTTP stack the client takes when given no fetch: the node:http pool on Node, the platform's fetch where Node's modules are absent.
import { afterEach, describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { nodeBuiltin } from "../../runtime/node-builtin.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { randomId, utf8ByteLength } from "../../runtime/transports/http/wire.js";
import { initializeMessage, startServer, type RunningServer } from "./helpers.js";
import { until } from "../kit/timing.js";

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** Runs `body` as if on a runtime without process.getBuiltinModule (a browser, a worker, Node before 20.16). */
function withoutGetBuiltinModule<T>(body: () => T): T {
  const proc = process as { getBuiltinModule?: unknown };
  const original = proc.getBuiltinModule;
  proc.getBuiltinModule = undefined;
  try {
    return body();
  } finally {
    proc.getBuiltinModule = original;
  }
}

/** Sends initialize through a transport made by `make`; returns the headers the server saw on it. */
async function initializeHeaders(
  make: (url: string) => StreamableHttpClientTransport,
): Promise<Readonly<Record<string, string | undefined>>> {
  server = await startServer();
  const client = make(server.url);
  const replies: JsonObject[] = [];
  client.onmessage = (m) => replies.push(m as JsonObject);
  await client.send(initializeMessage(0));
  await until(() => replies.length > 0, 5000);
  await client.close();
  return server.responder.received[0]!.info!.headers!;
}

describe("the client's HTTP stack when given no fetch", () => {
  it("on Node it is the node:http pool (no fetch metadata headers)", async () => {
    const headers = await initializeHeaders((url) => new StreamableHttpClientTransport({ url }));
    expect(headers["sec-fetch-mode"]).toBeUndefined();
    expect(headers["connection"]).toBe("keep-alive");
  });

  it("without Node's modules at hand it is the platform's fetch, chosen when the transport is made", async () => {
    const headers = await initializeHeaders((url) =>
      withoutGetBuiltinModule(() => new StreamableHttpClientTransport({ url })),
    );
    // Fetch (undici here, a browser elsewhere) marks its requests; node:http does not.
    expect(headers["sec-fetch-mode"]).toBe("cors");
  });

  it("nodeBuiltin finds Node's modules through process.getBuiltinModule, and nothing without it", () => {
    expect(typeof nodeBuiltin("node:http")?.request).toBe("function");
    expect(withoutGetBuiltinModule(() => nodeBuiltin("node:http"))).toBeUndefined();
  });
});

describe("wire helpers without Node's Buffer or crypto", () => {
  it("randomId gives base64url without padding, the length randomBytes(n).toString('base64url') has, and no repeats", () => {
    const ids = new Set<string>();
    for (const bytes of [9, 24]) {
      for (let i = 0; i < 200; i++) {
        const id = randomId(bytes);
        expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(id.length).toBe(Buffer.alloc(bytes).toString("base64url").length);
        ids.add(id);
      }
    }
    expect(ids.size).toBe(400);
  });

  it.each(["", "ascii", "é", "€ and 😀", "\ud800 lone surrogate"])("utf8ByteLength(%j) is the UTF-8 length", (text) => {
    expect(utf8ByteLength(text)).toBe(new TextEncoder().encode(text).byteLength);
  });
});
