// Discovery in the spec's order: protected resource metadata, then the authorization server's metadata, and the 2025-03-26 fallbacks.
import { describe, expect, it } from "vitest";
import { OAuthClient } from "../../../runtime/auth/index.js";
import { REDIRECT, connectWith, headlessUser, startWorld, type World, type WorldOptions } from "./helpers.js";
import { closeAfterEach } from "../../kit/cleanup.js";

let world: World | undefined;
const cleanup = closeAfterEach(async () => {
  await world?.stop();
  world = undefined;
});

async function authorize(options: { legacyDiscovery?: boolean } = {}): Promise<void> {
  const oauth: OAuthClient = new OAuthClient(
    { clientMetadata: { redirect_uris: [REDIRECT] }, redirectToAuthorization: headlessUser(() => oauth) },
    options,
  );
  const client = await connectWith(world!.rs, oauth);
  cleanup(() => client.peer.close());
  await client.listTools();
}

const gets = (server: "as" | "rs") =>
  world!.requests.filter((r) => r.server === server && r.method === "GET").map((r) => r.path);

describe("protected resource metadata", () => {
  it.each<[string, WorldOptions["prm"], string[]]>([
    ["only the URL the challenge names, when it names one", "header", ["/meta/resource.json"]],
    ["the well-known URI with the endpoint's path first", "path", ["/.well-known/oauth-protected-resource/mcp"]],
    [
      "then the one at the root",
      "root",
      ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"],
    ],
  ])("is fetched from %s", async (_name, prm, expected) => {
    world = await startWorld({ prm });
    await authorize();
    expect(gets("rs")).toEqual(expected);
  });

  it("accepts metadata whose resource is the server's whole origin (the root well-known URI's own resource), and sends that resource", async () => {
    world = await startWorld({ prm: "root" });
    await authorize();
    const origin = new URL(world.rs).origin;
    expect(world.authorizations[0]!.resource).toBe(origin);
    expect(world.requests.find((r) => r.path === "/token")!.body!.resource).toBe(origin);
  });
});

describe("authorization server metadata", () => {
  it.each<[string, WorldOptions, string[]]>([
    [
      "an issuer with a path: RFC 8414 inserted, OIDC inserted, OIDC appended",
      { issuerPath: "/tenant1", metadataAt: "oidc-appended" },
      [
        "/.well-known/oauth-authorization-server/tenant1",
        "/.well-known/openid-configuration/tenant1",
        "/tenant1/.well-known/openid-configuration",
      ],
    ],
    [
      "an issuer with a path, OIDC inserted",
      { issuerPath: "/tenant1", metadataAt: "oidc-inserted" },
      ["/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1"],
    ],
    [
      "an issuer without a path: RFC 8414, then OIDC",
      { metadataAt: "oidc-appended" },
      ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"],
    ],
  ])("is looked for, for %s, in that order until found", async (_name, options, expected) => {
    world = await startWorld(options);
    await authorize();
    expect(gets("as").filter((p) => p.includes(".well-known"))).toEqual(expected);
  });
});

describe("2025-03-26 servers (no protected resource metadata)", () => {
  it("finds the authorization server's metadata at the MCP server's origin, whose issuer may carry a path there", async () => {
    world = await startWorld({
      prm: "none",
      sameOrigin: true,
      metadata: (d) => ({ ...d, issuer: `${d.issuer as string}/oauth` }),
    });
    await authorize();
    const paths = world.requests.filter((r) => r.method === "GET").map((r) => r.path);
    expect(paths).toEqual([
      "/.well-known/oauth-protected-resource/mcp",
      "/.well-known/oauth-protected-resource",
      "/.well-known/oauth-authorization-server",
      "/authorize",
    ]);
    expect(world.authorizations[0]!.resource).toBe(world.rs);
  });

  it("uses the default endpoints /authorize, /token and /register at the origin when there is no metadata at all", async () => {
    world = await startWorld({ prm: "none", sameOrigin: true, metadataAt: "none" });
    await authorize();
    const posts = world.requests.filter((r) => r.method === "POST" && r.path !== "/mcp").map((r) => r.path);
    expect(posts).toEqual(["/register", "/token"]);
    expect(world.authorizations).toHaveLength(1);
  });

  it("is not attempted with legacyDiscovery: false", async () => {
    world = await startWorld({ prm: "none", sameOrigin: true, metadataAt: "none" });
    await expect(authorize({ legacyDiscovery: false })).rejects.toMatchObject({ code: "resource_metadata_not_found" });
    expect(world.authorizations).toHaveLength(0);
  });
});
