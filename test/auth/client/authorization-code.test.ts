// The interactive OAuth client end to end against a real authorization server and protected MCP server on 127.0.0.1.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  FileOAuthStore,
  InMemoryOAuthStore,
  OAuthClient,
  OAuthError,
  type OAuthClientOptions,
  type OAuthClientProvider,
} from "../../../runtime/auth/index.js";
import { HttpStatusError } from "../../../runtime/transports/http/client/transport.js";
import { tempDir } from "../../kit/paths.js";
import { until } from "../../kit/timing.js";
import {
  REDIRECT,
  connectWith,
  expireSoon,
  headlessUser,
  startWorld,
  type World,
  type WorldOptions,
} from "./helpers.js";
import { closeAfterEach } from "../../kit/cleanup.js";

let world: World | undefined;
const cleanup = closeAfterEach(async () => {
  await world?.stop();
  world = undefined;
});

/** An OAuthClient whose "user" follows the authorization URL headlessly. */
function userClient(provider: Partial<OAuthClientProvider> = {}, options: OAuthClientOptions = {}): OAuthClient {
  const oauth: OAuthClient = new OAuthClient(
    {
      clientMetadata: { client_name: "test", redirect_uris: [REDIRECT] },
      redirectToAuthorization: headlessUser(() => oauth),
      ...provider,
    },
    options,
  );
  return oauth;
}

async function connected(oauth: OAuthClient, url = world!.rs) {
  const client = await connectWith(url, oauth);
  cleanup(() => client.peer.close());
  return client;
}

const textOf = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;
const asPaths = () => world!.requests.filter((r) => r.server === "as").map((r) => `${r.method} ${r.path}`);

describe("authorization code flow", () => {
  it("discovers, registers, sends the user with PKCE S256, state and resource, exchanges the code and calls a tool", async () => {
    world = await startWorld({ challengeScope: "mcp:read" });
    const client = await connected(userClient());
    expect(textOf(await client.callTool({ name: "read", arguments: {} }))).toBe("read by client-1 with mcp:read");

    expect(asPaths()).toEqual([
      "GET /.well-known/oauth-authorization-server",
      "POST /register",
      "GET /authorize",
      "POST /token",
    ]);
    const [authorize] = world.authorizations;
    expect(authorize).toMatchObject({
      response_type: "code",
      client_id: "client-1",
      redirect_uri: REDIRECT,
      code_challenge_method: "S256",
      resource: world.rs,
      scope: "mcp:read",
    });
    expect(authorize!.state!.length).toBeGreaterThanOrEqual(32);
    expect(authorize!.code_challenge!.length).toBe(43);
    expect(world.registered[0]!.metadata).toMatchObject({
      client_name: "test",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    });
    const token = world.requests.find((r) => r.path === "/token")!;
    expect(token.body).toMatchObject({
      grant_type: "authorization_code",
      client_id: "client-1",
      redirect_uri: REDIRECT,
      resource: world.rs,
    });
    expect(String(token.body!.code_verifier).length).toBeGreaterThanOrEqual(43);
    // Every request to the MCP server after the first 401 carried the token.
    const posts = world.requests.filter((r) => r.server === "rs" && r.method === "POST");
    expect(posts[0]!.headers.authorization).toBeUndefined();
    expect(posts.slice(1).every((r) => /^Bearer at-/.test(r.headers.authorization ?? ""))).toBe(true);
  });

  it.each<[string, WorldOptions, string | undefined]>([
    ["the challenge's scope", { challengeScope: "mcp:read mcp:list", prmScopes: ["other"] }, "mcp:read mcp:list"],
    ["every scope in scopes_supported when the challenge names none", { prmScopes: ["a", "b", "c"] }, "a b c"],
    ["no scope parameter when neither names any", {}, undefined],
  ])("asks for %s", async (_name, options, scope) => {
    world = await startWorld(options);
    await connected(userClient());
    expect(world.authorizations[0]!.scope).toBe(scope);
  });

  it("adds offline_access where the authorization server lists it, and only there", async () => {
    world = await startWorld({
      challengeScope: "mcp:read",
      metadata: (d) => ({ ...d, scopes_supported: ["mcp:read", "offline_access"] }),
    });
    await connected(userClient());
    expect(world.authorizations[0]!.scope).toBe("mcp:read offline_access");
    await world.stop();
    world = await startWorld({
      challengeScope: "mcp:read",
      metadata: (d) => ({ ...d, scopes_supported: ["mcp:read"] }),
    });
    await connected(userClient());
    expect(world.authorizations[0]!.scope).toBe("mcp:read");
  });
});

