// Emits a catalogue's typed bindings (index.ts): argument and result types per tool, bindTools(client), the result checker.
import { headerOf } from "../emit/header.js";
import { compareCodeUnits, isObject } from "../json.js";
import { getAt, toPointer, unescapeToken } from "../pointer.js";
import { toolName, type JsonObject, type LoadedCatalogue } from "./catalogue.js";
import { CHECKER_SOURCE } from "./checker-source.js";
import { nameMethods, pascalCase } from "./names.js";
import { localTarget, walkSchema } from "./schema-walk.js";
import { docComment, refTargets, tsType, type TypeScope } from "./ts-types.js";

export interface BindingsOptions {
  loaded: LoadedCatalogue;
  /** The catalogue as headers name it (relative to the working directory). */
  sourceName: string;
  /** Module the bindings import the SDK from (Client, CallToolResult, RpcError). */
  sdkImport: string;
  /** The command that regenerates the file, named in its header. */
  command: string;
}

export interface Bindings {
  content: string;
  /** What the user should know: name collisions, references not fetched, keywords the checker does not assert. */
  notes: string[];
}

/** Names every type alias of the file once: a name taken gets 2, 3... */
class TypeNames {
  private readonly taken = new Set(["ToolResult", "ToolResultIssue", "ToolCallOptions", "ToolCaller", "Tools"]);
  claim(wanted: string): string {
    let name = wanted;
    for (let n = 2; this.taken.has(name); n++) name = `${wanted}${n}`;
    this.taken.add(name);
    return name;
  }
}

/** One schema of one tool, typed: its root alias and one alias per local reference target. */
interface TypedSchema {
  rootName: string;
  declarations: string[];
}

function refsOf(schema: unknown): string[] {
  const refs: string[] = [];
  walkSchema(schema, (node) => {
    if (typeof node["$ref"] === "string") refs.push(node["$ref"]);
  });
  return refs;
}

/**
 * The type aliases of one schema: `rootName` for the whole, `<rootName>_<Last token>` for each local `$ref` target.
 * `subject` says whose schema it is ("the arguments of tool `echo`") in their doc comments.
 */
function typeSchema(
  schema: unknown,
  rootName: string,
  names: TypeNames,
  subject: string,
  argumentsType: boolean,
): TypedSchema {
  const targets = refTargets(schema, refsOf(schema));
  const claimed = names.claim(rootName);
  const aliases = new Map<string, string>([["", claimed]]);
  for (const target of targets) {
    if (target === "") continue;
    const last = unescapeToken(target.slice(target.lastIndexOf("/") + 1));
    aliases.set(target, names.claim(`${claimed}_${pascalCase(last)}`));
  }
  const scope: TypeScope = { root: schema, names: aliases };
  let rootType = tsType(schema, scope);
  // Arguments travel as a JSON object: a schema that says nothing more still types them as one.
  if (argumentsType && rootType === "unknown") rootType = "{ [key: string]: unknown }";
  const whole = subject[0]!.toUpperCase() + subject.slice(1);
  const declarations = [`${docComment(schema, "", [`${whole}.`])}export type ${claimed} = ${rootType};`];
  for (const target of targets) {
    if (target === "") continue;
    const node = getAt(schema, target);
    declarations.push(
      `${docComment(node, "", [`\`#${target}\` in ${subject}.`])}export type ${aliases.get(target)} = ${tsType(node, scope)};`,
    );
  }
  return { rootName: claimed, declarations };
}

/** Whether a call may leave the arguments out: the root requires nothing (and combines no other schemas). */
function argumentsOptional(schema: unknown): boolean {
  if (!isObject(schema)) return true;
  const required = schema["required"];
  if (Array.isArray(required) && required.length > 0) return false;
  return !["$ref", "allOf", "anyOf", "oneOf", "if", "dependentRequired", "minProperties"].some(
    (k) => schema[k] !== undefined,
  );
}

/** Notes for what the file cannot type or check: references to other documents, keywords the checker skips. */
function schemaNotes(tool: JsonObject, index: number, part: "inputSchema" | "outputSchema", file: string): string[] {
  const schema = tool[part];
  const notes: string[] = [];
  walkSchema(schema, (node, tokens) => {
    const at = `${file}#${toPointer(["tools", index, part, ...tokens])}`;
    const ref = node["$ref"];
    if (typeof ref === "string" && localTarget(schema, ref) === "remote") {
      // An anchor inside the document is found by the checker; only the types cannot follow it.
      const anchor = /^#[A-Za-z_][-A-Za-z0-9._]*$/.test(ref);
      const checked = part !== "outputSchema" ? "" : anchor ? ", checked" : ", not checked";
      notes.push(
        `${at}: $ref ${JSON.stringify(ref)} ${anchor ? "names an anchor" : "is not fetched"}: typed unknown${checked}`,
      );
    }
  });
  return notes;
}

const indentJson = (value: unknown, indent: string): string =>
  JSON.stringify(value, null, 2).split("\n").join(`\n${indent}`);

