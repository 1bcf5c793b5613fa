// The private keys a client may sign its private_key_jwt assertions with (declarations only).

/** A WebCrypto private key (a CryptoKey with "sign" usage), described structurally so no DOM typings are needed. */
export interface WebCryptoPrivateKey {
  readonly type: string;
  readonly algorithm: { readonly name: string };
  readonly extractable: boolean;
  readonly usages: readonly string[];
}

/** A private JSON Web Key (RFC 7517). */
export interface PrivateJwk {
  readonly kty: string;
  readonly alg?: string;
  readonly kid?: string;
  readonly [member: string]: unknown;
}

/** The key a client signs its assertions with. */
export interface SigningKeyInput {
  /** A PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"), a private JWK, or a WebCrypto CryptoKey. */
  key: string | PrivateJwk | WebCryptoPrivateKey;
  /**
   * The JWS algorithm: ES256, ES384, ES512, RS256, RS384, RS512, PS256, PS384, PS512 or EdDSA (Ed25519). Needed for
   * a PEM; a JWK's own `alg` is used when this is absent; a CryptoKey's algorithm decides by itself.
   */
  algorithm?: string;
  /** A key id for the assertion's header (`kid`); a JWK's own `kid` when absent. */
  kid?: string;
}