describe("registration, in the spec's order", () => {
  it("uses pre-registered credentials (client_secret_basic by default) and registers nothing", async () => {
    world = await startWorld({ clients: { "pre-registered": "pre-secret-value" } });
    await connected(
      userClient(
        { clientInformation: { client_id: "pre-registered", client_secret: "pre-secret-value" } },
        { issuer: world.as },
      ),
    );
    expect(asPaths()).not.toContain("POST /register");
    const token = world.requests.find((r) => r.path === "/token")!;
    expect(token.headers.authorization).toBe(
      `Basic ${Buffer.from("pre-registered:pre-secret-value").toString("base64")}`,
    );
  });

  it("uses client_secret_post with a pre-registered secret where the server supports only that", async () => {
    world = await startWorld({
      clients: { pre: "pre-secret-value" },
      metadata: (d) => ({ ...d, token_endpoint_auth_methods_supported: ["client_secret_post"] }),
    });
    await connected(
      userClient({
        clientInformation: (issuer) =>
          issuer === world!.as ? { client_id: "pre", client_secret: "pre-secret-value" } : undefined,
      }),
    );
    const token = world.requests.find((r) => r.path === "/token")!;
    expect(token.headers.authorization).toBeUndefined();
    expect(token.body).toMatchObject({ client_id: "pre", client_secret: "pre-secret-value" });
  });

  it("uses its client ID metadata document URL as client_id where the server supports them", async () => {
    const url = "https://client.example/oauth/metadata.json";
    world = await startWorld({
      clients: { [url]: undefined },
      metadata: (d) => ({ ...d, client_id_metadata_document_supported: true }),
    });
    await connected(userClient({ clientMetadataUrl: url }));
    expect(asPaths()).not.toContain("POST /register");
    expect(world.authorizations[0]!.client_id).toBe(url);
  });

  it("registers dynamically otherwise, as a confidential client where the server takes no public ones, and authenticates as registered", async () => {
    world = await startWorld({
      metadata: (d) => ({ ...d, token_endpoint_auth_methods_supported: ["client_secret_basic"] }),
    });
    await connected(userClient({ clientMetadataUrl: "https://client.example/oauth/metadata.json" }));
    const [client] = world.registered;
    expect(client!.token_endpoint_auth_method).toBe("client_secret_basic");
    const token = world.requests.find((r) => r.path === "/token")!;
    expect(token.headers.authorization).toBe(
      `Basic ${Buffer.from(`${client!.client_id}:${client!.client_secret}`).toString("base64")}`,
    );
  });

  it("keeps a registration per issuer: a second authorization registers no second client", async () => {
    world = await startWorld({ refuseRefresh: true, revoked: (token) => token === first });
    let first = "";
    const oauth = userClient();
    const client = await connected(oauth);
    first = [...world.issued.keys()][0]!;
    await client.listTools();
    expect(world.authorizations).toHaveLength(2);
    expect(world.registered).toHaveLength(1);
  });
});

