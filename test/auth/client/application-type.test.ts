// SEP-837: dynamic registration names the application_type the redirect URIs imply (or the app's own), which OIDC servers hold redirect URIs to.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OAuthClient, OAuthError, type OAuthClientMetadata } from "../../../runtime/auth/index.js";
import type { AuthorizationServer } from "../oidc/helpers.js";
import { startAuthorizationServer } from "../oidc/helpers.js";
import { closeAfterEach } from "../../kit/cleanup.js";
import { connectWith, headlessUser, startWorld, type World } from "./helpers.js";
import { startResource, type Resource } from "./oidc-resource.js";
import { jsonOf, recordingFetch, userClient, type Exchange } from "./oidc-helpers.js";

let world: World | undefined;
const cleanup = closeAfterEach(async () => {
  await world?.stop();
  world = undefined;
});

async function connect(url: string, oauth: Parameters<typeof connectWith>[1]) {
  const client = await connectWith(url, oauth);
  cleanup(() => client.peer.close());
  return client;
}

/** Registers at the test world with this metadata (the world sends the user back to any redirect URI). */
async function registered(metadata: Partial<OAuthClientMetadata> & { redirect_uris: string[] }): Promise<unknown> {
  world = await startWorld();
  const oauth: OAuthClient = new OAuthClient({
    clientMetadata: metadata,
    redirectToAuthorization: headlessUser(() => oauth),
  });
  await connect(world.rs, oauth);
  expect(world.registered).toHaveLength(1);
  return world.registered[0]!.metadata.application_type;
}

describe("the application_type sent with dynamic registration", () => {
  it.each<[string, string[], "native" | "web"]>([
    ["http on 127.0.0.1", ["http://127.0.0.1:8976/callback"], "native"],
    ["http on localhost", ["http://localhost:3000/callback"], "native"],
    ["http on [::1]", ["http://[::1]:8080/callback"], "native"],
    ["a private-use scheme", ["com.example.app:/oauth/callback"], "native"],
    ["loopback and a private-use scheme", ["http://127.0.0.1/cb", "com.example.app:/cb"], "native"],
    ["https on a remote host", ["https://app.example/callback"], "web"],
    ["https on localhost (a claimed https URI, not a loopback redirect)", ["https://localhost/callback"], "web"],
    ["loopback and a remote https", ["http://127.0.0.1/callback", "https://app.example/callback"], "web"],
  ])("%s: %s", async (_name, redirect_uris, expected) => {
    expect(await registered({ redirect_uris })).toBe(expected);
  });

  it.each<[string, string[], "native" | "web"]>([
    ["web for a loopback redirect", ["http://127.0.0.1:8976/callback"], "web"],
    ["native for an https redirect", ["https://app.example/callback"], "native"],
  ])("is the app's own when its metadata names one: %s", async (_name, redirect_uris, type) => {
    expect(await registered({ redirect_uris, application_type: type })).toBe(type);
  });

  it("refuses any other application_type when the client is made", () => {
    expect(
      () =>
        new OAuthClient({
          clientMetadata: { redirect_uris: ["http://127.0.0.1/callback"], application_type: "desktop" as "native" },
          redirectToAuthorization: () => undefined,
        }),
    ).toThrow(expect.objectContaining({ code: "invalid_options" }));
  });

  it.each(["com.example.app:/callback", "com.example.app://callback/path"])(
    "accepts the private-use redirect URI %s",
    (uri) => {
      expect(
        () => new OAuthClient({ clientMetadata: { redirect_uris: [uri] }, redirectToAuthorization: () => undefined }),
      ).not.toThrow();
    },
  );

  it.each(["myapp:/callback", "data:text/plain,x", "file:///callback", "com.example.app:/cb#frag"])(
    "still refuses the redirect URI %s",
    (uri) => {
      expect(
        () => new OAuthClient({ clientMetadata: { redirect_uris: [uri] }, redirectToAuthorization: () => undefined }),
      ).toThrow(expect.objectContaining({ code: "invalid_redirect_uri" }));
    },
  );
});

describe("against oidc-provider, which holds redirect URIs to the application type", () => {
  let as: AuthorizationServer;
  let rs: Resource;
  beforeAll(async () => {
    as = await startAuthorizationServer();
    rs = await startResource({ authorizationServers: () => [as.issuer] });
  });
  afterAll(async () => {
    await rs?.stop();
    await as?.stop();
  });

  const PRIVATE_USE = "com.example.mcpgen:/oauth/callback";

  it("a native app with a private-use redirect URI registers, is sent back there, and calls the server", async () => {
    const log: Exchange[] = [];
    const user = userClient(as, { fetch: recordingFetch(log) }, { redirect_uris: [PRIVATE_USE] });
    const client = await connect(rs.url, user.oauth);
    expect(await jsonOf(await client.callTool({ name: "whoami", arguments: {} }))).toMatchObject({ sub: "alice" });
    const registration = log.find((e) => e.method === "POST" && e.status === 201)!;
    expect(JSON.parse(registration.body)).toMatchObject({ application_type: "native", redirect_uris: [PRIVATE_USE] });
    expect(JSON.parse(registration.responseBody)).toMatchObject({ application_type: "native" });
    expect(user.authorizations[0]!.searchParams.get("redirect_uri")).toBe(PRIVATE_USE);
  });

  it("a loopback redirect URI registers as native", async () => {
    const log: Exchange[] = [];
    const user = userClient(as, { fetch: recordingFetch(log) });
    await connect(rs.url, user.oauth);
    const registration = log.find((e) => e.method === "POST" && e.status === 201)!;
    expect(JSON.parse(registration.responseBody)).toMatchObject({ application_type: "native" });
  });

  it("the app's own application_type is sent as given: web with a private-use redirect URI is refused, with the server's reason", async () => {
    const user = userClient(as, {}, { redirect_uris: [PRIVATE_USE], application_type: "web" });
    const error = await connect(rs.url, user.oauth).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toMatchObject({ code: "registration_failed", message: expect.stringContaining("web uris") });
  });
});
