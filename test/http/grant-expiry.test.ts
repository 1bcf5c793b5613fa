// SSE streams end when the grant they were opened with lapses (AuthGrant.expiresAt, AuthGrant.whenRevoked): with `retry`, resumable.
import { afterEach, describe, expect, it } from "vitest";
import type { AuthGrant } from "../../runtime/rpc/transport.js";
import { MAX_TIMER_MS } from "../../runtime/rpc/limits.js";
import { initialize, post, readSse, sessionHeaders, startServer, type RunningServer, type SseRead } from "./helpers.js";
import { sleep, until } from "../kit/timing.js";

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** A revocation source as an auth layer keeps one: listeners by credential, ended together. */
class Revocations {
  readonly listeners = new Map<string, Set<() => void>>();

  whenRevoked(credential: string): (listener: () => void) => () => void {
    return (listener) => {
      const set = this.listeners.get(credential) ?? new Set();
      this.listeners.set(credential, set);
      const entry = () => listener();
      set.add(entry);
      return () => set.delete(entry);
    };
  }

  revoke(credential: string): void {
    for (const listener of [...(this.listeners.get(credential) ?? [])]) listener();
  }

  /** Subscriptions still held for a credential. */
  held(credential: string): number {
    return this.listeners.get(credential)?.size ?? 0;
  }
}

/** A server whose bearer credentials map to the grants a test hands out (principal "ann" unless said otherwise). */
async function serverWithGrants(grants: Map<string, AuthGrant>, options: { stateless?: boolean } = {}) {
  server = await startServer({
    retryMs: 300,
    ...options,
    authenticate: (req) => grants.get(String(req.headers.authorization ?? "").replace(/^Bearer /, "")),
  });
  return server;
}

const auth = (credential: string) => ({ authorization: `Bearer ${credential}` });

function openGet(url: string, sid: string, credential: string, lastEventId?: string): Promise<Response> {
  return fetch(url, {
    headers: {
      accept: "text/event-stream",
      ...sessionHeaders(sid),
      ...auth(credential),
      ...(lastEventId === undefined ? {} : { "last-event-id": lastEventId }),
    },
  });
}

/** Reads a stream in the background; the returned record fills up as events come and says when it ended. */
function follow(res: Response): SseRead {
  const read: SseRead = { events: [], messages: [], ended: false };
  void readSse(res, undefined, read);
  return read;
}

const ended = (read: SseRead) => until(() => read.ended, 5_000, "the stream did not end");

