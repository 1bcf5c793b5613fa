// A protected MCP server built with the official SDK only (McpServer, Streamable HTTP on express, requireBearerAuth, mcpAuthMetadataRouter), trusting one issuer.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import { createRemoteJWKSet, errors as joseErrors, jwtVerify } from "jose";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { requireBearerAuth } from "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
} from "@modelcontextprotocol/sdk/server/auth/router.js";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { OAuthTokenVerifier } from "@modelcontextprotocol/sdk/server/auth/provider.js";
import { OAuthMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { listen } from "../../kit/net.js";

/** The scopes each tool needs; any other request needs the first (`mcp:tools`). */
export const SDK_TOOL_SCOPES = {
  whoami: ["mcp:tools"],
  admin_reset: ["mcp:tools", "mcp:admin"],
} as const satisfies Record<string, readonly string[]>;
const BASE_SCOPES = ["mcp:tools"];

export interface SdkProtectedServer {
  /** The MCP endpoint, `http://127.0.0.1:PORT/mcp`; also the resource identifier tokens must be issued for. */
  url: string;
  /** Where the protected resource metadata (RFC 9728) is served. */
  resourceMetadataUrl: string;
  /** Tool calls served, with the token's subject and scopes. */
  calls: { tool: string; subject: string; scopes: string[] }[];
  stop(): Promise<void>;
}

type Request = IncomingMessage & { body?: unknown; auth?: AuthInfo };
type Next = (error?: unknown) => void;

/** Verifies RFC 9068 JWT access tokens of `issuer` with jose against its JWKS: signature, issuer, audience, expiry, type. */
export function jwtVerifier(issuer: string, jwksUri: string, audience: string): OAuthTokenVerifier {
  const jwks = createRemoteJWKSet(new URL(jwksUri));
  return {
    async verifyAccessToken(token) {
      try {
        const { payload } = await jwtVerify(token, jwks, { issuer, audience, typ: "at+jwt", algorithms: ["RS256"] });
        return {
          token,
          clientId: typeof payload.client_id === "string" ? payload.client_id : "",
          scopes: typeof payload.scope === "string" ? payload.scope.split(" ").filter(Boolean) : [],
          expiresAt: payload.exp,
          resource: new URL(audience),
          extra: { subject: payload.sub },
        };
      } catch (error) {
        // Without this the middleware answers 500: it only turns OAuth errors into 401s. The message goes into the
        // challenge's error_description unescaped, so it is one of a few fixed texts without quotes.
        throw new InvalidTokenError(
          error instanceof joseErrors.JWTExpired
            ? "token expired"
            : error instanceof joseErrors.JWTClaimValidationFailed
              ? `token ${error.claim} claim invalid`
              : "invalid token",
        );
      }
    },
  };
}

function toolServer(calls: SdkProtectedServer["calls"]): McpServer {
  const server = new McpServer({ name: "sdk-protected-fixture", version: "1.0.0" });
  const principal = (authInfo: AuthInfo | undefined) => ({
    subject: String(authInfo?.extra?.subject ?? ""),
    scopes: authInfo?.scopes ?? [],
  });
  server.registerTool("whoami", { description: "The caller's subject and scopes" }, async (extra) => {
    const who = principal(extra.authInfo);
    calls.push({ tool: "whoami", ...who });
    return { content: [{ type: "text", text: JSON.stringify(who) }] };
  });
  server.registerTool("admin_reset", { description: "An administrative action (scope mcp:admin)" }, async (extra) => {
    const who = principal(extra.authInfo);
    calls.push({ tool: "admin_reset", ...who });
    return { content: [{ type: "text", text: `reset by ${who.subject}` }] };
  });
  return server;
}

/** The scopes a POSTed JSON-RPC message needs: a tool's own, else the base scope. */
function scopesFor(body: unknown): readonly string[] {
  const message = body as { method?: unknown; params?: { name?: unknown } } | undefined;
  if (
    message?.method === "tools/call" &&
    typeof message.params?.name === "string" &&
    message.params.name in SDK_TOOL_SCOPES
  ) {
    return SDK_TOOL_SCOPES[message.params.name as keyof typeof SDK_TOOL_SCOPES];
  }
  return BASE_SCOPES;
}

/** Starts the server on 127.0.0.1 (ephemeral port), trusting the authorization server at `issuer`. */
export async function startSdkProtectedServer(issuer: string): Promise<SdkProtectedServer> {
  const response = await fetch(`${issuer}/.well-known/oauth-authorization-server`);
  if (!response.ok) throw new Error(`${issuer} serves no RFC 8414 metadata (${response.status})`);
  const oauthMetadata = OAuthMetadataSchema.parse(await response.json());
  const jwksUri: unknown = oauthMetadata.jwks_uri;
  if (typeof jwksUri !== "string") throw new Error(`${issuer} publishes no jwks_uri`);

  const app = createMcpExpressApp();
  const http = createServer(app);
  const url = `${(await listen(http)).origin}/mcp`;
  const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(new URL(url));
  const verifier = jwtVerifier(issuer, jwksUri, url);
  // One middleware per scope set, so the SDK itself writes the 401 and 403 challenges.
  const guards = new Map(
    [BASE_SCOPES, ...Object.values(SDK_TOOL_SCOPES)].map((scopes) => [
      scopes.join(" "),
      requireBearerAuth({ verifier, requiredScopes: [...scopes], resourceMetadataUrl, expectedResource: new URL(url) }),
    ]),
  );
  const guard = (req: Request, res: ServerResponse, next: Next) =>
    guards.get(scopesFor(req.body).join(" "))!(req, res, next);

  app.use(
    mcpAuthMetadataRouter({
      oauthMetadata,
      resourceServerUrl: new URL(url),
      scopesSupported: ["mcp:tools", "mcp:admin"],
      resourceName: "SDK fixture",
    }),
  );

  const calls: SdkProtectedServer["calls"] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (req: Request, res: ServerResponse): Promise<void> => {
    const sessionId = req.headers["mcp-session-id"];
    let transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId !== undefined || req.method !== "POST" || !isInitializeRequest(req.body)) {
        res.writeHead(sessionId === undefined ? 400 : 404, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "no such session" } }));
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => void sessions.set(id, created),
      });
      created.onclose = () => void (created.sessionId && sessions.delete(created.sessionId));
      await toolServer(calls).connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, req.body);
  };
  for (const method of ["post", "get", "delete"] as const) {
    app[method]("/mcp", guard, (req: Request, res: ServerResponse, next: Next) => handle(req, res).catch(next));
  }

  return {
    url,
    resourceMetadataUrl,
    calls,
    async stop() {
      await Promise.all([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
