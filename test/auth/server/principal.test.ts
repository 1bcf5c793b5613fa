// The verified token's subject is the session's principal: sessions bound to it, other principals see 404, our client end to end.
import { describe, expect, it } from "vitest";
import { jwtVerifier } from "../../../runtime/auth/server/index.js";
import { HttpStatusError, StreamableHttpClientTransport } from "../../../runtime/transports/http-client.js";
import { post, readSse, sessionHeaders } from "../../http/helpers.js";
import { until } from "../../kit/timing.js";
import { bearer, callTool, openSession, startProtectedServer, useAuthServers } from "./helpers.js";
import { clientSession } from "../../kit/mcp-sessions.js";

const env = useAuthServers((as) => jwtVerifier({ issuer: as.issuer }));

const whoami = (body: unknown) =>
  JSON.parse((body as { result: { content: { text: string }[] } }).result.content[0]!.text) as Record<string, unknown>;

describe("sessions bound to the token's subject", () => {
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
    expect(env.rs.mcp.sessions.get(sid)?.principal).toBe("batch-job");
    expect(whoami((await callTool(env.rs.url, sid, machine, "whoami")).body)).toEqual({
      principal: "batch-job",
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

describe("our HTTP client with a bearer token", () => {
  it("initializes, calls tools over POST and keeps its GET stream; an expired token then gets 401", async () => {
    let token = await env.as.mint(env.rs.url, { sub: "erin" });
    const client = clientSession({ clientInfo: { name: "auth-test", version: "1" } });
    await client.connect(new StreamableHttpClientTransport({ url: env.rs.url, headers: () => bearer(token) }));
    try {
      const result = await client.request("tools/call", { name: "whoami", arguments: {} });
      expect(whoami({ result })).toEqual({ principal: "erin", scopes: ["mcp:tools"], sub: "erin" });
      const sessions = [...env.rs.mcp.sessions.values()].filter((t) => t.principal === "erin");
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
