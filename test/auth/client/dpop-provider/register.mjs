// Loaded with --import into the oidc-provider fixture's process: swaps in the DPoP shim for the "oidc-provider" package.
import { register } from "node:module";

register("./hooks.mjs", import.meta.url);
