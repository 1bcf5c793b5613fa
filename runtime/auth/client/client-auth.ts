// How a client authenticates at a token endpoint (the method its registration names, else the best the server offers) and its signing key.
import { OAuthError } from "./errors.js";
import type { SigningKeyInput } from "./keys.js";
import type { AuthorizationServer, ClientAuth, OAuthLibrary } from "./library.js";
import type { OAuthClientInformation } from "./store.js";

/**
 * The method to use: the registration's `token_endpoint_auth_method`; else private_key_jwt with a key; else, with
 * a secret, client_secret_basic unless the server lists only client_secret_post (RFC 8414's default is basic);
 * else none (a public client).
 */
export function authMethodFor(
  as: AuthorizationServer,
  client: OAuthClientInformation,
  key: SigningKeyInput | undefined,
): string {
  if (client.token_endpoint_auth_method !== undefined) return client.token_endpoint_auth_method;
  if (key !== undefined) return "private_key_jwt";
  if (client.client_secret === undefined) return "none";
  const supported = as.token_endpoint_auth_methods_supported;
  return supported !== undefined &&
    supported.includes("client_secret_post") &&
    !supported.includes("client_secret_basic")
    ? "client_secret_post"
    : "client_secret_basic";
}

/** oauth4webapi's ClientAuth for the client's method. */
export async function clientAuthentication(
  lib: OAuthLibrary,
  as: AuthorizationServer,
  client: OAuthClientInformation,
  key: SigningKeyInput | undefined,
): Promise<ClientAuth> {
  const method = authMethodFor(as, client, key);
  switch (method) {
    case "none":
      return lib.None();
    case "client_secret_basic":
    case "client_secret_post":
      if (client.client_secret === undefined || client.client_secret === "") {
        throw new OAuthError(
          "invalid_options",
          `client ${JSON.stringify(client.client_id)} authenticates with ${method} but has no client secret`,
        );
      }
      return method === "client_secret_basic"
        ? clientSecretBasic(client.client_secret)
        : lib.ClientSecretPost(client.client_secret);
    case "private_key_jwt":
      if (key === undefined)
        throw new OAuthError(
          "invalid_options",
          `client ${JSON.stringify(client.client_id)} authenticates with private_key_jwt but no private key was given`,
        );
      return lib.PrivateKeyJwt(await importSigningKey(key));
    default:
      throw new OAuthError(
        "invalid_options",
        `token endpoint authentication method ${JSON.stringify(method)} is not supported (client_secret_basic, client_secret_post, private_key_jwt, none)`,
      );
  }
}

/** What oauth4webapi's PrivateKeyJwt takes: the key and its id. */
interface ImportedKey {
  key: CryptoKeyOf<typeof crypto.subtle.importKey>;
  kid?: string;
}

type CryptoKeyOf<F> = F extends (...args: never[]) => Promise<infer K> ? K : never;

const IMPORT_PARAMETERS: Record<string, { name: string; namedCurve?: string; hash?: string }> = {
  ES256: { name: "ECDSA", namedCurve: "P-256" },
  ES384: { name: "ECDSA", namedCurve: "P-384" },
  ES512: { name: "ECDSA", namedCurve: "P-521" },
  RS256: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
  RS384: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-384" },
  RS512: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-512" },
  PS256: { name: "RSA-PSS", hash: "SHA-256" },
  PS384: { name: "RSA-PSS", hash: "SHA-384" },
  PS512: { name: "RSA-PSS", hash: "SHA-512" },
  EdDSA: { name: "Ed25519" },
  Ed25519: { name: "Ed25519" },
};

/** Imports the key (never echoing any of it in an error). */
/**
 * client_secret_basic with the id and secret percent-encoded only where needed. RFC 6749 section 2.3.1 asks for
 * form encoding first, which oauth4webapi applies in full (a "-" becomes "%2D"); servers that decode accept both
 * forms, but many never decode, and those refuse ordinary ids like "my-client" in the fully encoded form.
 * Characters that must be encoded (":", "%", non-ASCII...) still are.
 */
function clientSecretBasic(secret: string): ClientAuth {
  return (_as, client, _body, headers) => {
    headers.set(
      "authorization",
      `Basic ${btoa(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(secret)}`)}`,
    );
  };
}

async function importSigningKey(input: SigningKeyInput): Promise<ImportedKey> {
  const { key } = input;
  if (typeof key === "object" && key !== null && "usages" in key && "algorithm" in key) {
    if (key.type !== "private") throw new OAuthError("invalid_options", "the signing key must be a private key");
    return withKid(key as ImportedKey["key"], input.kid);
  }
  if (typeof key === "string") {
    const parameters = parametersFor(input.algorithm, "a PEM key");
    const body = /-----BEGIN PRIVATE KEY-----([\s\S]+?)-----END PRIVATE KEY-----/.exec(key)?.[1];
    if (body === undefined) {
      throw new OAuthError(
        "invalid_options",
        "the signing key is not a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----); convert SEC1 or PKCS#1 keys with openssl pkcs8 -topk8 -nocrypt",
      );
    }
    let der: Uint8Array;
    try {
      der = Uint8Array.from(atob(body.replace(/\s+/g, "")), (c) => c.charCodeAt(0));
    } catch {
      throw new OAuthError("invalid_options", "the signing key's PEM body is not valid base64");
    }
    return withKid(
      await importing(() => crypto.subtle.importKey("pkcs8", der, parameters, false, ["sign"]), input.algorithm!),
      input.kid,
    );
  }
  if (typeof key === "object" && key !== null && typeof key.kty === "string") {
    const algorithm = input.algorithm ?? key.alg;
    const parameters = parametersFor(algorithm, "a JWK without alg");
    const jwk = { ...key } as Record<string, unknown>;
    return withKid(
      await importing(() => crypto.subtle.importKey("jwk", jwk as never, parameters, false, ["sign"]), algorithm!),
      input.kid ?? key.kid,
    );
  }
  throw new OAuthError("invalid_options", "the signing key must be a PKCS#8 PEM string, a private JWK or a CryptoKey");
}

function parametersFor(
  algorithm: string | undefined,
  what: string,
): { name: string; namedCurve?: string; hash?: string } {
  if (algorithm === undefined)
    throw new OAuthError("invalid_options", `the signing algorithm is required for ${what} (e.g. ES256, RS256)`);
  const parameters = IMPORT_PARAMETERS[algorithm];
  if (parameters === undefined)
    throw new OAuthError(
      "invalid_options",
      `unsupported signing algorithm ${JSON.stringify(algorithm)}; use one of ${Object.keys(IMPORT_PARAMETERS).join(", ")}`,
    );
  return parameters;
}

async function importing(run: () => Promise<ImportedKey["key"]>, algorithm: string): Promise<ImportedKey["key"]> {
  try {
    return await run();
  } catch (error) {
    // WebCrypto's messages describe the mismatch, never the key material.
    const reason = error instanceof Error ? error.message : String(error);
    throw new OAuthError(
      "invalid_options",
      `the signing key could not be imported as a ${algorithm} private key: ${reason}`,
    );
  }
}

function withKid(key: ImportedKey["key"], kid: string | undefined): ImportedKey {
  return kid === undefined ? { key } : { key, kid };
}
