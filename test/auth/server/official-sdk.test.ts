// The official SDK's client reads what our resource server says: the challenges, and the metadata by discovery.
import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { checkResourceAllowed } from "@modelcontextprotocol/sdk/shared/auth-utils.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jwtVerifier } from "../../../runtime/auth/server/index.js";
import { initializeMessage, post } from "../../http/helpers.js";
import {
  bearer,
  callTool,
  openSession,
  startAuthorizationServer,
  startProtectedServer,
  type ProtectedServer,
  type TestAuthorizationServer,
} from "./helpers.js";

let as: TestAuthorizationServer;
let rs: ProtectedServer;

beforeAll(async () => {
  as = await startAuthorizationServer();
  rs = await startProtectedServer(as.issuer, jwtVerifier({ issuer: as.issuer }), { requiredScopes: ["mcp:tools"] });
});
afterAll(async () => {
  await rs?.stop();
  await as?.stop();
});

describe("@modelcontextprotocol/sdk's client against our resource server", () => {
  it("parses the 401 challenge and discovers the metadata from it and from the well-known URL alone; the resource is allowed", async () => {
    const res = await post(rs.url, initializeMessage());
    const params = extractWWWAuthenticateParams(res);
    expect(params).toEqual({
      resourceMetadataUrl: new URL(rs.resource.metadataUrl),
      scope: "mcp:tools",
      error: undefined,
    });
    const viaHeader = await discoverOAuthProtectedResourceMetadata(rs.url, {
      resourceMetadataUrl: params.resourceMetadataUrl,
    });
    const viaWellKnown = await discoverOAuthProtectedResourceMetadata(rs.url);
    for (const metadata of [viaHeader, viaWellKnown]) {
      expect(metadata).toMatchObject({
        resource: rs.url,
        authorization_servers: [as.issuer],
        scopes_supported: ["mcp:tools"],
      });
    }
    expect(checkResourceAllowed({ requestedResource: rs.url, configuredResource: viaWellKnown.resource })).toBe(true);
  });

  it("parses the 403 insufficient_scope challenge of a tool call", async () => {
    const token = await as.mint(rs.url);
    const sid = await openSession(rs.url, token);
    const res = await post(
      rs.url,
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "admin", arguments: {} } },
      { "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25", ...bearer(token) },
    );
    expect(res.status).toBe(403);
    expect(extractWWWAuthenticateParams(res)).toEqual({
      resourceMetadataUrl: new URL(rs.resource.metadataUrl),
      scope: "mcp:tools mcp:admin",
      error: "insufficient_scope",
    });
    expect((await callTool(rs.url, sid, await as.mint(rs.url, { scope: "mcp:tools mcp:admin" }), "admin")).status).toBe(
      200,
    );
  });
});
