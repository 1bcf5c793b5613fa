// Credentials go only to the issuer they belong to: no MCP server can point a client's secret, assertion or registration at another authorization server.
import { beforeAll, describe, expect, it } from "vitest";
import {
  ClientCredentialsClient,
  FileOAuthStore,
  InMemoryOAuthStore,
  JwtBearerClient,
  OAuthClient,
  type OAuthAuthorizer,
  type OAuthClientProvider,
  type OAuthClientOptions,
  type OAuthStore,
} from "../../../runtime/auth/index.js";
import { join } from "node:path";
import { tempDir } from "../../kit/paths.js";
import {
  REDIRECT,
  connectWith,
  headlessUser,
  signingKeyPair,
  startWorld,
  type Recorded,
  type World,
  type WorldOptions,
} from "./helpers.js";
import { closeAfterEach } from "../../kit/cleanup.js";

const cleanup = closeAfterEach();

const SECRET = "machine-secret-value-4f1c";
const ASSERTION = "eyJhbGciOiJub25lIn0.assertion-grant-value.sig";

/** A world stopped after the test. */
async function world(options: WorldOptions = {}): Promise<World> {
  const started = await startWorld(options);
  cleanup(() => started.stop());
  return started;
}

/** Whether a request carries a client credential: Basic authentication, a secret, a client assertion or a grant. */
function carriesCredential(request: Recorded): boolean {
  const text = JSON.stringify(request);
  return (
    request.headers.authorization?.startsWith("Basic ") === true ||
    ["client_secret", "client_assertion", "assertion"].some((name) => request.body?.[name] !== undefined) ||
    text.includes(SECRET) ||
    text.includes(ASSERTION)
  );
}

/** Connects and lists tools; resolves with the error it failed with. */
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

let keys: Awaited<ReturnType<typeof signingKeyPair>>;
beforeAll(async () => {
  keys = await signingKeyPair();
});

/** The machine clients, by how they authenticate; each records the issuers its assertion was asked for. */
const KINDS: Record<string, (issuer: string, asked: string[]) => OAuthAuthorizer> = {
  client_secret_basic: (issuer) => new ClientCredentialsClient({ issuer, clientId: "machine", clientSecret: SECRET }),
  private_key_jwt: (issuer) =>
    new ClientCredentialsClient({ issuer, clientId: "signer", privateKey: { key: keys.privateKey } }),
  "jwt-bearer (an assertion grant, client_secret_basic)": (issuer, asked) =>
    new JwtBearerClient({
      issuer,
      clientId: "machine",
      clientSecret: SECRET,
      assertion: (context) => {
        asked.push(context.issuer);
        return ASSERTION;
      },
    }),
};

/** The trusted authorization server: knows the machine client's secret and the signer's public key. */
const trustedWorld = (options: WorldOptions = {}) =>
  world({ clients: { machine: SECRET }, assertionKey: keys.publicKey, ...options });

interface Setup {
  /** The MCP endpoint the client connects to. */
  target: string;
  /** The issuer the client is configured with. */
  trusted: string;
  /** The issuer the client is offered instead, which the error must name. */
  offered: string;
  /** Servers that must receive no credential (and no token request at all). */
  watched: World[];
}

const CASES: [string, () => Promise<Setup>][] = [
  [
    "(a) the protected resource metadata lists another authorization server",
    async () => {
      const evil = await world();
      const good = await trustedWorld({ prmExtra: () => ({ authorization_servers: [evil.as] }) });
      return { target: good.rs, trusted: good.as, offered: evil.as, watched: [evil] };
    },
  ],
  [
    "(b) the challenge's resource_metadata is on another origin and names another authorization server",
    async () => {
      let target = "";
      // Its metadata claims the MCP server as its resource, so only the issuer it names is wrong.
      const evil = await world({ prmResource: () => target });
      const good = await trustedWorld({
        wwwAuthenticate: () =>
          `Bearer error="invalid_token", resource_metadata="${new URL(evil.rs).origin}/meta/resource.json"`,
      });
      target = good.rs;
      return { target, trusted: good.as, offered: evil.as, watched: [evil] };
    },
  ],
  [
    "(c) the authorization server named has its token endpoint on yet another origin",
    async () => {
      const collector = await world();
      const evil = await world({ metadata: (d) => ({ ...d, token_endpoint: `${collector.as}/token` }) });
      const good = await trustedWorld({ prmExtra: () => ({ authorization_servers: [evil.as] }) });
      return { target: good.rs, trusted: good.as, offered: evil.as, watched: [evil, collector] };
    },
  ],
  [
    "(d) the MCP server has no metadata at all: the 2025-03-26 fallback would post to its own /token",
    async () => {
      const good = await trustedWorld();
      const legacy = await world({ prm: "none", sameOrigin: true, metadataAt: "none" });
      return { target: legacy.rs, trusted: good.as, offered: new URL(legacy.rs).origin, watched: [legacy] };
    },
  ],
  [
    "(d) the same, with the trusted issuer on the MCP server's origin but at a path: the origin itself is not it",
    async () => {
      const legacy = await world({ prm: "none", sameOrigin: true, metadataAt: "none", clients: { machine: SECRET } });
      const origin = new URL(legacy.rs).origin;
      return { target: legacy.rs, trusted: `${origin}/tenant`, offered: origin, watched: [legacy] };
    },
  ],
];

