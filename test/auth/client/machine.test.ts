// Machine clients: client_credentials with a secret or a private key JWT, and the JWT bearer grant with an ID-JAG from token exchange.
import { describe, expect, it } from "vitest";
import {
  ClientCredentialsClient,
  InMemoryOAuthStore,
  JwtBearerClient,
  requestIdJag,
  type ClientCredentialsOptions,
} from "../../../runtime/auth/index.js";
import { connectWith, expireSoon, signingKeyPair, startWorld, type World, type WorldOptions } from "./helpers.js";
import { closeAfterEach } from "../../kit/cleanup.js";

let world: World | undefined;
const cleanup = closeAfterEach(async () => {
  await world?.stop();
  world = undefined;
});

/** A machine client of the world's authorization server (its issuer the trusted one), connected. */
async function run(options: Omit<ClientCredentialsOptions, "issuer">) {
  const client = await connectWith(world!.rs, new ClientCredentialsClient({ issuer: world!.as, ...options }));
  cleanup(() => client.peer.close());
  return client;
}

const tokenRequests = () => world!.requests.filter((r) => r.path === "/token");

describe("client_credentials", () => {
  it("with a client secret: client_secret_basic by default, resource and the challenge's scope in the request", async () => {
    world = await startWorld({ clients: { machine: "machine-secret-value" }, challengeScope: "mcp:ops" });
    await (await run({ clientId: "machine", clientSecret: "machine-secret-value" })).listTools();
    const [request] = tokenRequests();
    expect(request!.headers.authorization).toBe(
      `Basic ${Buffer.from("machine:machine-secret-value").toString("base64")}`,
    );
    expect(request!.body).toMatchObject({ grant_type: "client_credentials", resource: world.rs, scope: "mcp:ops" });
    expect(world.authorizations).toHaveLength(0);
  });

  it.each<[string, WorldOptions["metadata"], ClientCredentialsOptions["tokenEndpointAuthMethod"]]>([
    [
      "the server lists only client_secret_post",
      (d) => ({ ...d, token_endpoint_auth_methods_supported: ["client_secret_post"] }),
      undefined,
    ],
    ["the app asks for it", undefined, "client_secret_post"],
  ])("with client_secret_post when %s", async (_name, metadata, method) => {
    world = await startWorld({ clients: { machine: "machine-secret-value" }, metadata });
    await (
      await run({ clientId: "machine", clientSecret: "machine-secret-value", tokenEndpointAuthMethod: method })
    ).listTools();
    const [request] = tokenRequests();
    expect(request!.headers.authorization).toBeUndefined();
    expect(request!.body).toMatchObject({ client_id: "machine", client_secret: "machine-secret-value" });
  });

  it.each(["pem", "jwk", "CryptoKey"] as const)(
    "with a private key JWT (key given as %s), signed for the issuer as audience",
    async (form) => {
      const keys = await signingKeyPair();
      world = await startWorld({ assertionKey: keys.publicKey });
      const key = form === "pem" ? keys.pem : form === "jwk" ? (keys.jwk as { kty: string }) : keys.privateKey;
      await (await run({ clientId: "signer", privateKey: { key, algorithm: "ES256", kid: "k1" } })).listTools();
      const [request] = tokenRequests();
      expect(request!.body).toMatchObject({
        grant_type: "client_credentials",
        client_id: "signer",
        client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
      });
      const [header, payload] = String(request!.body!.client_assertion)
        .split(".")
        .slice(0, 2)
        .map((part) => JSON.parse(Buffer.from(part, "base64url").toString()) as Record<string, unknown>);
      expect(header).toMatchObject({ alg: "ES256", kid: "k1" });
      expect(payload).toMatchObject({ iss: "signer", sub: "signer", aud: world.as });
      // The server verified the signature with the public key, or it would not have issued the token.
      expect(world.issued.size).toBe(1);
    },
  );

  it("obtains a new token before the current one expires, with no 401 in between", async () => {
    world = await startWorld({ clients: { machine: "machine-secret-value" } });
    const store = new InMemoryOAuthStore();
    const client = await run({ clientId: "machine", clientSecret: "machine-secret-value", store });
    await expireSoon(store, world.rs, 10_000);
    await client.listTools();
    const posts = world.requests.filter((r) => r.server === "rs" && r.path === "/mcp");
    // Only the very first request went without a token; the last carried the new one.
    expect(posts.map((r) => r.headers.authorization === undefined)).toEqual([true, ...posts.slice(1).map(() => false)]);
    expect(posts.length).toBeGreaterThanOrEqual(4);
    expect(tokenRequests()).toHaveLength(2);
    expect(posts.at(-1)!.headers.authorization).toBe(`Bearer ${[...world.issued.keys()].at(-1)}`);
  });
});

describe("JWT bearer grant with an ID-JAG (enterprise-managed authorization)", () => {
  it("exchanges the ID token at the identity provider, presents the grant at the authorization server, and calls the server", async () => {
    world = await startWorld({ clients: { "xaa-client": "xaa-secret-value", "idp-client": undefined } });
    const idp = `${world.as}/token`;
    const client = await connectWith(
      world.rs,
      new JwtBearerClient({
        issuer: world.as,
        clientId: "xaa-client",
        clientSecret: "xaa-secret-value",
        assertion: ({ issuer, resource }) =>
          requestIdJag({
            tokenEndpoint: idp,
            clientId: "idp-client",
            idToken: "id-token-from-the-idp",
            audience: issuer,
            resource,
          }),
      }),
    );
    cleanup(() => client.peer.close());
    await client.listTools();
    const [exchange, bearer] = tokenRequests();
    expect(exchange!.body).toMatchObject({
      grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
      subject_token: "id-token-from-the-idp",
      subject_token_type: "urn:ietf:params:oauth:token-type:id_token",
      requested_token_type: "urn:ietf:params:oauth:token-type:id-jag",
      audience: world.as,
      resource: world.rs,
    });
    expect(bearer!.body).toMatchObject({
      grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
      resource: world.rs,
    });
    expect(String(bearer!.body!.assertion)).toMatch(/^jag-/);
    expect(bearer!.headers.authorization).toBe(
      `Basic ${Buffer.from("xaa-client:xaa-secret-value").toString("base64")}`,
    );
  });

  it("requestIdJag refuses an answer that is not an ID-JAG", async () => {
    world = await startWorld({
      clients: { "idp-client": undefined },
      tokenResponse: (grant) =>
        grant.includes("token-exchange")
          ? {
              status: 200,
              body: {
                access_token: "not-a-jag-value",
                token_type: "N_A",
                issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
              },
            }
          : undefined,
    });
    await expect(
      requestIdJag({
        tokenEndpoint: `${world.as}/token`,
        clientId: "idp-client",
        idToken: "id-token-value",
        audience: world.as,
        resource: world.rs,
      }),
    ).rejects.toMatchObject({
      code: "invalid_token_response",
    });
  });
});
