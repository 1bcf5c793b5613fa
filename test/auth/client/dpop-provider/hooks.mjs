// Module resolve hook: every import of "oidc-provider" but the shim's own gets the shim.
const SHIM = new URL("./shim.mjs", import.meta.url).href;

export async function resolve(specifier, context, next) {
  if (specifier === "oidc-provider" && context.parentURL !== SHIM) return { url: SHIM, shortCircuit: true };
  return next(specifier, context);
}
