// The HTTP client when its server dies or falters mid-call: a server that is gone fails the call at its first
// reconnect, with the network error as cause; a stream cut while the server lives is resumed; exhausted attempts
// name their last error.
import type { RequestListener } from "node:http";
import { describe, expect, it } from "vitest";
import type { ClientSession } from "../../runtime/mcp/client-session.js";
import {
  CONNECTION_LOST_CODE,
  HttpStatusError,
  StreamLostError,
  StreamableHttpClientTransport,
  type StreamableHttpClientOptions,
} from "../../runtime/transports/http/client/transport.js";
import { serverGone } from "../../runtime/transports/http/client/errors.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { clientSession } from "../kit/mcp-sessions.js";
import { countConnections } from "../kit/net.js";
import { until } from "../kit/timing.js";
import { startServer, type RunningServer } from "./helpers.js";

let server: RunningServer | undefined;
const cleanup = closeAfterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** Short delays, so that a client that would go through its whole schedule does so quickly (and fails the count). */
const FAST = { initialDelayMs: 10, maxDelayMs: 20 };

/** A client session over HTTP to the server; standalone stream off unless asked, so only the call's stream reconnects. */
async function connectClient(options: Partial<StreamableHttpClientOptions> = {}) {
  const errors: Error[] = [];
  const client = clientSession();
  client.onerror = (error) => errors.push(error);
  cleanup(() => client.close());
  await client.connect(
    new StreamableHttpClientTransport({ url: server!.url, standaloneStream: "manual", reconnect: FAST, ...options }),
  );
  return { client, errors };
}

/**
 * Starts the responder's `wait` (one progress value, then held at `gate`, then two more and the result) and resolves
 * once the first progress value arrived, i.e. mid-call, with its event id known to the client. The call settles to
 * its result or its error.
 */
async function heldCall(
  client: ClientSession,
  gate: string,
): Promise<{ outcome: Promise<unknown>; progress: number[] }> {
  const progress: number[] = [];
  let first!: () => void;
  const started = new Promise<void>((resolve) => (first = resolve));
  const outcome = client
    .request(
      "wait",
      { gate, before: 1, after: 2 },
      {
        onProgress: (p) => {
          progress.push(p.progress);
          first();
        },
      },
    )
    .then(
      (result) => result,
      (error: unknown) => error,
    );
  await started;
  return { outcome, progress };
}

/** The server process dies: nothing listens on its port any more and its connections drop. */
async function kill(s: RunningServer): Promise<void> {
  const closed = new Promise<void>((resolve) => s.http.close(() => resolve()));
  s.http.closeAllConnections();
  await closed;
}

/** Puts `front` before the MCP endpoint: a request it answers (returns true) does not reach the endpoint. */
function front(s: RunningServer, answer: (...args: Parameters<RequestListener>) => boolean): void {
  const endpoint = s.http.listeners("request") as RequestListener[];
  s.http.removeAllListeners("request");
  s.http.on("request", (req, res) => {
    if (!answer(req, res)) for (const listener of endpoint) listener(req, res);
  });
}

describe("a server that dies mid-call", () => {
  it.each([
    // node:http throws the socket error itself.
    { requester: "node:http", fetch: undefined, socketError: (cause: unknown) => cause },
    // fetch on Node throws `TypeError: fetch failed` with the socket error as its cause.
    { requester: "fetch", fetch: globalThis.fetch, socketError: (cause: unknown) => (cause as Error).cause },
  ])(
    "fails the pending call at its first reconnect, with ECONNREFUSED as the cause ($requester)",
    async ({ fetch, socketError }) => {
      server = await startServer();
      const { client, errors } = await connectClient(fetch === undefined ? {} : { fetch });
      const { outcome } = await heldCall(client, "never");
      const attempts = countConnections(server.port);
      await kill(server);
      const error = (await outcome) as Error & { code?: number };
      attempts.stop();

      expect(error).toBeInstanceOf(Error);
      expect(error.code).toBe(CONNECTION_LOST_CODE);
      expect(error.message).toMatch(
        new RegExp(`^server at http://127\\.0\\.0\\.1:${server.port}/mcp is unreachable: .*ECONNREFUSED`),
      );
      expect(socketError(error.cause)).toMatchObject({ code: "ECONNREFUSED" });
      // One reconnect, refused: not the five of the resume schedule.
      expect(attempts.count).toBe(1);
      // The app hears of it too, with the same cause.
      expect(errors.find((e) => e instanceof StreamLostError)?.cause).toBe(error.cause);
    },
  );

  it("keeps the standalone stream's schedule (no call waits on it), and names the refusal when it gives up", async () => {
    server = await startServer();
    const { errors } = await connectClient({ standaloneStream: "auto", reconnect: { ...FAST, maxAttempts: 3 } });
    await until(() => server!.responder.transports[0]?.standaloneConnected === true);
    const attempts = countConnections(server.port);
    await kill(server);
    await until(() => errors.some((e) => e instanceof StreamLostError));
    attempts.stop();
    const lost = errors.find((e) => e instanceof StreamLostError)!;
    expect(attempts.count).toBe(3);
    expect(lost.message).toMatch(/^could not resume the SSE stream after 3 attempts: connect ECONNREFUSED/);
    expect(lost.cause).toMatchObject({ code: "ECONNREFUSED" });
  });
});

