// DPoP (RFC 9449) for the OAuth clients: the key, proofs for the MCP server's requests and its nonces, the library's handle for token requests.
import { OAuthError } from "./errors.js";
import type { PrivateJwk } from "./keys.js";
import type { OAuthLibrary } from "./library.js";
import type { DPoPAlgorithm, DPoPKeyPair, DPoPOptions } from "./options.js";

type DPoPHandle = ReturnType<OAuthLibrary["DPoP"]>;
type Key = CryptoKeyOf<typeof crypto.subtle.importKey>;
type CryptoKeyOf<F> = F extends (...args: never[]) => Promise<infer K> ? K : never;
type KeyPair = { privateKey: Key; publicKey: Key };

interface Algorithm {
  /** For generateKey and importKey. */
  key: { name: string; namedCurve?: string; hash?: string; modulusLength?: number; publicExponent?: Uint8Array };
  /** For sign. */
  sign: { name: string; hash?: string; saltLength?: number };
}

const RSA = { modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) };

const ALGORITHMS: Record<DPoPAlgorithm, Algorithm> = {
  ES256: { key: { name: "ECDSA", namedCurve: "P-256" }, sign: { name: "ECDSA", hash: "SHA-256" } },
  ES384: { key: { name: "ECDSA", namedCurve: "P-384" }, sign: { name: "ECDSA", hash: "SHA-384" } },
  ES512: { key: { name: "ECDSA", namedCurve: "P-521" }, sign: { name: "ECDSA", hash: "SHA-512" } },
  PS256: { key: { name: "RSA-PSS", hash: "SHA-256", ...RSA }, sign: { name: "RSA-PSS", saltLength: 32 } },
  PS384: { key: { name: "RSA-PSS", hash: "SHA-384", ...RSA }, sign: { name: "RSA-PSS", saltLength: 48 } },
  PS512: { key: { name: "RSA-PSS", hash: "SHA-512", ...RSA }, sign: { name: "RSA-PSS", saltLength: 64 } },
  RS256: { key: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", ...RSA }, sign: { name: "RSASSA-PKCS1-v1_5" } },
  RS384: { key: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-384", ...RSA }, sign: { name: "RSASSA-PKCS1-v1_5" } },
  RS512: { key: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-512", ...RSA }, sign: { name: "RSASSA-PKCS1-v1_5" } },
  EdDSA: { key: { name: "Ed25519" }, sign: { name: "Ed25519" } },
  Ed25519: { key: { name: "Ed25519" }, sign: { name: "Ed25519" } },
};

/** The public members of a JWK by key type (RFC 7518, RFC 8037): what a proof's `jwk` header carries. */
const PUBLIC_MEMBERS: Record<string, readonly string[]> = { EC: ["crv", "x", "y"], RSA: ["e", "n"], OKP: ["crv", "x"] };

/** Origins whose nonce is kept at most (the least recently used is dropped), as the library does for its own. */
const MAX_NONCES = 100;

interface Keys extends KeyPair {
  /** The proofs' `alg`, named as the library names it for the same key, so both kinds of proof agree. */
  alg: string;
  signing: Algorithm["sign"];
  /** The public key as a proof's `jwk` header carries it. */
  jwk: Record<string, string>;
}

/**
 * One client's DPoP key and the nonces its MCP servers asked for. Token requests get their proofs from
 * oauth4webapi's handle (which keeps the authorization servers' nonces); requests to MCP servers get theirs here,
 * signed with the same key.
 */
export class DPoPKeys {
  private readonly options: DPoPOptions;
  private keys: Promise<Keys> | undefined;
  private library: DPoPHandle | undefined;
  private readonly nonces = new Map<string, string>();

  private constructor(options: DPoPOptions) {
    this.options = options;
  }

  /** The `dpop` option checked (OAuthError "invalid_options" when unusable); undefined when DPoP is off. */
  static from(option: boolean | DPoPOptions | undefined): DPoPKeys | undefined {
    if (option === undefined || option === false) return undefined;
    if (option === true) return new DPoPKeys({});
    if (typeof option !== "object" || option === null || Array.isArray(option))
      throw new OAuthError("invalid_options", "dpop must be true, false or { privateKey?, algorithm? }");
    const { algorithm, privateKey } = option;
    if (algorithm !== undefined && !Object.hasOwn(ALGORITHMS, algorithm)) {
      throw new OAuthError(
        "invalid_options",
        `dpop.algorithm ${JSON.stringify(algorithm)} is not supported; use one of ${Object.keys(ALGORITHMS).join(", ")}`,
      );
    }
    if (privateKey !== undefined) {
      if (typeof privateKey === "string") {
        if (!privateKey.includes("-----BEGIN PRIVATE KEY-----"))
          throw new OAuthError("invalid_options", "dpop.privateKey as a string must be a PKCS#8 PEM");
        if (algorithm === undefined)
          throw new OAuthError("invalid_options", "dpop.algorithm is required with a PEM dpop.privateKey");
      } else if (isJwk(privateKey)) {
        if (typeof privateKey.d !== "string")
          throw new OAuthError("invalid_options", "dpop.privateKey as a JWK must be a private key (with d)");
        if (PUBLIC_MEMBERS[privateKey.kty] === undefined)
          throw new OAuthError("invalid_options", "dpop.privateKey as a JWK must have kty EC, RSA or OKP");
        const alg = algorithm ?? privateKey.alg;
        if (alg === undefined || !Object.hasOwn(ALGORITHMS, alg))
          throw new OAuthError(
            "invalid_options",
            "dpop.privateKey as a JWK needs dpop.algorithm or its own supported alg",
          );
      } else if (!isKeyPair(privateKey)) {
        throw new OAuthError(
          "invalid_options",
          "dpop.privateKey must be a WebCrypto key pair { privateKey, publicKey }, a private JWK or a PKCS#8 PEM",
        );
      }
    }
    return new DPoPKeys({ ...option });
  }

  /** oauth4webapi's handle over this key, for token requests (it keeps each authorization server's nonce). */
  async handle(lib: OAuthLibrary): Promise<DPoPHandle> {
    const { privateKey, publicKey } = await this.resolve();
    this.library ??= lib.DPoP({}, { privateKey, publicKey } as Parameters<OAuthLibrary["DPoP"]>[1]);
    return this.library;
  }

  /** The key's JWK SHA-256 thumbprint (RFC 7638): a DPoP token's `cnf.jkt`. */
  async thumbprint(lib: OAuthLibrary): Promise<string> {
    return (await this.handle(lib)).calculateThumbprint();
  }

  /**
   * A proof for one request to an MCP server (RFC 9449 section 7): its method and URL (without query and fragment),
   * the access token's hash, and the nonce that server last sent, if any.
   */
  async proof(url: URL, method: string, accessToken: string): Promise<string> {
    const keys = await this.resolve();
    const payload: Record<string, unknown> = {
      iat: Math.floor(Date.now() / 1000),
      jti: base64url(crypto.getRandomValues(new Uint8Array(16))),
      htm: method,
      htu: `${url.origin}${url.pathname}`,
      ath: base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(accessToken)))),
    };
    const nonce = this.nonce(url);
    if (nonce !== undefined) payload.nonce = nonce;
    const header = { typ: "dpop+jwt", alg: keys.alg, jwk: keys.jwk };
    const input = `${base64url(json(header))}.${base64url(json(payload))}`;
    const signature = await crypto.subtle.sign(
      keys.signing as Parameters<typeof crypto.subtle.sign>[0],
      keys.privateKey,
      new TextEncoder().encode(input),
    );
    return `${input}.${base64url(new Uint8Array(signature))}`;
  }

  /** Keeps the nonce a server sent (`DPoP-Nonce`) for the next proof to its origin. */
  remember(url: URL, nonce: string | undefined): void {
    if (nonce === undefined || nonce === "") return;
    this.nonces.delete(url.origin);
    if (this.nonces.size >= MAX_NONCES) this.nonces.delete(this.nonces.keys().next().value!);
    this.nonces.set(url.origin, nonce);
  }

  /** The nonce the next proof to `url`'s origin carries. */
  nonce(url: URL): string | undefined {
    return this.nonces.get(url.origin);
  }

  private resolve(): Promise<Keys> {
    if (this.keys === undefined) {
      this.keys = loadKeys(this.options);
      // A key that cannot be used now will not be usable later either, but the error is reported on each use.
      this.keys.catch(() => (this.keys = undefined));
    }
    return this.keys;
  }
}