export function emitBindings(options: BindingsOptions): Bindings {
  const { catalogue } = options.loaded;
  const tools = catalogue.tools;
  const { methods, collisions, collided } = nameMethods(tools.map(toolName));
  const notes = [...collisions];
  const names = new TypeNames();
  const declarations: string[] = [];
  const members: string[] = [];
  const bodies: string[] = [];
  const schemas: string[] = [];
  // Tools in name order: the file is the same for the same catalogue, whatever order the server listed them in.
  const order = tools
    .map((tool, index) => ({ tool, index }))
    .sort((a, b) => compareCodeUnits(toolName(a.tool), toolName(b.tool)));
  for (const { tool, index } of order) {
    const name = toolName(tool);
    const method = methods.get(name)!;
    const pascal = pascalCase(method);
    notes.push(...schemaNotes(tool, index, "inputSchema", options.sourceName));
    const input = typeSchema(
      tool["inputSchema"],
      `${pascal}Arguments`,
      names,
      `the arguments of tool \`${name}\``,
      true,
    );
    declarations.push(...input.declarations);
    let resultType = "CallToolResult";
    let outputName: string | undefined;
    if (isObject(tool["outputSchema"])) {
      notes.push(...schemaNotes(tool, index, "outputSchema", options.sourceName));
      const output = typeSchema(
        tool["outputSchema"],
        `${pascal}Output`,
        names,
        `the structured content of tool \`${name}\` (its outputSchema), checked on every result that is not an error`,
        false,
      );
      declarations.push(...output.declarations);
      outputName = output.rootName;
      resultType = `ToolResult<${outputName}>`;
      schemas.push(`  ${JSON.stringify(name)}: ${indentJson(tool["outputSchema"], "  ")},`);
    }
    const doc: string[] = [];
    const description = typeof tool["description"] === "string" ? tool["description"].trim() : "";
    if (description !== "") doc.push(...description.split(/\r?\n/), "");
    doc.push(
      `Calls tool \`${name}\`${collided.has(name) ? ` (as ${method}: other tools' names make the same method)` : ""}.` +
        (outputName !== undefined ? " Rejects with -32602 when its structured result breaks the outputSchema." : ""),
    );
    const optional = argumentsOptional(tool["inputSchema"]);
    members.push(
      `${docComment({ description: doc.join("\n") }, "  ")}  ${method}(args${optional ? "?" : ""}: ${input.rootName}, options?: ToolCallOptions): Promise<${resultType}>;`,
    );
    const call = `call(${JSON.stringify(name)}, args, options)`;
    bodies.push(
      outputName !== undefined
        ? `    ${method}: (args, options) => ${call}.then((result) => _checked<${outputName}>(${JSON.stringify(name)}, result)),`
        : `    ${method}: (args, options) => ${call},`,
    );
  }

  const server = `${catalogue.server.name} ${catalogue.server.version}`.trim();
  const header = headerOf(
    [{ name: options.sourceName, sha256: options.loaded.sha256 }],
    options.command,
    `Typed tools of ${server || "the server"}: bindTools(client) has one method per tool; structured results are checked.`,
    "pull the catalogue again (mcpgen tools pull)",
  );
  const sdk = JSON.stringify(options.sdkImport);
  const lines = [
    header,
    // The checker's error is a value import; without any outputSchema there is nothing to check.
    ...(schemas.length > 0 ? [`import { ErrorCode, RpcError } from ${sdk};`] : []),
    `import type { CallToolResult, Client, RequestOrTaskOptions } from ${sdk};`,
    "",
    ...declarations.flatMap((d) => [d, ""]),
    "/** Options of one call: a signal, a timeout, progress (a call the server runs as a task is followed to its result). */",
    `export type ToolCallOptions = Omit<RequestOrTaskOptions, "task">;`,
    "",
    "/** A tools/call result whose structuredContent is the tool's declared output, checked, unless the call failed. */",
    "export type ToolResult<Output> =",
    "  | (CallToolResult & { isError?: false; structuredContent: Output })",
    "  | (CallToolResult & { isError: true });",
    "",
    "/** What the bindings call: the generated `Client`, or anything with its `callTool`. */",
    `export type ToolCaller = Pick<Client, "callTool">;`,
    "",
    `/** The tools of ${server || "the server"}, one method each. */`,
    "export interface Tools {",
    ...members,
    "}",
    "",
    "/** One method per tool, calling it through `client`. */",
    ...(bodies.length === 0
      ? ["export function bindTools(_client: ToolCaller): Tools {", "  return {};", "}"]
      : [
          "export function bindTools(client: ToolCaller): Tools {",
          "  const call = (",
          "    name: string,",
          "    args: { [key: string]: unknown } | undefined,",
          "    options: ToolCallOptions | undefined,",
          "  ): Promise<CallToolResult> => client.callTool({ name, arguments: args ?? {} }, options);",
          "  return {",
          ...bodies,
          "  };",
          "}",
        ]),
  ];
  if (schemas.length > 0) {
    lines.push(
      "",
      "/** Each tool's outputSchema, as the catalogue has it. */",
      "const _outputSchemas: { readonly [tool: string]: unknown } = {",
      ...schemas,
      "};",
      "",
      "/** The result when its structured content fits the tool's outputSchema (or the call failed); else a -32602 RpcError. */",
      "function _checked<Output>(tool: string, result: CallToolResult): ToolResult<Output> {",
      `  if (result["isError"] === true) return result as ToolResult<Output>;`,
      "  const schema = _outputSchemas[tool];",
      '  const content = result["structuredContent"];',
      "  const issues: ToolResultIssue[] = [];",
      "  if (content === undefined)",
      `    issues.push({ pointer: "/structuredContent", message: "must be present (the tool declares an outputSchema)" });`,
      `  else _check(schema, content, schema, "/structuredContent", issues, []);`,
      "  const first = issues[0];",
      "  if (first !== undefined)",
      "    throw new RpcError(",
      "      ErrorCode.InvalidParams,",
      "      `Invalid structured result from tool ${JSON.stringify(tool)}: ${first.pointer} ${first.message}`,",
      "      { tool, errors: issues },",
      "    );",
      "  return result as ToolResult<Output>;",
      "}",
      "",
      CHECKER_SOURCE.trimEnd(),
    );
  }
  return { content: lines.join("\n") + "\n", notes };
}
