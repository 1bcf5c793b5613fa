// oidc-provider with DPoP nonces (features.dPoP.nonceSecret, requireNonce), for the fixture in test/fixtures/oidc/provider.mjs.
//
// The settings come as JSON in MCPGEN_TEST_DPOP: { "requireNonce": boolean }.
import { randomBytes } from "node:crypto";
import Provider from "oidc-provider";

export * from "oidc-provider";

const settings = JSON.parse(process.env.MCPGEN_TEST_DPOP ?? "{}");

export default class DPoPNonceProvider extends Provider {
  constructor(issuer, configuration) {
    const dPoP = { enabled: true, nonceSecret: randomBytes(32), requireNonce: () => settings.requireNonce === true };
    super(issuer, { ...configuration, features: { ...configuration.features, dPoP } });
  }
}
