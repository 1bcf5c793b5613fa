// The official SDK's client reads what our resource server says: the challenges, and the metadata by discovery.
import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { checkResourceAllowed } from "@modelcontextprotocol/sdk/shared/auth-utils.js";
import { describe, expect, it } from "vitest";
import { jwtVerifier } from "../../../runtime/auth/server/index.js";
import { initializeMessage, post } from "../../http/helpers.js";
import { bearer, callTool, openSession, useAuthServers } from "./helpers.js";

const env = useAuthServers((as) => jwtVerifier({ issuer: as.issuer }), { requiredScopes: ["mcp:tools"] });

describe("@modelcontextprotocol/sdk's client against our resource server", () => {
  it("parses the 401 challenge and discovers the metadata from it and from the well-known URL alone; the resource is allowed", async () => {
    const res = await post(env.rs.url, initializeMessage());
    const params = extractWWWAuthenticateParams(res);
    expect(params).toEqual({
      resourceMetadataUrl: new URL(env.rs.resource.metadataUrl),
      scope: "mcp:tools",
      error: undefined,
    });
    const viaHeader = await discoverOAuthProtectedResourceMetadata(env.rs.url, {
      resourceMetadataUrl: params.resourceMetadataUrl,
    });
    const viaWellKnown = await discoverOAuthProtectedResourceMetadata(env.rs.url);
    for (const metadata of [viaHeader, viaWellKnown]) {
      expect(metadata).toMatchObject({
        resource: env.rs.url,
        authorization_servers: [env.as.issuer],
        scopes_supported: ["mcp:tools"],
      });
    }
    expect(checkResourceAllowed({ requestedResource: env.rs.url, configuredResource: viaWellKnown.resource })).toBe(
      true,
    );
  });

  it("parses the 403 insufficient_scope challenge of a tool call", async () => {
    const token = await env.as.mint(env.rs.url);
    const sid = await openSession(env.rs.url, token);
    const res = await post(
      env.rs.url,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "admin", arguments: {} } },
      { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25", ...bearer(token) },
    );
    expect(res.status).toBe(403);
    expect(extractWWWAuthenticateParams(res)).toEqual({
      resourceMetadataUrl: new URL(env.rs.resource.metadataUrl),
      scope: "mcp:tools mcp:admin",
      error: "insufficient_scope",
    });
    expect(
      (await callTool(env.rs.url, sid, await env.as.mint(env.rs.url, { scope: "mcp:tools mcp:admin" }), "admin"))
        .status,
    ).toBe(200);
  });
});