describe("a grant's expiry", () => {
  it("ends the standalone GET stream with retry; a GET with a fresh grant opens it again", async () => {
    const grants = new Map<string, AuthGrant>([["long", { principal: "ann" }]]);
    const s = await serverWithGrants(grants);
    const sid = await initialize(s.url, auth("long"));
    grants.set("short", { principal: "ann", expiresAt: Date.now() + 300 });
    const res = await openGet(s.url, sid, "short");
    expect(res.status).toBe(200);
    const read = follow(res);
    await ended(read);
    expect(read.retry).toBe(300);
    const transport = s.responder.transports[0]!;
    expect(transport.standaloneConnected).toBe(false);
    expect(transport.isClosed).toBe(false);

    const again = await openGet(s.url, sid, "long");
    expect(again.status).toBe(200);
    const live = follow(again);
    await post(
      s.url,
      { jsonrpc: "2.0", id: 1, method: "broadcast", params: { text: "hi" } },
      {
        ...sessionHeaders(sid),
        ...auth("long"),
      },
    ).then((r) => r.arrayBuffer());
    await until(() => live.messages.length === 1);
    expect(live.messages[0]).toMatchObject({ method: "notifications/message", params: { text: "hi" } });
    expect(live.ended).toBe(false);
  });

  it("ends a POST reply stream as a normal close: the request goes on and the client resumes it with a fresh grant", async () => {
    const grants = new Map<string, AuthGrant>([["long", { principal: "ann" }]]);
    const s = await serverWithGrants(grants);
    const sid = await initialize(s.url, auth("long"));
    grants.set("short", { principal: "ann", expiresAt: Date.now() + 300 });
    const res = await post(
      s.url,
      { jsonrpc: "2.0", id: 7, method: "wait", params: { gate: "g", before: 1, after: 2 } },
      { ...sessionHeaders(sid), ...auth("short") },
    );
    const first = follow(res);
    await ended(first);
    expect(first.retry).toBe(300);
    expect(first.messages.map((m) => m.method)).toEqual(["notifications/progress"]);

    // Not a cancellation: the handler still runs, its messages wait in the store.
    const transport = s.responder.transports[0]!;
    expect(transport.pendingRequestCount).toBe(1);
    s.responder.open("g");
    await until(() => transport.pendingRequestCount === 0);
    const resumed = await openGet(s.url, sid, "long", first.events.at(-1)!.id);
    expect(resumed.status).toBe(200);
    const rest = await readSse(resumed);
    expect(rest.messages.at(-1)).toEqual({ jsonrpc: "2.0", id: 7, result: { done: 3 } });
  });

  it("a resumed connection ends at the expiry of the grant that resumed it", async () => {
    const grants = new Map<string, AuthGrant>([["long", { principal: "ann" }]]);
    const s = await serverWithGrants(grants);
    const sid = await initialize(s.url, auth("long"));
    const res = await post(
      s.url,
      { jsonrpc: "2.0", id: 8, method: "wait", params: { gate: "g2", before: 1, after: 1 } },
      { ...sessionHeaders(sid), ...auth("long") },
    );
    const first = await readSse(res, (r) => r.messages.length === 1);
    grants.set("short", { principal: "ann", expiresAt: Date.now() + 300 });
    const resumed = follow(await openGet(s.url, sid, "short", first.events.at(-1)!.id));
    await ended(resumed);
    expect(resumed.retry).toBe(300);
    expect(s.responder.transports[0]!.pendingRequestCount).toBe(1);
    s.responder.open("g2");
  });

  it("a grant that expired already: the stream opens and ends at once, primed, so it can be resumed", async () => {
    const grants = new Map<string, AuthGrant>([["long", { principal: "ann" }]]);
    const s = await serverWithGrants(grants);
    const sid = await initialize(s.url, auth("long"));
    grants.set("stale", { principal: "ann", expiresAt: Date.now() - 1 });
    const read = await readSse(await openGet(s.url, sid, "stale"));
    expect(read.ended).toBe(true);
    expect(read.events.length).toBe(1);
    expect(read.retry).toBe(300);
  });

  it("an expiry beyond the longest timer keeps the stream open (no early firing)", async () => {
    const grants = new Map<string, AuthGrant>([
      ["long", { principal: "ann" }],
      ["far", { principal: "ann", expiresAt: Date.now() + MAX_TIMER_MS + 60_000 }],
    ]);
    const s = await serverWithGrants(grants);
    const sid = await initialize(s.url, auth("long"));
    const live = follow(await openGet(s.url, sid, "far"));
    // Time for a timer that overflowed (Node fires those after 1 ms) to have ended the stream.
    await sleep(50);
    await post(
      s.url,
      { jsonrpc: "2.0", id: 2, method: "broadcast", params: { text: "still" } },
      {
        ...sessionHeaders(sid),
        ...auth("long"),
      },
    ).then((r) => r.arrayBuffer());
    await until(() => live.messages.length === 1 || live.ended);
    expect(live.ended).toBe(false);
    expect(live.messages[0]).toMatchObject({ params: { text: "still" } });
  });

  it("stateless: the reply stream just ends (there is nothing to resume)", async () => {
    const grants = new Map<string, AuthGrant>([["short", { principal: "ann", expiresAt: Date.now() + 300 }]]);
    const s = await serverWithGrants(grants, { stateless: true });
    const res = await post(
      s.url,
      { jsonrpc: "2.0", id: 9, method: "wait", params: { gate: "g3", before: 1, after: 1 } },
      auth("short"),
    );
    const read = follow(res);
    await ended(read);
    expect(read.messages.map((m) => m.method)).toEqual(["notifications/progress"]);
    expect(read.retry).toBeUndefined();
    s.responder.open("g3");
  });
});

describe("a grant's revocation", () => {
  it("ends every stream opened with the grant, GET and POST, and no other; the subscriptions go with the connections", async () => {
    const revocations = new Revocations();
    const grants = new Map<string, AuthGrant>([
      ["long", { principal: "ann" }],
      ["doomed", { principal: "ann", whenRevoked: revocations.whenRevoked("doomed") }],
      ["other", { principal: "ann", whenRevoked: revocations.whenRevoked("other") }],
    ]);
    const s = await serverWithGrants(grants);
    const sid = await initialize(s.url, auth("long"));
    const get = follow(await openGet(s.url, sid, "doomed"));
    const call = (id: number, credential: string, gate: string) =>
      post(
        s.url,
        { jsonrpc: "2.0", id, method: "wait", params: { gate, before: 1, after: 1 } },
        { ...sessionHeaders(sid), ...auth(credential) },
      ).then(follow);
    const doomedCall = await call(3, "doomed", "r1");
    const otherCall = await call(4, "other", "r2");
    await until(() => doomedCall.messages.length === 1 && otherCall.messages.length === 1);
    expect([revocations.held("doomed"), revocations.held("other")]).toEqual([2, 1]);

    revocations.revoke("doomed");
    await ended(get);
    await ended(doomedCall);
    expect([get.retry, doomedCall.retry]).toEqual([300, 300]);
    expect(revocations.held("doomed")).toBe(0);

    // The other grant's stream carries on to its response, then lets go of its subscription.
    s.responder.open("r2");
    await ended(otherCall);
    expect(otherCall.messages.at(-1)).toEqual({ jsonrpc: "2.0", id: 4, result: { done: 2 } });
    await until(() => revocations.held("other") === 0);
    s.responder.open("r1");
  });

  it("a grant revoked while subscribing (its listener called at once) still ends its stream", async () => {
    const grants = new Map<string, AuthGrant>([
      ["long", { principal: "ann" }],
      [
        "gone",
        {
          principal: "ann",
          whenRevoked: (listener) => {
            listener();
            return () => undefined;
          },
        },
      ],
    ]);
    const s = await serverWithGrants(grants);
    const sid = await initialize(s.url, auth("long"));
    const read = await readSse(await openGet(s.url, sid, "gone"));
    expect(read.ended).toBe(true);
    expect(read.retry).toBe(300);
  });
});
