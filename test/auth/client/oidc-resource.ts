// A protected MCP endpoint on 127.0.0.1 trusting oidc-provider's JWT access tokens, Bearer or DPoP-bound (every proof verified with jose), for the OAuth client's tests.
import { createHash, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  EmbeddedJWK,
  calculateJwkThumbprint,
  createRemoteJWKSet,
  decodeJwt,
  jwtVerify,
  type JWTVerifyGetKey,
} from "jose";
import { listenHttp } from "../../../runtime/transports/http/server/listen.js";
import { readBody, send } from "./helpers.js";

export interface ResourceOptions {
  /** The authorization servers the protected resource metadata names, read on every request (a test may switch them). */
  authorizationServers: () => readonly string[];
  /** "bearer" (default): Bearer tokens only. "dpop": DPoP-bound tokens with a valid proof only. */
  scheme?: "bearer" | "dpop";
  /** DPoP: every proof must carry this server's current nonce (401 `DPoP error="use_dpop_nonce"` otherwise). */
  requireNonce?: boolean;
  /** DPoP: after this many accepted requests, send a new nonce in `DPoP-Nonce` on the successful answer. */
  rotateNonceEvery?: number;
}

/** A DPoP proof the server verified (RFC 9449 section 4.3), with what it was checked against. */
export interface VerifiedProof {
  htm: string;
  htu: string;
  iat: number;
  jti: string;
  ath: string;
  nonce?: string;
  /** The thumbprint of the proof's key: equal to the token's cnf.jkt, or the request was refused. */
  jkt: string;
}

export interface Seen {
  method: string;
  /** The JSON-RPC method, for POSTs. */
  rpc?: string;
  authorization?: string;
  dpop?: string;
  status: number;
  /** The WWW-Authenticate of a refusal. */
  challenge?: string;
}

export interface Resource {
  /** The MCP endpoint. */
  url: string;
  /** Every request to the endpoint, in order. */
  seen: Seen[];
  proofs: VerifiedProof[];
  /** Every nonce this server handed out, in order. */
  nonces: string[];
  /** The issuer of each access token accepted, in order. */
  accepted: { iss: string; scheme: "Bearer" | "DPoP"; token: string }[];
  stop(): Promise<void>;
}

const PRM_PATH = "/meta/prm.json";

const sha256 = (text: string) => createHash("sha256").update(text).digest("base64url");