describe("tokens over time", () => {
  it("refreshes a token about to expire (within refreshSkewMs) before sending, without the user", async () => {
    world = await startWorld();
    const store = new InMemoryOAuthStore();
    const client = await connected(userClient({ store }));
    await expireSoon(store, world.rs, 10_000);
    await client.listTools();
    const refreshes = world.requests.filter((r) => r.body?.grant_type === "refresh_token");
    expect(refreshes).toHaveLength(1);
    expect(refreshes[0]!.body).toMatchObject({ resource: world.rs });
    expect(world.authorizations).toHaveLength(1);
    const last = world.requests.filter((r) => r.server === "rs").at(-1)!;
    expect(last.headers.authorization).toBe(`Bearer ${[...world.issued.keys()].at(-1)}`);
  });

  it("caps the skew at half a token's lifetime: a token valid for 30 s is not renewed before every request", async () => {
    world = await startWorld({ tokenTtl: 30 });
    const client = await connected(userClient({}, { refreshSkewMs: 60_000 }));
    await client.listTools();
    await client.listTools();
    expect(world.requests.filter((r) => r.body?.grant_type === "refresh_token")).toHaveLength(0);
  });

  it("refreshes on a 401 to the token it sent (expired or revoked early), then retries", async () => {
    let revoked = "";
    world = await startWorld({ revoked: (token) => token === revoked });
    const client = await connected(userClient());
    revoked = [...world.issued.keys()][0]!;
    await client.listTools();
    expect(world.requests.filter((r) => r.body?.grant_type === "refresh_token")).toHaveLength(1);
    expect(world.authorizations).toHaveLength(1);
  });

  it("authorizes again when the refresh token is refused", async () => {
    let revoked = "";
    world = await startWorld({ refuseRefresh: true, revoked: (token) => token === revoked });
    const client = await connected(userClient());
    revoked = [...world.issued.keys()][0]!;
    await client.listTools();
    expect(world.requests.filter((r) => r.body?.grant_type === "refresh_token")).toHaveLength(1);
    expect(world.authorizations).toHaveLength(2);
  });

  it("lets one authorization run when many requests meet a 401 at once; the others wait and retry", async () => {
    let revoked = new Set<string>();
    world = await startWorld({ refuseRefresh: true, revoked: (token) => revoked.has(token) });
    const client = await connected(userClient());
    revoked = new Set(world.issued.keys());
    const lists = await Promise.all(Array.from({ length: 8 }, () => client.listTools()));
    expect(lists.every((l) => l.tools.length === 2)).toBe(true);
    expect(world.authorizations).toHaveLength(2);
    expect(world.requests.filter((r) => r.body?.grant_type === "refresh_token")).toHaveLength(1);
  });
});

describe("step-up on 403 insufficient_scope", () => {
  it("authorizes again with the union of the scopes held and the scopes asked for, then retries", async () => {
    world = await startWorld({ challengeScope: "mcp:read", required: { "tools/call:write": ["mcp:write"] } });
    const client = await connected(userClient());
    expect(textOf(await client.callTool({ name: "write", arguments: {} }))).toBe(
      "write by client-1 with mcp:read mcp:write",
    );
    expect(world.authorizations.map((a) => a.scope)).toEqual(["mcp:read", "mcp:read mcp:write"]);
  });

  it.each([
    [undefined, 3],
    [1, 1],
  ])(
    "gives up after maxAuthorizationAttempts (%s) authorizations for one request, with the server's 403 and its headers",
    async (attempts, expected) => {
      world = await startWorld({
        challengeScope: "mcp:read",
        required: { "tools/call:write": ["mcp:admin"] },
        grantedScope: () => "mcp:read",
      });
      const client = await connected(
        userClient({}, attempts === undefined ? {} : { maxAuthorizationAttempts: attempts }),
      );
      const error = await client.callTool({ name: "write", arguments: {} }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HttpStatusError);
      expect((error as HttpStatusError).status).toBe(403);
      expect((error as HttpStatusError).headers["www-authenticate"]).toContain('error="insufficient_scope"');
      // The first authorization was the connection's own; the rest are this request's step-ups.
      expect(world.authorizations).toHaveLength(1 + expected);
    },
  );
});

