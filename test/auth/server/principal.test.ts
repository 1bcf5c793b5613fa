// The verified token's principal (sub:<sub>, else client:<client_id>, issuer-qualified with several issuers): sessions and tasks bound to it, our client end to end.
import { describe, expect, it } from "vitest";
import {
  InvalidTokenError,
  jwtVerifier,
  type TokenVerifier,
  type VerifiedToken,
} from "../../../runtime/auth/server/index.js";
import type { JsonObject } from "../../../runtime/rpc/jsonrpc.js";
import { TaskReceiver } from "../../../runtime/eras/2025-11-25/tasks/receiver.js";
import { HttpStatusError, StreamableHttpClientTransport } from "../../../runtime/transports/http/client/transport.js";
import { initializeMessage, post, readSse, sessionHeaders } from "../../http/helpers.js";
import { gate, until } from "../../kit/timing.js";
import {
  bearer,
  callTool,
  openSession,
  parseChallenge,
  startAuthorizationServer,
  startProtectedServer,
  useAuthServers,
} from "./helpers.js";
import { clientSession } from "../../kit/mcp-sessions.js";

const env = useAuthServers((as) => jwtVerifier({ issuer: as.issuer }));

const whoami = (body: unknown) =>
  JSON.parse((body as { result: { content: { text: string }[] } }).result.content[0]!.text) as Record<string, unknown>;

describe("sessions bound to the token's principal", () => {
  it("another subject's valid token naming the session gets 404 on POST, GET and DELETE; the owner's session lives on", async () => {
    const alice = await env.as.mint(env.rs.url, { sub: "alice" });
    const bob = await env.as.mint(env.rs.url, { sub: "bob" });
    const sid = await openSession(env.rs.url, alice);
    expect(
      (await post(env.rs.url, { jsonrpc: "2.0", id: 1, method: "ping" }, { ...sessionHeaders(sid), ...bearer(bob) }))
        .status,
    ).toBe(404);
    expect(
      (await fetch(env.rs.url, { headers: { accept: "text/event-stream", ...sessionHeaders(sid), ...bearer(bob) } }))
        .status,
    ).toBe(404);
    expect(
      (await fetch(env.rs.url, { method: "DELETE", headers: { ...sessionHeaders(sid), ...bearer(bob) } })).status,
    ).toBe(404);
    // A fresh token of the same subject (after a refresh, say) is the same principal.
    const again = await env.as.mint(env.rs.url, { sub: "alice", jti: "another" });
    const ping = await post(
      env.rs.url,
      { jsonrpc: "2.0", id: 2, method: "ping" },
      { ...sessionHeaders(sid), ...bearer(again) },
    );
    expect(ping.status).toBe(200);
    expect((await readSse(ping)).messages.at(-1)).toMatchObject({ id: 2, result: {} });
  });

  it("a client_credentials token without sub is its client; the claims reach the handler", async () => {
    const machine = await env.as.mint(env.rs.url, { client_id: "batch-job", scope: "mcp:tools" }, { without: ["sub"] });
    const sid = await openSession(env.rs.url, machine);
    expect(env.rs.mcp.sessions.get(sid)?.principal).toBe("client:batch-job");
    expect(whoami((await callTool(env.rs.url, sid, machine, "whoami")).body)).toEqual({
      principal: "client:batch-job",
      scopes: ["mcp:tools"],
      sub: null,
    });
  });

  it("the principal option maps a token to its principal (e.g. issuer and subject together)", async () => {
    const custom = await startProtectedServer(env.as.issuer, jwtVerifier({ issuer: env.as.issuer }), {
      principal: (t) => `${t.issuer}#${t.subject}`,
    });
    try {
      const sid = await openSession(custom.url, await env.as.mint(custom.url));
      expect(custom.mcp.sessions.get(sid)?.principal).toBe(`${env.as.issuer}#alice`);
    } finally {
      await custom.stop();
    }
  });
});

/** One JSON-RPC request over raw HTTP on a session: the HTTP status, and the answer when there is one. */
async function rpc(
  url: string,
  sid: string,
  token: string,
  id: number,
  method: string,
  params: JsonObject,
): Promise<{ status: number; answer?: JsonObject }> {
  const res = await post(url, { jsonrpc: "2.0", id, method, params }, { ...sessionHeaders(sid), ...bearer(token) });
  if (res.status !== 200) {
    await res.body?.cancel();
    return { status: res.status };
  }
  return { status: 200, answer: (await readSse(res)).messages.at(-1) };
}