/** Starts the endpoint at /mcp; its protected resource metadata is at a path only its challenges name. */
export async function startResource(options: ResourceOptions): Promise<Resource> {
  const scheme = options.scheme ?? "bearer";
  const seen: Seen[] = [];
  const proofs: VerifiedProof[] = [];
  const nonces: string[] = [];
  const accepted: Resource["accepted"] = [];
  const jtis = new Set<string>();
  const keySets = new Map<string, JWTVerifyGetKey>();
  let nonce: string | undefined;
  let served = 0;
  let origin = "";
  const newNonce = (): string => {
    nonce = randomBytes(16).toString("base64url");
    nonces.push(nonce);
    return nonce;
  };
  if (options.requireNonce) newNonce();

  async function keysOf(issuer: string): Promise<JWTVerifyGetKey> {
    let keys = keySets.get(issuer);
    if (keys === undefined) {
      const metadata = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as {
        jwks_uri: string;
      };
      keys = createRemoteJWKSet(new URL(metadata.jwks_uri));
      keySets.set(issuer, keys);
    }
    return keys;
  }

  /** The access token's claims when it is one of a trusted issuer's, for this resource; else why not. */
  async function verifyToken(token: string): Promise<Record<string, unknown> | string> {
    try {
      const iss = decodeJwt(token).iss;
      if (typeof iss !== "string" || !options.authorizationServers().includes(iss))
        return `tokens of ${String(iss)} are not accepted here`;
      const { payload } = await jwtVerify(token, await keysOf(iss), { issuer: iss, audience: `${origin}/mcp` });
      return payload;
    } catch (error) {
      return `the access token is invalid: ${(error as Error).message}`;
    }
  }

  /** The proof verified against the request and the token, or why it is refused (use_dpop_nonce first). */
  async function verifyProof(
    req: IncomingMessage,
    proof: string | undefined,
    token: string,
    claims: Record<string, unknown>,
  ): Promise<VerifiedProof | { error: string; description: string }> {
    const invalid = (description: string) => ({ error: "invalid_dpop_proof", description });
    if (proof === undefined) return invalid("no DPoP proof");
    try {
      const { payload, protectedHeader } = await jwtVerify(proof, EmbeddedJWK, {
        typ: "dpop+jwt",
        algorithms: ["ES256", "ES384", "ES512", "PS256", "RS256", "Ed25519", "EdDSA"],
      });
      const { htm, htu, iat, jti, ath } = payload as Record<string, unknown>;
      if (htm !== req.method) return invalid(`htm ${String(htm)} is not ${req.method}`);
      if (htu !== `${origin}${new URL(req.url ?? "/", origin).pathname}`) return invalid(`htu ${String(htu)}`);
      if (typeof iat !== "number" || Math.abs(Date.now() / 1000 - iat) > 60) return invalid("iat is not recent");
      if (typeof jti !== "string" || jti.length < 12 || jtis.has(jti)) return invalid("jti is missing or replayed");
      if (ath !== sha256(token)) return invalid("ath is not the access token's hash");
      const jkt = await calculateJwkThumbprint(protectedHeader.jwk!);
      const cnf = claims.cnf as { jkt?: unknown } | undefined;
      if (cnf?.jkt !== jkt) return invalid("the proof's key is not the one the token is bound to");
      if (options.requireNonce && payload.nonce !== nonce)
        return { error: "use_dpop_nonce", description: "use the nonce this server gave" };
      jtis.add(jti);
      const verified: VerifiedProof = { htm: req.method!, htu: htu as string, iat, jti, ath: ath as string, jkt };
      if (typeof payload.nonce === "string") verified.nonce = payload.nonce;
      return verified;
    } catch (error) {
      return invalid(`the proof does not verify: ${(error as Error).message}`);
    }
  }

  const listener = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", origin);
    const text = await readBody(req);
    if (req.method === "GET" && url.pathname === PRM_PATH) {
      const document: Record<string, unknown> = {
        resource: `${origin}/mcp`,
        authorization_servers: options.authorizationServers(),
        scopes_supported: ["mcp:tools"],
      };
      if (scheme === "dpop") document.dpop_bound_access_tokens_required = true;
      return send(res, 200, document);
    }
    if (url.pathname !== "/mcp") return send(res, 404, { error: "not_found" });
    const message = text === "" ? undefined : (JSON.parse(text) as { id?: unknown; method?: string });
    const entry: Seen = { method: req.method ?? "", status: 0 };
    if (message?.method !== undefined) entry.rpc = message.method;
    if (req.headers.authorization !== undefined) entry.authorization = req.headers.authorization;
    const proof = req.headers.dpop;
    if (typeof proof === "string") entry.dpop = proof;
    seen.push(entry);

    const refuse = (status: number, error: string, description: string, extra: Record<string, string> = {}) => {
      const metadata = `resource_metadata="${origin}${PRM_PATH}", scope="mcp:tools"`;
      entry.challenge =
        scheme === "dpop"
          ? `DPoP error="${error}", error_description="${description.replace(/"/g, "'")}", algs="ES256 Ed25519", ${metadata}`
          : `Bearer error="${error}", ${metadata}`;
      entry.status = status;
      send(res, status, { error }, { "www-authenticate": entry.challenge, ...extra });
    };
    const [, presented, token] = /^(Bearer|DPoP) (\S+)$/i.exec(req.headers.authorization ?? "") ?? [];
    if (token === undefined) return refuse(401, "invalid_token", "no access token");
    if (presented!.toLowerCase() !== scheme)
      return refuse(401, "invalid_token", `${presented} tokens are not accepted`);
    const claims = await verifyToken(token);
    if (typeof claims === "string") return refuse(401, "invalid_token", claims);
    if (scheme === "dpop") {
      const verified = await verifyProof(req, typeof proof === "string" ? proof : undefined, token, claims);
      if ("error" in verified) {
        const extra: Record<string, string> = verified.error === "use_dpop_nonce" ? { "dpop-nonce": nonce! } : {};
        return refuse(401, verified.error, verified.description, extra);
      }
      proofs.push(verified);
    }
    accepted.push({ iss: String(claims.iss), scheme: scheme === "dpop" ? "DPoP" : "Bearer", token });
    const headers: Record<string, string> = {};
    served++;
    if (options.requireNonce && options.rotateNonceEvery !== undefined && served % options.rotateNonceEvery === 0)
      headers["dpop-nonce"] = newNonce();
    entry.status = 200;
    if (req.method === "GET") return send(res, 405, undefined, headers);
    if (req.method === "DELETE") return send(res, 200, undefined, headers);
    if (message?.id === undefined) return send(res, 202, undefined, headers);
    const reply = (result: unknown) => send(res, 200, { jsonrpc: "2.0", id: message.id, result }, headers);
    switch (message.method) {
      case "initialize":
        return reply({
          protocolVersion: "2025-11-25",
          capabilities: { tools: {} },
          serverInfo: { name: "oidc-resource", version: "0" },
        });
      case "tools/list":
        return reply({ tools: [{ name: "whoami", inputSchema: { type: "object" } }] });
      case "tools/call": {
        const who = { sub: claims.sub, iss: claims.iss, scheme: presented, jkt: (claims.cnf as { jkt?: string })?.jkt };
        return reply({ content: [{ type: "text", text: JSON.stringify(who) }] });
      }
      default:
        // A 2025-11-25 server: the 2026-07-28 probe (server/discover) is a method it does not have.
        return send(
          res,
          200,
          { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } },
          headers,
        );
    }
  };

  const server = await listenHttp(
    (req, res) => {
      listener(req, res).catch((error: unknown) =>
        send(res, 500, { error: "server_error", error_description: String(error) }),
      );
    },
    { host: "127.0.0.1", port: 0 },
  );
  origin = server.origin;
  return { url: `${origin}/mcp`, seen, proofs, nonces, accepted, stop: () => server.close() };
}