describe("the user's side", () => {
  it("awaitAuthorization: false fails the request at once with authorization_required; after finishAuthorization the next attempt goes through", async () => {
    world = await startWorld();
    const sent: URL[] = [];
    const oauth = new OAuthClient(
      { clientMetadata: { redirect_uris: [REDIRECT] }, redirectToAuthorization: (url) => void sent.push(url) },
      { awaitAuthorization: false },
    );
    const error = await connectWith(world.rs, oauth).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "OAuthError", code: "authorization_required" });
    expect(sent).toHaveLength(1);
    const redirect = await fetch(sent[0]!, { redirect: "manual" });
    await oauth.finishAuthorization(new URL(redirect.headers.get("location")!));
    const client = await connected(oauth);
    await client.listTools();
    expect(world.authorizations).toHaveLength(1);
  });

  it("fails the waiting request with authorization_timeout when the user never comes back", async () => {
    world = await startWorld();
    const oauth = new OAuthClient(
      { clientMetadata: { redirect_uris: [REDIRECT] }, redirectToAuthorization: () => undefined },
      { authorizationTimeoutMs: 300 },
    );
    await expect(connectWith(world.rs, oauth)).rejects.toMatchObject({ code: "authorization_timeout" });
  });

  it.each([
    ["no code", (state: string) => new URLSearchParams({ state }), /no code/],
    [
      "another issuer's iss",
      (state: string) => new URLSearchParams({ state, code: "some-code-value", iss: "https://other.example" }),
      /iss/,
    ],
  ])(
    "refuses a callback with %s: invalid_callback, and the waiting request fails with it",
    async (_name, callback, message) => {
      world = await startWorld();
      const sent: URL[] = [];
      const oauth = new OAuthClient({
        clientMetadata: { redirect_uris: [REDIRECT] },
        redirectToAuthorization: (url) => void sent.push(url),
      });
      const connecting = connectWith(world.rs, oauth).catch((e: unknown) => e);
      await until(() => sent.length === 1);
      const finishing = oauth.finishAuthorization(callback(sent[0]!.searchParams.get("state")!));
      await expect(finishing).rejects.toMatchObject({
        code: "invalid_callback",
        message: expect.stringMatching(message),
      });
      expect(await connecting).toMatchObject({ code: "invalid_callback" });
      expect(world.requests.filter((r) => r.path === "/token")).toHaveLength(0);
    },
  );

  it("refuses a callback whose state it did not issue, and a second use of one it did", async () => {
    world = await startWorld();
    let callback: URL | undefined;
    const oauth: OAuthClient = new OAuthClient({
      clientMetadata: { redirect_uris: [REDIRECT] },
      async redirectToAuthorization(url) {
        const redirect = await fetch(url, { redirect: "manual" });
        callback = new URL(redirect.headers.get("location")!);
        await oauth.finishAuthorization(callback);
      },
    });
    await expect(oauth.finishAuthorization("some-code-value", "never-issued-state")).rejects.toMatchObject({
      code: "unknown_state",
    });
    await connected(oauth);
    await expect(oauth.finishAuthorization(callback!)).rejects.toMatchObject({ code: "unknown_state" });
  });
});

