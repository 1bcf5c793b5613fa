// Host/Origin allow-lists (DNS rebinding) and principal-bound sessions on the HTTP server.
import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { checkHostAndOrigin } from "../../runtime/transports/http/server/security.js";
import { initialize, initializeMessage, post, readBody, readSse, sessionHeaders, serverPerTest } from "./helpers.js";

const start = serverPerTest();

/** fetch forbids setting Host, so a raw node:http request sends a forged one. */
function postWithHost(port: number, host: string, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method: "POST",
        headers: {
          host,
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          "content-length": Buffer.byteLength(data),
        },
      },
      (res) => void readBody(res).then(resolve, reject),
    );
    req.on("error", reject);
    req.end(data);
  });
}

describe("DNS rebinding protection (on by default on 127.0.0.1)", () => {
  it("rejects a foreign Host with 403 and keeps serving", async () => {
    const server = await start();
    const bad = await postWithHost(server.port, "evil.example:80", initializeMessage());
    expect(bad.status).toBe(403);
    expect(JSON.parse(bad.body)).toMatchObject({ jsonrpc: "2.0", error: { message: expect.stringContaining("Host") } });
    const good = await postWithHost(server.port, `localhost:${server.port}`, initializeMessage());
    expect(good.status).toBe(200);
    await initialize(server.url);
  });

  it("rejects a foreign Origin with 403, accepts a loopback one and none", async () => {
    const server = await start();
    const bad = await post(server.url, initializeMessage(), { origin: "http://evil.example" });
    expect(bad.status).toBe(403);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain("Origin");
    const nullOrigin = await post(server.url, initializeMessage(), { origin: "null" });
    expect(nullOrigin.status).toBe(403);
    const ok = await post(server.url, initializeMessage(), { origin: `http://localhost:${server.port}` });
    expect(ok.status).toBe(200);
    await readSse(ok);
    await initialize(server.url);
  });

  it("uses explicit allow-lists when given", async () => {
    const server = await start({
      allowedHosts: [`127.0.0.1:${0}`, "127.0.0.1"],
      allowedOrigins: ["https://app.example"],
    });
    const loop = await post(server.url, initializeMessage(), { origin: "http://localhost" });
    expect(loop.status).toBe(403);
    const app = await post(server.url, initializeMessage(), { origin: "https://app.example" });
    expect(app.status).toBe(200);
    await readSse(app);
    const localhostHost = await postWithHost(server.port, "localhost", initializeMessage());
    expect(localhostHost.status).toBe(403);
  });

  it("can be turned off", async () => {
    const server = await start({ dnsRebindingProtection: false });
    const res = await postWithHost(server.port, "evil.example", initializeMessage());
    expect(res.status).toBe(200);
  });

  it("checkHostAndOrigin: auto mode leaves non-loopback binds alone, port-qualified entries match exactly", () => {
    expect(checkHostAndOrigin({ host: "evil.example" }, {}, "10.0.0.5")).toBeUndefined();
    expect(checkHostAndOrigin({ host: "evil.example" }, {}, "127.0.0.1")?.status).toBe(403);
    expect(checkHostAndOrigin({ host: "[::1]:8080" }, {}, "::1")).toBeUndefined();
    expect(
      checkHostAndOrigin({ host: "api.example:8443" }, { allowedHosts: ["api.example:8443"] }, "10.0.0.5"),
    ).toBeUndefined();
    expect(
      checkHostAndOrigin({ host: "api.example:9000" }, { allowedHosts: ["api.example:8443"] }, "10.0.0.5")?.status,
    ).toBe(403);
    // Without an origin list, pages of an allowed host may call it.
    expect(
      checkHostAndOrigin(
        { host: "api.example", origin: "https://api.example" },
        { allowedHosts: ["api.example"] },
        "10.0.0.5",
      ),
    ).toBeUndefined();
    expect(
      checkHostAndOrigin(
        { host: "api.example", origin: "https://evil.example" },
        { allowedHosts: ["api.example"] },
        "10.0.0.5",
      )?.status,
    ).toBe(403);
  });
});

describe("authentication and principal-bound sessions", () => {
  const authenticate = (req: { headers: Readonly<Record<string, string | undefined>> }) => {
    const auth = req.headers["authorization"];
    if (auth === "Bearer boom") throw new Error("auth backend down");
    return auth?.startsWith("Bearer ") ? auth.slice(7) : undefined;
  };

  it("401 without credentials (and when the hook throws); the principal reaches InboundInfo", async () => {
    const server = await start({ authenticate });
    expect((await post(server.url, initializeMessage())).status).toBe(401);
    expect((await post(server.url, initializeMessage(), { authorization: "Bearer boom" })).status).toBe(401);
    const sid = await initialize(server.url, { authorization: "Bearer alice" });
    const echo = await readSse(
      await post(
        server.url,
        { jsonrpc: "2.0", id: 1, method: "echo" },
        { ...sessionHeaders(sid), authorization: "Bearer alice" },
      ),
    );
    expect(echo.messages.at(-1)).toMatchObject({ result: { principal: "alice", sessionId: sid } });
    expect(server.responder.transports[0].principal).toBe("alice");
  });

  it("another principal presenting the session id gets 404, as if it did not exist", async () => {
    const server = await start({ authenticate });
    const sid = await initialize(server.url, { authorization: "Bearer alice" });
    const asBob = await post(
      server.url,
      { jsonrpc: "2.0", id: 1, method: "echo" },
      { ...sessionHeaders(sid), authorization: "Bearer bob" },
    );
    expect(asBob.status).toBe(404);
    const bobGet = await fetch(server.url, {
      headers: { accept: "text/event-stream", authorization: "Bearer bob", ...sessionHeaders(sid) },
    });
    expect(bobGet.status).toBe(404);
    const bobDelete = await fetch(server.url, {
      method: "DELETE",
      headers: { authorization: "Bearer bob", ...sessionHeaders(sid) },
    });
    expect(bobDelete.status).toBe(404);
    // Alice's session survived Bob's attempts.
    const asAlice = await post(
      server.url,
      { jsonrpc: "2.0", id: 2, method: "echo" },
      { ...sessionHeaders(sid), authorization: "Bearer alice" },
    );
    expect(asAlice.status).toBe(200);
    await readSse(asAlice);
  });

  it("authRequired: false lets anonymous callers in, bound to no principal", async () => {
    const server = await start({ authenticate, authRequired: false });
    const sid = await initialize(server.url);
    const withAlice = await post(
      server.url,
      { jsonrpc: "2.0", id: 1, method: "echo" },
      { ...sessionHeaders(sid), authorization: "Bearer alice" },
    );
    expect(withAlice.status).toBe(404);
    const anon = await readSse(await post(server.url, { jsonrpc: "2.0", id: 2, method: "echo" }, sessionHeaders(sid)));
    expect(anon.messages.at(-1)).toMatchObject({ result: { principal: null } });
  });
});