describe("machine clients send their credentials to the configured issuer only", () => {
  describe.each(Object.keys(KINDS))("%s", (kind) => {
    it.each(CASES)("%s: untrusted_issuer naming it, and nothing sent there", async (_name, setup) => {
      const { target, trusted, offered, watched } = await setup();
      const asked: string[] = [];
      const error = await failure(target, KINDS[kind]!(trusted, asked));
      expect(error).toMatchObject({ name: "OAuthError", code: "untrusted_issuer", issuer: offered });
      const message = (error as Error).message;
      expect(message).toContain(JSON.stringify(offered));
      expect(message).toContain(JSON.stringify(trusted));
      for (const server of watched) {
        expect(server.requests.filter(carriesCredential)).toEqual([]);
        expect(server.requests.filter((r) => r.path.endsWith("/token"))).toEqual([]);
      }
      // No assertion grant was even asked for with the other server as its audience.
      expect(asked).toEqual([]);
    });

    it("the trusted issuer gets the credential (so the checks above would see one)", async () => {
      const good = await trustedWorld();
      const asked: string[] = [];
      const client = await connectWith(good.rs, KINDS[kind]!(good.as, asked));
      cleanup(() => client.peer.close());
      await client.listTools();
      expect(good.requests.filter((r) => r.path === "/token").every(carriesCredential)).toBe(true);
      expect(good.issued.size).toBe(1);
    });
  });

  it("of the authorization servers the metadata lists, the trusted one is used, wherever it is in the list", async () => {
    const evil = await world();
    let good: World | undefined;
    good = await trustedWorld({ prmExtra: () => ({ authorization_servers: [evil.as, good!.as] }) });
    const client = await connectWith(good.rs, KINDS.client_secret_basic!(good.as, []));
    cleanup(() => client.peer.close());
    await client.listTools();
    expect(evil.requests).toEqual([]);
    expect(good.issued.size).toBe(1);
  });

  it("a 2025-03-26 server whose origin is the configured issuer still gets the fallback's token request", async () => {
    const legacy = await world({ prm: "none", sameOrigin: true, metadataAt: "none", clients: { machine: SECRET } });
    const client = await connectWith(legacy.rs, KINDS.client_secret_basic!(new URL(legacy.rs).origin, []));
    cleanup(() => client.peer.close());
    await client.listTools();
    expect(legacy.requests.filter((r) => r.path === "/token").every(carriesCredential)).toBe(true);
    expect(legacy.issued.size).toBe(1);
  });

  it("stored tokens from an issuer no longer trusted are dropped, never refreshed there", async () => {
    const evil = await world();
    const good = await trustedWorld();
    const store = new InMemoryOAuthStore();
    await store.setTokens(good.rs, {
      access_token: "at-from-before-value",
      token_type: "bearer",
      refresh_token: "rt-from-before-value",
      expires_at: Date.now() + 1_000,
      obtained_at: Date.now() - 3_600_000,
      issuer: evil.as,
      resource: good.rs,
    });
    const client = await connectWith(
      good.rs,
      new ClientCredentialsClient({ issuer: good.as, clientId: "machine", clientSecret: SECRET, store }),
    );
    cleanup(() => client.peer.close());
    await client.listTools();
    expect(evil.requests).toEqual([]);
    expect((await store.getTokens(good.rs))?.issuer).toBe(good.as);
  });

  it.each<[string, () => OAuthAuthorizer]>([
    ["ClientCredentialsClient", () => new ClientCredentialsClient({ clientId: "m", clientSecret: SECRET } as never)],
    [
      "JwtBearerClient",
      () => new JwtBearerClient({ clientId: "m", clientSecret: SECRET, assertion: () => ASSERTION } as never),
    ],
  ])("%s without an issuer is refused at construction", (_name, make) => {
    expect(make).toThrow(
      expect.objectContaining({ code: "invalid_options", message: expect.stringMatching(/issuer/) }),
    );
  });

  it.each<[string, unknown, string]>([
    ["an empty list", [], "invalid_options"],
    ["not a URL", "auth.example.com", "insecure_url"],
    ["plain http on a public host", "http://auth.example.com", "insecure_url"],
    ["a query", "https://auth.example.com/?tenant=1", "invalid_options"],
    ["a fragment", "https://auth.example.com/#x", "invalid_options"],
  ])("an issuer that is %s is refused at construction", (_name, issuer, code) => {
    expect(
      () => new ClientCredentialsClient({ issuer: issuer as string, clientId: "m", clientSecret: SECRET }),
    ).toThrow(expect.objectContaining({ code }));
  });
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

describe("the authorization code client", () => {
  const PRE = { client_id: "pre-registered", client_secret: SECRET };

  it.each<[string, Partial<OAuthClientProvider>, OAuthClientOptions]>([
    ["a pre-registered client secret", { clientInformation: PRE }, {}],
    [
      "a pre-registered client with a private key",
      { clientInformation: { client_id: "pre-registered" } },
      { privateKey: { key: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", algorithm: "ES256" } },
    ],
  ])("with %s given as one object and no issuer: refused at construction", (_name, provider, options) => {
    expect(() => userClient(provider, options)).toThrow(
      expect.objectContaining({ code: "invalid_options", message: expect.stringMatching(/issuer/) }),
    );
  });

  it.each<[string, Partial<OAuthClientProvider>]>([
    ["a public pre-registered client", { clientInformation: { client_id: "public" } }],
    ["credentials per issuer (a function)", { clientInformation: () => PRE }],
    ["dynamic registration", {}],
  ])("with %s, no issuer is needed", (_name, provider) => {
    expect(() => userClient(provider)).not.toThrow();
  });

  it.each(CASES)(
    "a pre-registered secret, %s: untrusted_issuer, nothing sent there and the user sent nowhere",
    async (_name, setup) => {
      const { target, trusted, offered, watched } = await setup();
      const error = await failure(target, userClient({ clientInformation: PRE }, { issuer: trusted }));
      expect(error).toMatchObject({ name: "OAuthError", code: "untrusted_issuer", issuer: offered });
      expect((error as Error).message).toContain(JSON.stringify(trusted));
      for (const server of watched) {
        expect(server.requests.filter(carriesCredential)).toEqual([]);
        expect(server.authorizations).toEqual([]);
        expect(server.requests.filter((r) => r.path === "/register")).toEqual([]);
      }
    },
  );

  it("a pre-registered secret with its issuer: used there", async () => {
    const good = await world({ clients: { [PRE.client_id]: PRE.client_secret } });
    const client = await connectWith(good.rs, userClient({ clientInformation: PRE }, { issuer: good.as }));
    cleanup(() => client.peer.close());
    await client.listTools();
    const token = good.requests.find((r) => r.path === "/token")!;
    expect(token.headers.authorization).toBe(`Basic ${Buffer.from(`${PRE.client_id}:${SECRET}`).toString("base64")}`);
  });

  it.each<[string, () => OAuthStore]>([
    ["InMemoryOAuthStore", () => new InMemoryOAuthStore()],
    ["FileOAuthStore", () => new FileOAuthStore(join(tempDir("oauth-issuers"), "store.json"))],
  ])(
    "dynamically registered credentials (%s) are kept per issuer: another authorization server gets a registration of its own, never the first one's",
    async (_name, makeStore) => {
      // Confidential registrations, so there is a secret that must not travel.
      const confidential: WorldOptions = {
        metadata: (d) => ({ ...d, token_endpoint_auth_methods_supported: ["client_secret_basic"] }),
      };
      const first = await world(confidential);
      const second = await world(confidential);
      const store = makeStore();
      for (const target of [first, second]) {
        // A new client each time, as a new process would be, sharing the store.
        const client = await connectWith(target.rs, userClient({ store }));
        cleanup(() => client.peer.close());
        await client.listTools();
      }
      const [registration] = first.registered;
      expect(registration?.client_secret).toBeDefined();
      expect(second.registered).toHaveLength(1);
      const own = second.registered[0]!;
      expect(own.client_secret).not.toBe(registration!.client_secret);
      expect(JSON.stringify(second.requests)).not.toContain(registration!.client_secret!);
      const token = second.requests.find((r) => r.path === "/token")!;
      expect(token.headers.authorization).toBe(
        `Basic ${Buffer.from(`${own.client_id}:${own.client_secret}`).toString("base64")}`,
      );
      expect(await store.getClient(first.as)).toMatchObject({ client_secret: registration!.client_secret });
      expect(await store.getClient(second.as)).toMatchObject({ client_secret: own.client_secret });
    },
  );
});
