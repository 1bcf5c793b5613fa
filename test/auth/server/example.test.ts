// The HTTP example protected by an issuer (AUTH_ISSUER): in process, and as `node dist/examples/http-server.js` with the environment variables.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StreamableHttpClientTransport } from "../../../runtime/transports/http/client/transport.js";
import { startExampleHttpServer } from "../../../examples/http-server.js";
import { builtExample } from "../../conformance/helpers.js";
import { follow } from "../../kit/streams.js";
import { initializeMessage, post } from "../../http/helpers.js";
import { freePort } from "../../kit/net.js";
import { bearer, parseChallenge, startAuthorizationServer, type TestAuthorizationServer } from "./helpers.js";
import { clientSession } from "../../kit/mcp-sessions.js";

let as: TestAuthorizationServer;
beforeAll(async () => {
  as = await startAuthorizationServer();
});
afterAll(async () => {
  await as?.stop();
});

/** What a client of the protected example sees: 401 and metadata without a token; tools with one. */
async function checkProtected(url: string, requiredScope?: string): Promise<void> {
  const origin = new URL(url).origin;
  const refused = await post(url, initializeMessage());
  expect(refused.status).toBe(401);
  const challenge = parseChallenge(refused.headers.get("www-authenticate"));
  expect(challenge.resource_metadata).toBe(`${origin}/.well-known/oauth-protected-resource/mcp`);
  expect(challenge.scope).toBe(requiredScope);
  for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
    expect(await (await fetch(origin + path)).json()).toMatchObject({
      resource: url,
      authorization_servers: [as.issuer],
    });
  }
  // A token for another resource is refused: the audience check is on.
  expect((await post(url, initializeMessage(), bearer(await as.mint("http://127.0.0.1:1/mcp")))).status).toBe(401);
  const token = await as.mint(url, { scope: requiredScope ?? "mcp:tools" });
  const client = clientSession({ clientInfo: { name: "example-auth", version: "1" } });
  await client.connect(new StreamableHttpClientTransport({ url, headers: bearer(token) }));
  try {
    expect(await client.request("tools/call", { name: "add", arguments: { a: 2, b: 3 } })).toMatchObject({
      content: [{ type: "text", text: "5" }],
    });
    const seen: number[] = [];
    const counted = await client.request(
      "tools/call",
      { name: "slow_count", arguments: { count: 2, delayMs: 1 } },
      { onProgress: (p) => seen.push(p.progress) },
    );
    expect(counted).toMatchObject({ content: [{ type: "text", text: "done 2" }] });
    expect(seen).toEqual([1, 2]);
  } finally {
    await client.close();
  }
}

describe("examples/http-server.ts with an issuer", () => {
  it("in process: 401 with the challenge, metadata at both well-known URLs, tools with a token for it", async () => {
    const running = await startExampleHttpServer(0, { authIssuer: as.issuer });
    try {
      await checkProtected(running.url);
    } finally {
      await running.stop();
    }
  });

  it("an issuer whose metadata cannot be found stops the start", async () => {
    await expect(startExampleHttpServer(0, { authIssuer: `${as.issuer}/no-such-tenant` })).rejects.toThrow(
      /No authorization server metadata/,
    );
  });

  it("PORT=N AUTH_ISSUER=URL AUTH_SCOPES=mcp:tools node dist/examples/http-server.js", async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [builtExample("http-server")], {
      env: { ...process.env, PORT: String(port), AUTH_ISSUER: as.issuer, AUTH_SCOPES: "mcp:tools" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    try {
      const line = await follow(child.stdout!)(/listening on \S+ \(bearer tokens from \S+\)/);
      const url = `http://127.0.0.1:${port}/mcp`;
      expect(line).toBe(`listening on ${url} (bearer tokens from ${as.issuer})`);
      await checkProtected(url, "mcp:tools");
    } finally {
      child.kill("SIGTERM");
      await exited;
    }
  });
});
