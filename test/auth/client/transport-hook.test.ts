// The Streamable HTTP client's authorization hook: consulted on every POST, GET and DELETE, bounded retries, headers on HttpStatusError.
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { listenHttp, type ListeningHttpServer } from "../../../runtime/transports/http/server/listen.js";
import { closeAfterEach } from "../../kit/cleanup.js";
import {
  HttpStatusError,
  StreamableHttpClientTransport,
  type HttpAuthChallenge,
  type HttpAuthorizer,
  type StreamableHttpClientOptions,
} from "../../../runtime/transports/http/client/transport.js";
import type { HttpAuthRequest, HttpAuthResponse } from "../../../runtime/transports/http/client/options.js";
import { initializeMessage } from "../../http/helpers.js";
import { until } from "../../kit/timing.js";

interface Seen {
  method: string;
  authorization: string | undefined;
  /** The DPoP header as received (two headers of that name would arrive joined). */
  dpop: string | undefined;
}

let server: ListeningHttpServer | undefined;
const cleanup = closeAfterEach(async () => {
  await server?.close();
  server = undefined;
});

/**
 * An MCP endpoint that accepts only `Bearer good`, answering 401 with a challenge otherwise; it issues a session,
 * answers JSON, offers an SSE GET stream and accepts DELETE.
 */
async function endpoint(status = 401): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = await listenHttp(
    (req: IncomingMessage, res: ServerResponse) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        const dpop = req.headers.dpop;
        seen.push({
          method: req.method ?? "",
          authorization: req.headers.authorization,
          dpop: Array.isArray(dpop) ? dpop.join(", ") : dpop,
        });
        if (req.headers.authorization !== "Bearer good") {
          res.writeHead(status, {
            "WWW-Authenticate": 'Bearer error="invalid_token", scope="a b"',
            "X-Extra": "1",
            "content-type": "application/json",
          });
          return void res.end('{"error":"invalid_token"}');
        }
        if (req.method === "GET") {
          res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": "s1" });
          return void res.write(": open\n\n");
        }
        if (req.method === "DELETE") return void res.writeHead(200).end();
        const message = JSON.parse(body) as { id?: number };
        if (message.id === undefined) return void res.writeHead(202).end();
        res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" });
        res.end(
          JSON.stringify({
            jsonrpc: "2.0",
            id: message.id,
            result: { protocolVersion: "2025-11-25", capabilities: {}, serverInfo: { name: "s", version: "0" } },
          }),
        );
      });
    },
    { host: "127.0.0.1", port: 0 },
  );
  return { url: `${server.origin}/mcp`, seen };
}

/** An authorizer that has no credentials until the first challenge, then `Bearer good` (or never, with `never`). */
function authorizer(
  options: { never?: boolean; maxRetries?: number; answer?: (c: HttpAuthChallenge) => boolean | Promise<boolean> } = {},
): HttpAuthorizer & { challenges: HttpAuthChallenge[] } {
  let token: string | undefined;
  const challenges: HttpAuthChallenge[] = [];
  return {
    challenges,
    maxRetries: options.maxRetries,
    authorization: () => token,
    async challenge(challenge) {
      challenges.push(challenge);
      if (options.answer) return options.answer(challenge);
      token = options.never ? "Bearer bad" : "Bearer good";
      return true;
    },
  };
}

function transport(url: string, options: Partial<StreamableHttpClientOptions>): StreamableHttpClientTransport {
  const t = new StreamableHttpClientTransport({ url, standaloneStream: "manual", ...options });
  cleanup(() => t.close());
  return t;
}

const REQUESTERS = [
  ["node:http", {}],
  ["fetch", { fetch: (input: string | URL | Request, init?: RequestInit) => fetch(input, init) }],
] as const;

describe.each(REQUESTERS)("with the %s requester", (_name, requester) => {
  it("asks the authorizer on a 401 (status, lower-case headers, url, method, header sent, attempt) and sends the request again", async () => {
    const { url, seen } = await endpoint();
    const auth = authorizer();
    const t = transport(url, { ...requester, authorization: auth });
    const got: unknown[] = [];
    t.onmessage = (m) => got.push(m);
    await t.send(initializeMessage(1));
    await until(() => got.length === 1);
    expect(seen.map((s) => s.authorization)).toEqual([undefined, "Bearer good"]);
    expect(auth.challenges).toHaveLength(1);
    const [challenge] = auth.challenges;
    expect(challenge).toMatchObject({ status: 401, method: "POST", attempt: 1, authorization: undefined });
    expect(challenge!.url.href).toBe(url);
    expect(challenge!.headers["www-authenticate"]).toBe('Bearer error="invalid_token", scope="a b"');
    expect(challenge!.headers["x-extra"]).toBe("1");
  });

  it("gives up after maxRetries retries (default 3) with the last HttpStatusError, its headers included", async () => {
    for (const [maxRetries, sends] of [
      [undefined, 4],
      [1, 2],
      [0, 1],
    ] as const) {
      const { url, seen } = await endpoint(403);
      const auth = authorizer({ never: true, maxRetries });
      const error = await transport(url, { ...requester, authorization: auth })
        .send(initializeMessage(1))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HttpStatusError);
      expect((error as HttpStatusError).status).toBe(403);
      expect((error as HttpStatusError).headers["www-authenticate"]).toContain("invalid_token");
      expect(seen).toHaveLength(sends);
      expect(auth.challenges.map((c) => c.attempt)).toEqual(Array.from({ length: sends - 1 }, (_, i) => i + 1));
      await server!.close();
    }
  });
});

