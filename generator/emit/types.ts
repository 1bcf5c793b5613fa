// Emits types.ts: an interface or type alias per definition, with the schema's descriptions as doc comments,
// by json-schema-to-typescript. References are handed over as named types so no numbered copies appear.
import { compile } from "json-schema-to-typescript";
import type { Model } from "../model.js";
import { header } from "./header.js";
import { schemaOf } from "./schema-of.js";

/** Re-indents json-schema-to-typescript's unformatted output by brace depth (cheaper than running prettier). */
export function indentTs(source: string): string {
  let depth = 0;
  const out: string[] = [];
  for (const raw of source.split("\n")) {
    const line = raw.trim();
    if (line === "") {
      out.push("");
      continue;
    }
    const isComment = line.startsWith("/**") || line.startsWith("*") || line.startsWith("//");
    if (isComment) {
      out.push("  ".repeat(depth) + (line.startsWith("*") ? " " + line : line).replace(/\s+$/, ""));
      continue;
    }
    let opens = 0;
    let closes = 0;
    let inString: string | null = null;
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (inString) {
        if (c === "\\") i++;
        else if (c === inString) inString = null;
      } else if (c === '"' || c === "'") inString = c;
      else if (c === "{" || c === "(" || c === "[") opens++;
      else if (c === "}" || c === ")" || c === "]") closes++;
    }
    const leadingCloses = /^[}\])]+/.exec(line)?.[0].length ?? 0;
    const indent = Math.max(0, depth - leadingCloses);
    out.push("  ".repeat(indent) + line);
    depth = Math.max(0, depth + opens - closes);
  }
  return out.join("\n");
}

export async function emitTypes(model: Model): Promise<string> {
  const definitions: Record<string, unknown> = {};
  for (const d of model.definitions) {
    definitions[d.name] = {
      ...schemaOf(d.node, { descriptions: true, tsHints: true, ref: (name) => ({ tsType: name }) }),
      title: d.name,
    };
  }
  const root = { title: "_Root", type: "object", additionalProperties: false, properties: {}, definitions };
  const compiled = await compile(root as never, "_Root", {
    bannerComment: "",
    format: false,
    additionalProperties: false,
    unreachableDefinitions: true,
    unknownAny: true,
    strictIndexSignatures: false,
    declareExternallyReferenced: true,
    ignoreMinAndMaxItems: true,
    $refOptions: {},
  });
  const body = compiled
    .replace(/export interface _Root \{\s*\}\n?/, "")
    // The tool notes where each definition came from; here that is every one of them.
    .replace(
      /\n \*\n \* This interface was referenced by `_Root`'s JSON-Schema\n \* via the `definition` "[^"]*"\./g,
      "",
    )
    .replace(
      /\/\*\*\n \* This interface was referenced by `_Root`'s JSON-Schema\n \* via the `definition` "[^"]*"\.\n \*\/\n/g,
      "",
    )
    .trim();
  // One blank line between top-level declarations.
  const spaced = indentTs(body).replace(/\n(\/\*\*|export )/g, (m, start: string, offset: number, all: string) =>
    all[offset - 1] === "\n" ? m : "\n\n" + start,
  );
  return (
    header(model, "Types: an interface or type alias for every definition of the schema.") +
    "\n" +
    spaced.replace(/\n{3,}/g, "\n\n") +
    "\n"
  );
}
