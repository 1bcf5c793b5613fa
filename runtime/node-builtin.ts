// Node's built-in modules looked up at run time, so that modules browsers and workers load import no node:* module.

/** The modules the runtime borrows from Node where it runs there; `import type` only, so nothing is loaded. */
interface Builtins {
  "node:crypto": typeof import("node:crypto");
  "node:events": typeof import("node:events");
  "node:fs": typeof import("node:fs");
  "node:http": typeof import("node:http");
  "node:https": typeof import("node:https");
  "node:path": typeof import("node:path");
}

/**
 * The built-in module `id` when running on Node (20.16 and later, or another runtime with
 * `process.getBuiltinModule`), else undefined. No `import` statement names it, so a bundle for the browser
 * neither fails on it nor carries it.
 */
export function nodeBuiltin<ID extends keyof Builtins>(id: ID): Builtins[ID] | undefined {
  const proc = (
    globalThis as { process?: { getBuiltinModule?: (id: string) => unknown; versions?: { node?: unknown } } }
  ).process;
  if (typeof proc?.getBuiltinModule !== "function" || typeof proc.versions?.node !== "string") return undefined;
  return (proc.getBuiltinModule(id) ?? undefined) as Builtins[ID] | undefined;
}
