// The OAuth client reads metadata, registration and token responses only up to maxResponseBytes, and stops reading there.
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import {
  ClientCredentialsClient,
  DEFAULT_MAX_OAUTH_RESPONSE_BYTES,
  OAuthClient,
  requestIdJag,
  type OAuthAuthorizer,
} from "../../../runtime/auth/index.js";
import { REDIRECT, connectWith, headlessUser, startWorld, type World, type WorldOptions } from "./helpers.js";
import { closeAfterEach } from "../../kit/cleanup.js";

const cleanup = closeAfterEach();

const HUGE = 20 * 1024 * 1024;
const SECRET = "machine-secret-value-9d2e";

/** What became of one oversized answer. */
interface Flood {
  /** Bytes the server got written before the connection ended. */
  written: number;
  /** Settles once the server's side of the answer is over; true when all of it was delivered. */
  finished: Promise<boolean>;
}

/**
 * Answers with a JSON-looking body of `HUGE` bytes, streamed with backpressure (so only what the client reads, and
 * what the sockets buffer, leaves the server); with its Content-Length declared or not.
 */
function flood(res: ServerResponse, declareLength: boolean, floods: Flood[]): void {
  let settle: (done: boolean) => void = () => undefined;
  const state: Flood = { written: 0, finished: new Promise((resolve) => (settle = resolve)) };
  floods.push(state);
  res.writeHead(200, {
    "content-type": "application/json",
    ...(declareLength ? { "content-length": String(HUGE) } : {}),
  });
  res.on("close", () => settle(res.writableFinished));
  res.write('{"padding":"');
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const pump = (): void => {
    while (!res.destroyed && state.written < HUGE - 64 * 1024) {
      state.written += chunk.length;
      if (!res.write(chunk)) return void res.once("drain", pump);
    }
    if (!res.destroyed) res.end('"}');
  };
  pump();
}

/** A fetch that counts the body bytes the client pulled from each response. */
function countingFetch(counts: number[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (response.body === null) return response;
    const index = counts.push(0) - 1;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          counts[index]! += chunk.byteLength;
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

async function failure(url: string, authorizer: OAuthAuthorizer): Promise<unknown> {
  try {
    const client = await connectWith(url, authorizer);
    cleanup(() => client.peer.close());
    await client.listTools();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

interface Document {
  /** Which request the flood answers. */
  floods: (server: "as" | "rs", req: IncomingMessage, url: URL) => boolean;
  /** The path of the URL the error must name. */
  path: string;
  /** The client that meets it. */
  client: (world: World, fetchImpl: typeof fetch) => OAuthAuthorizer;
}

const machine = (world: World, fetchImpl: typeof fetch) =>
  new ClientCredentialsClient({ issuer: world.as, clientId: "machine", clientSecret: SECRET, fetch: fetchImpl });

const DOCUMENTS: [string, Document][] = [
  [
    "protected resource metadata",
    {
      floods: (server, _req, url) => server === "rs" && url.pathname === "/meta/resource.json",
      path: "/meta/resource.json",
      client: machine,
    },
  ],
  [
    "authorization server metadata",
    {
      floods: (server, _req, url) => server === "as" && url.pathname.startsWith("/.well-known/"),
      path: "/.well-known/oauth-authorization-server",
      client: machine,
    },
  ],
  [
    "a registration response",
    {
      floods: (server, req, url) => server === "as" && req.method === "POST" && url.pathname === "/register",
      path: "/register",
      client: (_world, fetchImpl) => {
        const oauth: OAuthClient = new OAuthClient(
          {
            clientMetadata: { client_name: "test", redirect_uris: [REDIRECT] },
            redirectToAuthorization: headlessUser(() => oauth),
          },
          { fetch: fetchImpl },
        );
        return oauth;
      },
    },
  ],
  [
    "a token response",
    {
      floods: (server, req, url) => server === "as" && req.method === "POST" && url.pathname === "/token",
      path: "/token",
      client: machine,
    },
  ],
];

describe("response size cap (maxResponseBytes, default 256 KiB)", () => {
  describe.each(DOCUMENTS)("%s of 20 MB", (_name, document) => {
    it.each([
      ["streamed without a Content-Length", false],
      ["with its Content-Length declared", true],
    ])("%s: response_too_large naming it, and the body is read no further than the cap", async (_how, declared) => {
      const floods: Flood[] = [];
      const options: WorldOptions = {
        clients: { machine: SECRET },
        intercept: (server, req, res, url) => {
          if (!document.floods(server, req, url)) return false;
          flood(res, declared, floods);
          return true;
        },
      };
      const world = await startWorld(options);
      cleanup(() => world.stop());
      const counts: number[] = [];
      const error = await failure(world.rs, document.client(world, countingFetch(counts)));

      expect(error).toMatchObject({ name: "OAuthError", code: "response_too_large" });
      expect(new URL((error as { url: string }).url).pathname).toBe(document.path);
      expect((error as Error).message).toMatch(/larger than 262144 bytes \(maxResponseBytes\)/);
      expect(floods).toHaveLength(1);
      // The client hung up: the server could not deliver the 20 MB.
      expect(await floods[0]!.finished).toBe(false);
      expect(floods[0]!.written).toBeLessThan(HUGE);
      // What the client pulled off the wire stayed near the cap (a chunk or two past it, at most).
      expect(Math.max(...counts)).toBeLessThanOrEqual(DEFAULT_MAX_OAUTH_RESPONSE_BYTES + 256 * 1024);
    });
  });

  it("is configurable: a small cap refuses even the ordinary metadata, a larger one lets it through", async () => {
    const world = await startWorld({ clients: { machine: SECRET } });
    cleanup(() => world.stop());
    const small = new ClientCredentialsClient({
      issuer: world.as,
      clientId: "machine",
      clientSecret: SECRET,
      maxResponseBytes: 64,
    });
    expect(await failure(world.rs, small)).toMatchObject({ code: "response_too_large" });
    const ample = new ClientCredentialsClient({
      issuer: world.as,
      clientId: "machine",
      clientSecret: SECRET,
      maxResponseBytes: 4096,
    });
    const client = await connectWith(world.rs, ample);
    cleanup(() => client.peer.close());
    await client.listTools();
    expect(world.issued.size).toBe(1);
  });

  it.each([-1, 1.5, Number.NaN])("maxResponseBytes %s is a RangeError naming the option", (value) => {
    expect(
      () =>
        new ClientCredentialsClient({
          issuer: "https://as.example",
          clientId: "m",
          clientSecret: SECRET,
          maxResponseBytes: value,
        }),
    ).toThrow(/maxResponseBytes/);
  });

  it("requestIdJag: a 20 MB token exchange answer is response_too_large", async () => {
    const floods: Flood[] = [];
    const world = await startWorld({
      clients: { idp: undefined },
      intercept: (server, req, res, url) => {
        if (server !== "as" || url.pathname !== "/token") return false;
        flood(res, false, floods);
        return true;
      },
    });
    cleanup(() => world.stop());
    await expect(
      requestIdJag({
        tokenEndpoint: `${world.as}/token`,
        clientId: "idp",
        idToken: "id-token-value-1234",
        audience: world.as,
        resource: world.rs,
      }),
    ).rejects.toMatchObject({ code: "response_too_large", url: `${world.as}/token` });
    expect(await floods[0]!.finished).toBe(false);
  });
});