describe("a stream cut while the server lives", () => {
  it("is resumed, through a reconnect that is reset, and the call completes once", async () => {
    server = await startServer();
    let gets = 0;
    front(server, (req) => {
      if (req.method !== "GET") return false;
      // The first resume attempt is reset by the server: a failure that keeps the schedule, not a gone server.
      if (++gets === 1) {
        req.socket.destroy();
        return true;
      }
      return false;
    });
    const { client, errors } = await connectClient();
    const { outcome, progress } = await heldCall(client, "g");
    // The server drops every connection but goes on listening; the request goes on without its stream.
    server.http.closeAllConnections();
    server.responder.open("g");
    expect(await outcome).toEqual({ done: 3 });
    expect(progress).toEqual([1, 2, 3]);
    expect(gets).toBe(2);
    expect(errors).toEqual([]);
  });
});

describe("reconnect attempts that run out", () => {
  it("against a server answering 503 fail the call with the last 503 as the cause", async () => {
    server = await startServer();
    let gets = 0;
    front(server, (req, res) => {
      if (req.method !== "GET") return false;
      gets++;
      res.writeHead(503, { "content-type": "text/plain" }).end("overloaded");
      return true;
    });
    const { client } = await connectClient({ reconnect: { ...FAST, maxAttempts: 3 } });
    const { outcome } = await heldCall(client, "never");
    server.http.closeAllConnections();
    const error = (await outcome) as Error & { code?: number };
    expect(error.code).toBe(CONNECTION_LOST_CODE);
    expect(error.message).toBe("could not resume the SSE stream after 3 attempts: HTTP 503: overloaded");
    expect(error.cause).toBeInstanceOf(HttpStatusError);
    expect(error.cause).toMatchObject({ status: 503, body: "overloaded" });
    expect(gets).toBe(3);
  });

  it("with a fetch that gives no error code (a browser's), keep the schedule and give the last error as the cause", async () => {
    server = await startServer();
    let gets = 0;
    const browserLike: typeof fetch = async (input, init) => {
      if (init?.method === "GET") {
        gets++;
        throw new TypeError("Failed to fetch");
      }
      return fetch(input, init);
    };
    const { client } = await connectClient({ fetch: browserLike, reconnect: { ...FAST, maxAttempts: 3 } });
    const { outcome } = await heldCall(client, "never");
    await kill(server);
    const error = (await outcome) as Error;
    expect(error.message).toBe("could not resume the SSE stream after 3 attempts: Failed to fetch");
    expect(error.cause).toBeInstanceOf(TypeError);
    expect(gets).toBe(3);
  });
});

describe("what counts as a server that is gone", () => {
  const coded = (code: string, message = `connect ${code} 10.0.0.1:80`) => Object.assign(new Error(message), { code });

  it.each(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ENETDOWN", "ENOTFOUND"])(
    "%s, thrown directly or as the cause of fetch's TypeError",
    (code) => {
      expect(serverGone(coded(code))).toBe(`connect ${code} 10.0.0.1:80`);
      expect(serverGone(new TypeError("fetch failed", { cause: coded(code) }))).toBe(`connect ${code} 10.0.0.1:80`);
    },
  );

  it.each(["ECONNRESET", "ETIMEDOUT", "EAI_AGAIN", "EPIPE", "UND_ERR_SOCKET"])("not %s: those are retried", (code) => {
    expect(serverGone(coded(code))).toBeUndefined();
    expect(serverGone(new TypeError("fetch failed", { cause: coded(code) }))).toBeUndefined();
  });

  it("not an error without a code (a browser's `Failed to fetch`), nor a non-error", () => {
    expect(serverGone(new TypeError("Failed to fetch"))).toBeUndefined();
    expect(serverGone("ECONNREFUSED")).toBeUndefined();
    expect(serverGone({ code: "ECONNREFUSED" })).toBeUndefined();
  });

  it("an AggregateError of every address tried, without a message of its own, is described by its parts", () => {
    const all = Object.assign(
      new AggregateError([coded("ECONNREFUSED", "connect ECONNREFUSED ::1:80"), coded("ECONNREFUSED")], ""),
      { code: "ECONNREFUSED" },
    );
    expect(serverGone(all)).toBe("connect ECONNREFUSED ::1:80; connect ECONNREFUSED 10.0.0.1:80");
  });
});