describe("the authorization hook", () => {
  it("is consulted on POST, GET and DELETE, and its header replaces one given in `headers`", async () => {
    const { url, seen } = await endpoint();
    const t = transport(url, { authorization: authorizer(), headers: { Authorization: "Bearer stale" } });
    t.onmessage = () => undefined;
    await t.send(initializeMessage(1));
    await t.openStandaloneStream();
    await t.terminateSession();
    expect(seen.map((s) => `${s.method} ${s.authorization ?? "-"}`)).toEqual([
      "POST Bearer stale",
      "POST Bearer good",
      "GET Bearer good",
      "DELETE Bearer good",
    ]);
  });

  it("a challenge answered false fails the request at once with the HttpStatusError", async () => {
    const { url, seen } = await endpoint();
    const error = await transport(url, { authorization: authorizer({ answer: () => false }) })
      .send(initializeMessage(1))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "HttpStatusError", status: 401 });
    expect(seen).toHaveLength(1);
  });

  it("a challenge that rejects fails the request with that reason", async () => {
    const { url } = await endpoint();
    const reason = new Error("the user closed the browser");
    const error = await transport(url, { authorization: authorizer({ answer: () => Promise.reject(reason) }) })
      .send(initializeMessage(1))
      .catch((e: unknown) => e);
    expect(error).toBe(reason);
  });

  it.each([-1, 1.5, 101])("refuses maxRetries %s when the transport is made", (maxRetries) => {
    expect(
      () =>
        new StreamableHttpClientTransport({ url: "http://127.0.0.1:1/mcp", authorization: authorizer({ maxRetries }) }),
    ).toThrow(RangeError);
  });
});

describe("credentials with more headers, and observe", () => {
  /** An authorizer whose credentials carry a numbered DPoP header; `Bearer good` after the first challenge. */
  function proving(observe?: HttpAuthorizer["observe"]) {
    const asked: (HttpAuthRequest | undefined)[] = [];
    const challenges: HttpAuthChallenge[] = [];
    let good = false;
    const auth: HttpAuthorizer = {
      authorization: (_url, request) => {
        asked.push(request);
        return { authorization: good ? "Bearer good" : "Bearer bad", headers: { DPoP: `proof-${asked.length}` } };
      },
      challenge: (challenge) => {
        challenges.push(challenge);
        good = true;
        return true;
      },
      observe,
    };
    return { auth, asked, challenges };
  }

  it("sends the Authorization and the other headers of { authorization, headers } on POST, GET and DELETE, each replacing one of the same name in any case", async () => {
    const { url, seen } = await endpoint();
    const observed: HttpAuthResponse[] = [];
    const { auth, asked, challenges } = proving((response) => void observed.push(response));
    const t = transport(url, { authorization: auth, headers: { dpop: "stale", Authorization: "Bearer stale" } });
    t.onmessage = () => undefined;
    await t.send(initializeMessage(1));
    await t.openStandaloneStream();
    await t.terminateSession();
    expect(seen.map((s) => `${s.method} ${s.authorization} ${s.dpop}`)).toEqual([
      "POST Bearer bad proof-1",
      "POST Bearer good proof-2",
      "GET Bearer good proof-3",
      "DELETE Bearer good proof-4",
    ]);
    // Asked with each request's method; the challenge names the credentials the refused request carried.
    expect(asked.map((request) => request?.method)).toEqual(["POST", "POST", "GET", "DELETE"]);
    expect(challenges).toHaveLength(1);
    expect(challenges[0]).toMatchObject({ authorization: "Bearer bad", credentialHeaders: { DPoP: "proof-1" } });
    // Every response observed, the refused one too, headers lower-case.
    expect(observed.map((response) => response.status)).toEqual([401, 200, 200, 200]);
    expect(observed[0]!.headers["x-extra"]).toBe("1");
    expect(observed.every((response) => response.url.href === url)).toBe(true);
  });

  it("a challenge after string credentials names no credential headers", async () => {
    const { url } = await endpoint();
    const auth = authorizer();
    const t = transport(url, { authorization: auth });
    t.onmessage = () => undefined;
    await t.send(initializeMessage(1));
    expect(auth.challenges).toHaveLength(1);
    expect("credentialHeaders" in auth.challenges[0]!).toBe(false);
  });

  it("observe runs before challenge; its rejection fails the request with that reason", async () => {
    const { url, seen } = await endpoint();
    const reason = new Error("observer failed");
    const { auth, challenges } = proving(() => Promise.reject(reason));
    const error = await transport(url, { authorization: auth })
      .send(initializeMessage(1))
      .catch((e: unknown) => e);
    expect(error).toBe(reason);
    expect(challenges).toHaveLength(0);
    expect(seen).toHaveLength(1);
  });

  it.each<[string, unknown]>([
    ["no authorization string", { headers: { DPoP: "p" } }],
    ["a header value that is not a string", { authorization: "Bearer good", headers: { DPoP: 1 } }],
    ["a number", 42],
  ])("credentials with %s fail the request with a TypeError before anything is sent", async (_name, credentials) => {
    const { url, seen } = await endpoint();
    const auth: HttpAuthorizer = {
      authorization: () => credentials as string,
      challenge: () => false,
    };
    const error = await transport(url, { authorization: auth })
      .send(initializeMessage(1))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(seen).toHaveLength(0);
  });
});

describe("HttpStatusError headers", () => {
  it("carries every response header with lower-case names, also without an authorizer", async () => {
    const { url } = await endpoint();
    const error = await transport(url, {})
      .send(initializeMessage(1))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpStatusError);
    const { headers } = error as HttpStatusError;
    expect(headers["www-authenticate"]).toBe('Bearer error="invalid_token", scope="a b"');
    expect(headers["content-type"]).toBe("application/json");
    expect(Object.keys(headers).every((name) => name === name.toLowerCase())).toBe(true);
    expect(Object.isFrozen(headers)).toBe(true);
  });
});
