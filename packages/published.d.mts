// Types of packages/published.mjs (a plain script, so that bench/package.js can use it without a build).
/** The folder of each published package, by name. */
export declare const PUBLISHED: { readonly mcpgen: string; readonly "mcpgen-cli": string };
/** Whether a path inside a tarball (relative to its package folder) looks like a test, example, fixture or repo script. */
export declare function isRepoOnlyFile(path: string): boolean;