describe("subjects and clients are different principals", () => {
  it("a token naming client_id alice (no sub) reaches neither the session nor the tasks of the subject alice", async () => {
    const hold = gate();
    const rs = await startProtectedServer(env.as.issuer, jwtVerifier({ issuer: env.as.issuer }), {
      init: { tasks: new TaskReceiver() },
    });
    rs.server.tool("slow", { taskSupport: "optional" }, async () => {
      await hold.promise;
      return "done";
    });
    try {
      const user = await env.as.mint(rs.url, { sub: "alice", client_id: "some-app" });
      const client = await env.as.mint(rs.url, { client_id: "alice" }, { without: ["sub"] });
      const sid = await openSession(rs.url, user);
      const created = await rpc(rs.url, sid, user, 1, "tools/call", { name: "slow", arguments: {}, task: {} });
      const taskId = (created.answer?.result as { task?: { taskId?: string } } | undefined)?.task?.taskId;
      expect(typeof taskId).toBe("string");

      // The subject's session is not the client's: 404 on POST, GET and DELETE, as for a session that does not exist.
      expect((await rpc(rs.url, sid, client, 2, "ping", {})).status).toBe(404);
      const get = await fetch(rs.url, {
        headers: { accept: "text/event-stream", ...sessionHeaders(sid), ...bearer(client) },
      });
      expect(get.status).toBe(404);
      await get.body?.cancel();
      const del = await fetch(rs.url, { method: "DELETE", headers: { ...sessionHeaders(sid), ...bearer(client) } });
      expect(del.status).toBe(404);

      // Nor are its tasks, from a session of its own: unknown to tasks/get, absent from tasks/list.
      const own = await openSession(rs.url, client);
      const peek = await rpc(rs.url, own, client, 3, "tasks/get", { taskId: taskId! });
      expect(peek.answer).toMatchObject({ id: 3, error: { code: -32602 } });
      expect((await rpc(rs.url, own, client, 4, "tasks/list", {})).answer).toMatchObject({
        id: 4,
        result: { tasks: [] },
      });
      expect([rs.mcp.sessions.get(sid)?.principal, rs.mcp.sessions.get(own)?.principal]).toEqual([
        "sub:alice",
        "client:alice",
      ]);

      // The subject still has both.
      expect((await rpc(rs.url, sid, user, 5, "tasks/get", { taskId: taskId! })).answer).toMatchObject({
        result: { taskId, status: "working" },
      });
    } finally {
      hold.open();
      await rs.stop();
    }
  });

  it("with two authorization servers the issuer qualifies the principal: equal subjects of two issuers are two principals", async () => {
    const other = await startAuthorizationServer();
    const verifiers = [jwtVerifier({ issuer: env.as.issuer }), jwtVerifier({ issuer: other.issuer })];
    // Either issuer's tokens: the first verifier that accepts one decides.
    const either: TokenVerifier = {
      async verify(token, context) {
        let refusal: unknown;
        for (const verifier of verifiers) {
          try {
            return await verifier.verify(token, context);
          } catch (error) {
            refusal = error;
          }
        }
        throw refusal;
      },
    };
    const rs = await startProtectedServer(env.as.issuer, either, {
      authorizationServers: [env.as.issuer, other.issuer],
    });
    try {
      const mine = await env.as.mint(rs.url, { sub: "alice" });
      const theirs = await other.mint(rs.url, { sub: "alice" });
      const sid = await openSession(rs.url, mine);
      const sid2 = await openSession(rs.url, theirs);
      expect(rs.mcp.sessions.get(sid)?.principal).toBe(`${env.as.issuer}#sub:alice`);
      expect(rs.mcp.sessions.get(sid2)?.principal).toBe(`${other.issuer}#sub:alice`);
      expect((await rpc(rs.url, sid, theirs, 1, "ping", {})).status).toBe(404);
      expect((await rpc(rs.url, sid, mine, 2, "ping", {})).status).toBe(200);
    } finally {
      await rs.stop();
      await other.stop();
    }
  });

  it("with two authorization servers a token whose verifier names no issuer is refused: it could be either's", async () => {
    const anonymous: VerifiedToken = { subject: "alice", scopes: [], audience: [], claims: {} };
    const rs = await startProtectedServer(
      env.as.issuer,
      {
        verify: async (token) => {
          if (token !== "good") throw new InvalidTokenError("unknown");
          return anonymous;
        },
      },
      { authorizationServers: [env.as.issuer, "https://other.example"] },
    );
    try {
      const res = await post(rs.url, initializeMessage(), bearer("good"));
      expect(res.status).toBe(401);
      expect(parseChallenge(res.headers.get("www-authenticate")).error_description).toBe(
        "The access token names no issuer",
      );
      expect(rs.mcp.sessions.size).toBe(0);
    } finally {
      await rs.stop();
    }
  });
});

describe("our HTTP client with a bearer token", () => {
  it("initializes, calls tools over POST and keeps its GET stream; an expired token then gets 401", async () => {
    let token = await env.as.mint(env.rs.url, { sub: "erin" });
    const client = clientSession({ clientInfo: { name: "auth-test", version: "1" } });
    await client.connect(new StreamableHttpClientTransport({ url: env.rs.url, headers: () => bearer(token) }));
    try {
      const result = await client.request("tools/call", { name: "whoami", arguments: {} });
      expect(whoami({ result })).toEqual({ principal: "sub:erin", scopes: ["mcp:tools"], sub: "erin" });
      const sessions = [...env.rs.mcp.sessions.values()].filter((t) => t.principal === "sub:erin");
      expect(sessions).toHaveLength(1);
      // The standalone GET carries the token as well: it is open on erin's session.
      await until(() => sessions[0]!.standaloneConnected);
      token = await env.as.mint(env.rs.url, { sub: "erin", exp: Math.floor(Date.now() / 1000) - 60 });
      const failure = await client.request("tools/list", {}).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(HttpStatusError);
      expect((failure as HttpStatusError).status).toBe(401);
    } finally {
      await client.close();
    }
  });
});