/** The nonce a proof carries; undefined when it has none or is not a JWT. */
export function nonceOf(proof: string | undefined): string | undefined {
  const payload = proof?.split(".")[1];
  if (payload === undefined) return undefined;
  try {
    const claims: unknown = JSON.parse(new TextDecoder().decode(fromBase64url(payload)));
    const nonce = (claims as { nonce?: unknown } | null)?.nonce;
    return typeof nonce === "string" ? nonce : undefined;
  } catch {
    return undefined;
  }
}

async function loadKeys(options: DPoPOptions): Promise<Keys> {
  const given = options.privateKey;
  let pair: KeyPair;
  let wanted = options.algorithm;
  if (given === undefined) {
    const algorithm = ALGORITHMS[wanted ?? "ES256"];
    // The private half is not extractable: nothing in this process can read it back out.
    pair = (await crypto.subtle.generateKey(algorithm.key as never, false, ["sign", "verify"])) as unknown as KeyPair;
  } else if (typeof given === "string") {
    pair = await fromPem(given, ALGORITHMS[wanted!]);
  } else if (isJwk(given)) {
    wanted ??= given.alg as DPoPAlgorithm;
    pair = await fromJwk(given, ALGORITHMS[wanted]);
  } else {
    pair = given as unknown as KeyPair;
    if (pair.privateKey.type !== "private" || pair.publicKey.type !== "public" || !pair.publicKey.extractable)
      throw new OAuthError(
        "invalid_options",
        "dpop.privateKey must pair a private key with its extractable public key",
      );
  }
  const alg = jwsAlgorithm(pair.privateKey);
  if (wanted !== undefined && alg !== (wanted === "EdDSA" ? "Ed25519" : wanted))
    throw new OAuthError("invalid_options", `dpop.privateKey is a ${alg} key, not ${wanted}`);
  const exported = (await crypto.subtle.exportKey("jwk", pair.publicKey)) as Record<string, unknown>;
  return { ...pair, alg, signing: signingOf(pair.privateKey), jwk: publicMembers(exported) };
}

