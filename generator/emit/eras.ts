// Emits eras.ts: the era map as plain data (no imports), so any layer can read which revision has what.
import type { EraMap, RevisionFacts } from "../eras.js";
import { headerOf } from "./header.js";

const q = (s: string): string => JSON.stringify(s);

/** An object literal, one member a line at `indent`, or `{}` when empty. */
function objectLines(entries: [string, string][], indent: string): string {
  if (entries.length === 0) return "{}";
  return ["{", ...entries.map(([k, v]) => `${indent}  ${q(k)}: ${v},`), `${indent}}`].join("\n");
}

/** Where a revision's wire module lies, relative to eras.ts: the SDK's beside it, the others in their folder. */
export function moduleFolder(r: RevisionFacts): string {
  return r.sdk ? "." : `./${r.revision}`;
}

function revisionLiteral(r: RevisionFacts): string {
  const strings = (m: Map<string, string>) => [...m].map(([k, v]): [string, string] => [k, q(v)]);
  const inputs = [...r.inputRequests].map(([method, f]): [string, string] => [
    method,
    `{ paramsGuard: ${q(`is${f.params}`)}, resultGuards: [${f.results.map((x) => q(`is${x}`)).join(", ")}]${f.capability !== undefined ? `, capability: ${q(f.capability)}` : ""} }`,
  ]);
  return [
    "{",
    `    module: ${q(moduleFolder(r))},`,
    `    cacheable: ${objectLines(strings(r.cacheable), "    ")},`,
    `    mcpName: ${objectLines(strings(r.mcpName), "    ")},`,
    `    inputRequests: ${objectLines(inputs, "    ")},`,
    "  }",
  ].join("\n");
}

export function emitEras(eras: EraMap): string {
  const names = eras.revisions.map((r) => r.revision);
  const sdk = eras.revisions.find((r) => r.sdk)!;
  const methodLines = [...eras.methods].map(([method, revisions]) => {
    const per = revisions.map((name) => {
      const m = eras.revisions.find((r) => r.revision === name)!.methods.get(method)!;
      return `${q(name)}: { kind: ${q(m.kind)}, direction: ${q(m.direction)} }`;
    });
    return `  ${q(method)}: { ${per.join(", ")} },`;
  });
  return [
    headerOf(
      eras.revisions.map((r) => r.source),
      sdk.source.command,
      "The era map: the methods of each revision, its cacheable results, Mcp-Name params and input requests.",
    ),
    "/** The revisions this SDK speaks, oldest first. */",
    `export const revisions = [${names.map(q).join(", ")}] as const;`,
    "/** A revision this SDK speaks. */",
    "export type Revision = (typeof revisions)[number];",
    "/** The revision the stubs and handler types are made from. */",
    `export const sdkRevision: Revision = ${q(sdk.revision)};`,
    "",
    "/** How a method travels in one revision. */",
    "export interface MethodIn {",
    '  readonly kind: "request" | "notification";',
    '  readonly direction: "client-to-server" | "server-to-client" | "both";',
    "}",
    "",
    "/** What an input request needs: guard names in its revision's guards.ts, and the client capability it requires. */",
    "export interface InputRequestFacts {",
    "  /** The guard of its params. */",
    "  readonly paramsGuard: string;",
    "  /** The guards of the client's answer: it is valid when one of them accepts it. */",
    "  readonly resultGuards: readonly string[];",
    "  /** The client capability it requires, as a dotted path into the client's capabilities; absent: none. */",
    "  readonly capability?: string;",
    "}",
    "",
    "/** What a revision has beyond its methods. Look members up with Object.hasOwn: these are plain objects. */",
    "export interface RevisionFacts {",
    "  /** Its wire module (types.js, guards.js, validators.js, dispatch.js), relative to this file. */",
    "  readonly module: string;",
    "  /** Requests whose complete result extends CacheableResult (carries ttlMs and cacheScope): method to that result. */",
    "  readonly cacheable: { readonly [method: string]: string };",
    "  /** Requests whose Mcp-Name HTTP header carries a member of their params: method to that member. */",
    "  readonly mcpName: { readonly [method: string]: string };",
    "  /**",
    "   * Requests a server may ask inside an `input_required` result, for the client to answer in the retry's",
    "   * `inputResponses`; the revision's dispatch.js has them as the `inputRequests` table.",
    "   */",
    "  readonly inputRequests: { readonly [method: string]: InputRequestFacts };",
    "}",
    "",
    "/**",
    " * Per method, the revisions that have it as a message of its own and how it travels in each. A method is missing",
    " * from a revision that dropped it. Look methods up with Object.hasOwn: this is a plain object.",
    " */",
    "export const methods: { readonly [method: string]: { readonly [R in Revision]?: MethodIn } } = {",
    ...methodLines,
    "};",
    "",
    "/** Per revision, what it has beyond its methods. */",
    "export const eras: { readonly [R in Revision]: RevisionFacts } = {",
    ...eras.revisions.map((r) => `  ${q(r.revision)}: ${revisionLiteral(r)},`),
    "};",
    "",
  ].join("\n");
}

/** A name a revision can take inside an identifier (2026-07-28 -> 2026_07_28). */
const ident = (revision: string): string => revision.replace(/[^A-Za-z0-9_$]/g, "_");

/**
 * Emits revisions.ts: the tables of each revision after the SDK's, as the runtime's era modules take them (its
 * client-to-server table, its input requests, its cacheable results). The server stub passes them to every session.
 */
export function emitRevisionTables(eras: EraMap, runtimeImport: string): string {
  const sdk = eras.revisions.find((r) => r.sdk)!;
  const others = eras.revisions.filter((r) => !r.sdk);
  const imports = others.map((r) => {
    const names = [`clientToServer as inbound_${ident(r.revision)}`];
    if (r.inputRequests.size > 0) names.push(`inputRequests as inputRequests_${ident(r.revision)}`);
    return `import { ${names.join(", ")} } from "${moduleFolder(r)}/dispatch.js";`;
  });
  const entries = others.map((r) => {
    const members = [`inbound: inbound_${ident(r.revision)}`];
    if (r.inputRequests.size > 0) members.push(`inputRequests: inputRequests_${ident(r.revision)}`);
    members.push(`cacheable: eras[${q(r.revision)}].cacheable`);
    return `  ${q(r.revision)}: { ${members.join(", ")} },`;
  });
  return [
    headerOf(
      eras.revisions.map((r) => r.source),
      sdk.source.command,
      "The tables of each revision after the SDK's, for the runtime's era modules.",
    ),
    `import type { RevisionTableMap } from "${runtimeImport}";`,
    ...imports,
    `import { eras } from "./eras.js";`,
    "",
    "/**",
    " * Pass as `revisions` to a ServerSession or McpServer built from the tables by hand; the generated `Server.create`",
    " * and `createMcpServer` pass them. A server speaks a revision after the SDK's only when it has its tables.",
    " */",
    "export const revisionTables: RevisionTableMap = {",
    ...entries,
    "};",
    "",
  ].join("\n");
}