describe("stores", () => {
  it("FileOAuthStore: a new client (a new process) reuses the stored tokens and registration without the user", async () => {
    world = await startWorld();
    const path = join(tempDir("oauth-store"), "nested", "tokens.json");
    await connected(userClient({ store: new FileOAuthStore(path) }));
    const again = new OAuthClient({
      clientMetadata: { redirect_uris: [REDIRECT] },
      redirectToAuthorization: () => Promise.reject(new Error("the user was asked again")),
      store: new FileOAuthStore(path),
    });
    const client = await connected(again);
    await client.listTools();
    expect(world.authorizations).toHaveLength(1);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, "..")).mode & 0o777).toBe(0o700);
    // Atomic replacement leaves no temporary file behind.
    expect(readdirSync(join(path, ".."))).toEqual(["tokens.json"]);
    const saved = JSON.parse(readFileSync(path, "utf8")) as {
      tokens: Record<string, { issuer: string }>;
      clients: Record<string, unknown>;
    };
    expect(saved.tokens[world.rs]!.issuer).toBe(world.as);
    expect(Object.keys(saved.clients)).toEqual([world.as]);
  });

  it("FileOAuthStore: a fresh client refreshes stored tokens on its own (finding the server from the tokens' issuer)", async () => {
    world = await startWorld();
    const path = join(tempDir("oauth-store"), "tokens.json");
    await connected(userClient({ store: new FileOAuthStore(path) }));
    await expireSoon(new FileOAuthStore(path), world.rs, 10_000);
    const again = new OAuthClient({
      clientMetadata: { redirect_uris: [REDIRECT] },
      redirectToAuthorization: () => Promise.reject(new Error("asked again")),
      store: new FileOAuthStore(path),
    });
    const token = await again.authorization(new URL(world.rs));
    expect(token).toBe(`Bearer ${[...world.issued.keys()].at(-1)}`);
    expect(world.requests.filter((r) => r.body?.grant_type === "refresh_token")).toHaveLength(1);
  });

  it("FileOAuthStore: the callback can be finished by another instance (the redirect landed in a new process)", async () => {
    world = await startWorld();
    const path = join(tempDir("oauth-store"), "tokens.json");
    const sent: URL[] = [];
    const first = new OAuthClient(
      {
        clientMetadata: { redirect_uris: [REDIRECT] },
        redirectToAuthorization: (url) => void sent.push(url),
        store: new FileOAuthStore(path),
      },
      { awaitAuthorization: false },
    );
    await expect(connectWith(world.rs, first)).rejects.toMatchObject({ code: "authorization_required" });
    const second = new OAuthClient({
      clientMetadata: { redirect_uris: [REDIRECT] },
      redirectToAuthorization: () => undefined,
      store: new FileOAuthStore(path),
    });
    const redirect = await fetch(sent[0]!, { redirect: "manual" });
    await second.finishAuthorization(new URL(redirect.headers.get("location")!));
    await (await connected(second)).listTools();
    expect(world.authorizations).toHaveLength(1);
  });

  it("FileOAuthStore refuses a file that is not its own rather than overwrite it", async () => {
    const dir = tempDir("oauth-store");
    const path = join(dir, "tokens.json");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(path, "not json");
    await expect(new FileOAuthStore(path).getTokens("x")).rejects.toMatchObject({ code: "invalid_options" });
    writeFileSync(path, JSON.stringify({ tokens: [] }));
    await expect(new FileOAuthStore(path).setTokens("x", undefined)).rejects.toThrow(/does not hold/);
    expect(readFileSync(path, "utf8")).toBe(JSON.stringify({ tokens: [] }));
    expect(existsSync(path)).toBe(true);
  });

  it.each([
    ["InMemoryOAuthStore", () => new InMemoryOAuthStore()],
    ["FileOAuthStore", () => new FileOAuthStore(join(tempDir("oauth-store"), "s.json"))],
  ])("%s forgets pending authorizations once expired", async (_name, make) => {
    const store = make();
    const pending = {
      code_verifier: "v".repeat(43),
      redirect_uri: REDIRECT,
      client_id: "c",
      server_url: "https://s.example/mcp",
      issuer: "https://a.example",
      resource: "https://s.example/mcp",
    };
    await store.setPending("live", { ...pending, expires_at: Date.now() + 60_000 });
    await store.setPending("dead", { ...pending, expires_at: Date.now() - 1 });
    expect(await store.getPending("live")).toMatchObject({ client_id: "c" });
    expect(await store.getPending("dead")).toBeUndefined();
  });
});

it("OAuthError is the one error class, with a code", () => {
  const error = new OAuthError("issuer_mismatch", "x");
  expect(error).toBeInstanceOf(Error);
  expect(error.code).toBe("issuer_mismatch");
});