async function fromJwk(jwk: PrivateJwk, algorithm: Algorithm): Promise<KeyPair> {
  return importing(async () => ({
    privateKey: await crypto.subtle.importKey("jwk", { ...jwk } as never, algorithm.key as never, false, ["sign"]),
    publicKey: await crypto.subtle.importKey("jwk", publicMembers(jwk) as never, algorithm.key as never, true, [
      "verify",
    ]),
  }));
}

async function fromPem(pem: string, algorithm: Algorithm): Promise<KeyPair> {
  const body = /-----BEGIN PRIVATE KEY-----([\s\S]+?)-----END PRIVATE KEY-----/.exec(pem)?.[1];
  if (body === undefined) throw new OAuthError("invalid_options", "dpop.privateKey is not a PKCS#8 PEM");
  let der: Uint8Array;
  try {
    der = fromBase64(body.replace(/\s+/g, ""));
  } catch {
    throw new OAuthError("invalid_options", "dpop.privateKey's PEM body is not valid base64");
  }
  // Imported extractable only to read its public half, then used through a non-extractable copy.
  const jwk = await importing(async () => {
    const key = await crypto.subtle.importKey("pkcs8", der as never, algorithm.key as never, true, ["sign"]);
    return (await crypto.subtle.exportKey("jwk", key)) as PrivateJwk;
  });
  return fromJwk(jwk, algorithm);
}

async function importing<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    // WebCrypto's messages describe the mismatch, never the key material.
    const reason = error instanceof Error ? error.message : String(error);
    throw new OAuthError("invalid_options", `dpop.privateKey could not be imported: ${reason}`);
  }
}

/** The JWS `alg` of a key, as oauth4webapi names it (so its proofs and ours carry the same). */
function jwsAlgorithm(key: Key): string {
  const algorithm = key.algorithm as { name: string; namedCurve?: string; hash?: { name: string } };
  const bits = algorithm.hash?.name.replace("SHA-", "");
  switch (algorithm.name) {
    case "ECDSA": {
      const curve = { "P-256": "256", "P-384": "384", "P-521": "512" }[algorithm.namedCurve ?? ""];
      if (curve !== undefined) return `ES${curve}`;
      break;
    }
    case "RSA-PSS":
      if (bits !== undefined) return `PS${bits}`;
      break;
    case "RSASSA-PKCS1-v1_5":
      if (bits !== undefined) return `RS${bits}`;
      break;
    case "Ed25519":
      return "Ed25519";
  }
  throw new OAuthError("invalid_options", `dpop.privateKey's algorithm ${algorithm.name} cannot sign DPoP proofs`);
}

function signingOf(key: Key): Algorithm["sign"] {
  const algorithm = key.algorithm as { name: string; namedCurve?: string; hash?: { name: string } };
  switch (algorithm.name) {
    case "ECDSA":
      return {
        name: "ECDSA",
        hash: { "P-256": "SHA-256", "P-384": "SHA-384", "P-521": "SHA-512" }[algorithm.namedCurve ?? ""]!,
      };
    case "RSA-PSS":
      return { name: "RSA-PSS", saltLength: Number(algorithm.hash!.name.replace("SHA-", "")) / 8 };
    default:
      return { name: algorithm.name };
  }
}

function publicMembers(jwk: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = { kty: String(jwk.kty) };
  for (const name of PUBLIC_MEMBERS[String(jwk.kty)] ?? []) if (typeof jwk[name] === "string") out[name] = jwk[name];
  return out;
}

function isJwk(value: unknown): value is PrivateJwk {
  return typeof value === "object" && value !== null && typeof (value as { kty?: unknown }).kty === "string";
}

function isKeyPair(value: unknown): value is DPoPKeyPair {
  const pair = value as { privateKey?: unknown; publicKey?: unknown } | null;
  const isKey = (key: unknown) =>
    typeof key === "object" && key !== null && "algorithm" in key && "usages" in key && "type" in key;
  return typeof pair === "object" && pair !== null && isKey(pair.privateKey) && isKey(pair.publicKey);
}

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function fromBase64url(text: string): Uint8Array {
  const padded = text.replace(/-/g, "+").replace(/_/g, "/");
  return fromBase64(padded + "=".repeat((4 - (padded.length % 4)) % 4));
}
