// mcpgen tools generate: bindings headed like every generated file, accepted by a strict tsc (which refuses wrong arguments), calling server-everything, checking structured results.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExampleHttpServer } from "../../examples/http-server.js";
import { runCliAsync } from "../kit/cli.js";
import { repoRoot } from "../kit/paths.js";
import { follow } from "../kit/streams.js";
import { cliIn, consumerProject, EVERYTHING, everythingBin, run, tsc } from "./helpers.js";

type Json = { [key: string]: unknown };

let project: string;
let everything: Json;

const cli = (args: string[]) => cliIn(project, args);

function writeJson(name: string, value: unknown): void {
  writeFileSync(join(project, name), JSON.stringify(value, null, 2) + "\n");
}

/** A catalogue written by hand: two tools whose names make the same method, and one with nested, recursive and union schemas. */
const SHAPES = {
  mcpgenCatalogue: 1,
  server: { name: "shapes", version: "1.0.0" },
  protocolVersion: "2025-11-25",
  prompts: [],
  resourceTemplates: [],
  tools: [
    { name: "get-sum", inputSchema: { type: "object", properties: { a: { type: "number" } }, required: ["a"] } },
    { name: "get_sum", inputSchema: { type: "object", properties: { b: { type: "string" } }, required: ["b"] } },
    {
      name: "shapes",
      description: "Draws shapes.",
      inputSchema: {
        type: "object",
        properties: { tree: { $ref: "#/$defs/Node" } },
        required: ["tree"],
        $defs: {
          Node: {
            type: "object",
            properties: { value: { type: "integer" }, children: { type: "array", items: { $ref: "#/$defs/Node" } } },
            required: ["value"],
          },
        },
      },
      outputSchema: {
        type: "object",
        $defs: {
          Shape: {
            oneOf: [
              {
                type: "object",
                properties: { kind: { const: "circle" }, radius: { type: "number", exclusiveMinimum: 0 } },
                required: ["kind", "radius"],
                additionalProperties: false,
              },
              {
                type: "object",
                properties: { kind: { const: "square" }, side: { type: "number", minimum: 0 } },
                required: ["kind", "side"],
                additionalProperties: false,
              },
            ],
          },
        },
        properties: {
          shapes: { type: "array", items: { $ref: "#/$defs/Shape" }, minItems: 1 },
          label: { type: "string", pattern: "^[a-z]+$", maxLength: 8 },
          color: { enum: ["red", "green"] },
          tags: { type: "array", items: { type: "string" }, uniqueItems: true },
          meta: { type: ["object", "null"], additionalProperties: { type: "number" } },
          size: { allOf: [{ type: "integer" }, { minimum: 1 }, { maximum: 10 }] },
        },
        required: ["shapes", "label"],
        additionalProperties: false,
      },
    },
  ],
};

/** Right calls, wrong ones each under @ts-expect-error (an unused one fails the compile), and runs against the server. */
const MAIN = `import { Client, RpcError, StdioClientTransport } from "mcpgen";
import { bindTools } from "./everything/index.js";
import { bindTools as bindBroken } from "./broken/index.js";
import { bindTools as bindShapes, type Tools as ShapesTools } from "./shapes/index.js";

const transport = new StdioClientTransport({ command: process.execPath, args: [process.argv[2] ?? "", "stdio"], stderr: "ignore" });
const client = await Client.connect(transport, { clientInfo: { name: "bindings", version: "1" } });
try {
  const tools = bindTools(client);
  const echo = await tools.echo({ message: "typed" });
  const sum = await tools.getSum({ a: 2, b: 3 });
  const weather = await tools.getStructuredContent({ location: "Chicago" });
  const temperature: number | undefined = weather.isError ? undefined : weather.structuredContent.temperature;
  console.log(JSON.stringify({ echo: echo.content, sum: sum.content, temperature: typeof temperature }));
  await bindBroken(client)
    .getStructuredContent({ location: "Chicago" })
    .then(
      () => console.log(JSON.stringify({ broken: "resolved" })),
      (error: unknown) => {
        if (error instanceof RpcError) console.log(JSON.stringify({ code: error.code, message: error.message, data: error.data }));
      },
    );
} finally {
  await client.peer.close();
}

export async function typesOnly(shapes: ShapesTools): Promise<void> {
  const tools = bindTools(client);
  // @ts-expect-error a is a number
  await tools.getSum({ a: "2", b: 3 });
  // @ts-expect-error b is required
  await tools.getSum({ a: 2 });
  // @ts-expect-error location is one of three cities
  await tools.getStructuredContent({ location: "Paris" });
  // @ts-expect-error the arguments are required
  await tools.echo();
  const result = await shapes.shapes({ tree: { value: 1, children: [{ value: 2, children: [] }] } });
  if (!result.isError) {
    const first = result.structuredContent.shapes[0];
    if (first?.kind === "circle") first.radius.toFixed(1);
    // @ts-expect-error a square has no radius
    if (first?.kind === "square") first.radius.toFixed(1);
  }
  // @ts-expect-error value is an integer
  await shapes.shapes({ tree: { value: "1" } });
  await shapes.getSum({ a: 1 });
  await shapes.getSum2({ b: "x" });
  void bindShapes;
}
`;

/** The structured-result checker, driven by a client that answers what each case says. */
const CHECKS = `import type { RpcError } from "mcpgen";
import { bindTools, type ToolCaller } from "./shapes/index.js";

const cases: unknown[] = JSON.parse(process.argv[2] ?? "[]");
let next: unknown;
const fake = { callTool: () => Promise.resolve(next) } as unknown as ToolCaller;
const tools = bindTools(fake);
for (const result of cases) {
  next = result;
  const outcome = await tools.shapes({ tree: { value: 1 } }).then(
    () => ({ ok: true }),
    (error: RpcError) => ({ code: error.code, message: error.message, errors: (error.data as { errors: unknown }).errors }),
  );
  console.log(JSON.stringify(outcome));
}
`;

/** The example HTTP server's `add`, through bindings generated from its catalogue, over Streamable HTTP. */
const HTTP = `import { Client, StreamableHttpClientTransport } from "mcpgen";
import { bindTools } from "./example/index.js";

const client = await Client.connect(new StreamableHttpClientTransport({ url: process.argv[2] ?? "" }), {
  clientInfo: { name: "bindings", version: "1" },
});
try {
  const sum = await bindTools(client).add({ a: 2, b: 3 });
  console.log(JSON.stringify({ era: client.peer.era, sum: sum.content }));
} finally {
  await client.peer.close();
}
`;

const WRONG = `import { Client } from "mcpgen";
import { bindTools } from "./everything/index.js";
declare const client: Client;
await bindTools(client).getSum({ a: "two", b: 3 });
`;

beforeAll(async () => {
  project = consumerProject("tools-generate");
  const pulled = await runCliAsync(["tools", "pull", "--server", EVERYTHING, "--out", "everything.json"], project);
  expect(pulled.status, pulled.stderr).toBe(0);
  everything = JSON.parse(readFileSync(join(project, "everything.json"), "utf8")) as Json;
  // The same catalogue, but promising a string temperature the server does not send.
  const broken = structuredClone(everything) as { tools: { name: string; outputSchema?: Json }[] };
  const weather = broken.tools.find((t) => t.name === "get-structured-content")!;
  (weather.outputSchema as { properties: { temperature: Json } }).properties.temperature = { type: "string" };
  writeJson("broken.json", broken);
  writeJson("shapes.json", SHAPES);
}, 60_000);

describe("mcpgen tools generate", () => {
  it("writes index.ts headed with the catalogue, its sha256 and the command; the same bytes again", async () => {
    const args = [
      "tools",
      "generate",
      "--catalogue",
      "everything.json",
      "--out",
      "src/everything",
      "--sdk-import",
      "mcpgen",
    ];
    const first = await runCliAsync(args, project);
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/^wrote {5}src\/everything\/index\.ts \(\d+ bytes, \d+ tools\)\n$/);
    const text = readFileSync(join(project, "src/everything/index.ts"), "utf8");
    const sha = createHash("sha256")
      .update(readFileSync(join(project, "everything.json")))
      .digest("hex");
    expect(text.split("\n").slice(0, 3)).toEqual([
      `// Generated by mcpgen from everything.json (sha256 ${sha}).`,
      "// Typed tools of mcp-servers/everything 2.0.0: bindTools(client) has one method per tool; structured results are checked.",
      "// Do not edit: pull the catalogue again (mcpgen tools pull) and run `mcpgen tools generate --catalogue everything.json --out src/everything --sdk-import mcpgen`.",
    ]);
    expect(text).toContain("  echo(args: EchoArguments, options?: ToolCallOptions): Promise<CallToolResult>;");
    expect(text).toContain(
      "  getStructuredContent(args: GetStructuredContentArguments, options?: ToolCallOptions): Promise<ToolResult<GetStructuredContentOutput>>;",
    );
    expect(text).not.toContain(project);
    const again = await runCliAsync(args, project);
    expect(again.stdout).toMatch(/^unchanged src\/everything\/index\.ts/);
    expect(readFileSync(join(project, "src/everything/index.ts"), "utf8")).toBe(text);
  }, 30_000);

  it("names colliding methods by the order of the tool names, and says so", async () => {
    const r = await cli([
      "tools",
      "generate",
      "--catalogue",
      "shapes.json",
      "--out",
      "src/shapes",
      "--sdk-import",
      "mcpgen",
    ]);
    expect(r.code).toBe(0);
    expect(r.err).toBe('note: tools "get-sum", "get_sum" all make getSum: "get-sum" is getSum, "get_sum" is getSum2');
    const text = readFileSync(join(project, "src/shapes/index.ts"), "utf8");
    expect(text).toContain("  getSum(args: GetSumArguments, options?: ToolCallOptions): Promise<CallToolResult>;");
    expect(text).toContain("  getSum2(args: GetSum2Arguments, options?: ToolCallOptions): Promise<CallToolResult>;");
    expect(text).toContain("export type ShapesArguments_Node = {");
    expect(text).toContain("children?: ShapesArguments_Node[];");
    const broken = await cli([
      "tools",
      "generate",
      "--catalogue",
      "broken.json",
      "--out",
      "src/broken",
      "--sdk-import",
      "mcpgen",
    ]);
    expect(broken.code).toBe(0);
  });

  describe("in a strict app", () => {
    let compiled: Awaited<ReturnType<typeof tsc>>;
    beforeAll(async () => {
      writeFileSync(join(project, "src/main.ts"), MAIN);
      writeFileSync(join(project, "src/checks.ts"), CHECKS);
      writeFileSync(join(project, "src/wrong.ts"), WRONG);
      compiled = await tsc(project, "app", ["src/main.ts", "src/checks.ts"]);
    }, 120_000);

    it("tsc --strict (and stricter) accepts the right calls and refuses every wrong one", async () => {
      expect(compiled.stdout + compiled.stderr).toBe("");
      expect(compiled.status).toBe(0);
      // The bindings alone also under exactOptionalPropertyTypes and an ES2020 library (the app above constructs
      // runtime transports, whose own declarations that setting is not about).
      const exact = await tsc(
        project,
        "exact",
        ["src/everything/index.ts", "src/shapes/index.ts", "src/checks.ts"],
        true,
        {
          exactOptionalPropertyTypes: true,
          lib: ["es2020"],
        },
      );
      expect(exact.stdout + exact.stderr).toBe("");
      expect(exact.status).toBe(0);
      const wrong = await tsc(project, "wrong", ["src/wrong.ts"], true);
      expect(wrong.status).not.toBe(0);
      expect(wrong.stdout).toMatch(
        /src\/wrong\.ts\(4,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/,
      );
    }, 120_000);

    it("calls server-everything's echo, get-sum and get-structured-content", async () => {
      const r = await run(process.execPath, ["dist/src/main.js", everythingBin], project);
      expect(r.stderr).toBe("");
      const [calls, broken] = r.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Json);
      expect(calls).toEqual({
        echo: [{ type: "text", text: "Echo: typed" }],
        sum: [{ type: "text", text: "The sum of 2 and 3 is 5." }],
        temperature: "number",
      });
      // A server whose result breaks the outputSchema the bindings were made from: a local -32602 with the pointer.
      expect(broken).toEqual({
        code: -32602,
        message:
          'Invalid structured result from tool "get-structured-content": /structuredContent/temperature must be string',
        data: {
          tool: "get-structured-content",
          errors: [{ pointer: "/structuredContent/temperature", message: "must be string" }],
        },
      });
    }, 60_000);

    it("calls the example HTTP server's add through bindings from its own catalogue", async () => {
      const running = await startExampleHttpServer(0);
      try {
        const pulled = await runCliAsync(["tools", "pull", "--url", running.url, "--out", "example.json"], project);
        expect(pulled.status, pulled.stderr).toBe(0);
        const generated = await runCliAsync(
          ["tools", "generate", "--catalogue", "example.json", "--out", "src/example", "--sdk-import", "mcpgen"],
          project,
        );
        expect(generated.status, generated.stderr).toBe(0);
        writeFileSync(join(project, "src/http.ts"), HTTP);
        const built = await tsc(project, "http", ["src/http.ts"]);
        expect(built.stdout + built.stderr).toBe("");
        const r = await run(process.execPath, ["dist/src/http.js", running.url], project);
        expect(r.stderr).toBe("");
        expect(JSON.parse(r.stdout)).toEqual({ era: "modern", sum: [{ type: "text", text: "5" }] });
      } finally {
        await running.stop();
      }
    }, 60_000);

    it("checks structured results against the outputSchema: refs, unions, bounds, patterns, closed objects", async () => {
      const good = {
        shapes: [
          { kind: "circle", radius: 1 },
          { kind: "square", side: 0 },
        ],
        label: "ok",
        color: "red",
        tags: ["a", "b"],
        meta: { x: 1 },
        size: 3,
      };
      const cases = [
        { content: [], structuredContent: good },
        { content: [], structuredContent: { ...good, meta: null } },
        { content: [{ type: "text", text: "failed" }], isError: true },
        { content: [] },
        {
          content: [],
          structuredContent: {
            shapes: [{ kind: "circle", radius: 0 }, { kind: "triangle" }],
            label: "Bad label",
            color: "blue",
            tags: ["a", "a"],
            meta: { x: "1" },
            size: 11,
            extra: true,
          },
        },
        { content: [], structuredContent: { shapes: [] } },
      ];
      const r = await run(process.execPath, ["dist/src/checks.js", JSON.stringify(cases)], project);
      expect(r.stderr).toBe("");
      const outcomes = r.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { ok?: true; code?: number; errors?: { pointer: string; message: string }[] });
      // Issues in pointer order, then message order: the checker's own order follows the value's keys.
      const sorted = (issues: { pointer: string; message: string }[] = []) =>
        [...issues].sort((a, b) =>
          a.pointer === b.pointer ? (a.message < b.message ? -1 : 1) : a.pointer < b.pointer ? -1 : 1,
        );
      expect(outcomes.slice(0, 3)).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
      expect(outcomes[3]).toMatchObject({
        code: -32602,
        errors: [{ pointer: "/structuredContent", message: "must be present (the tool declares an outputSchema)" }],
      });
      expect(outcomes[4]!.code).toBe(-32602);
      expect(sorted(outcomes[4]!.errors)).toEqual([
        { pointer: "/structuredContent/color", message: 'must be one of ["red","green"]' },
        { pointer: "/structuredContent/extra", message: "must NOT be here (additionalProperties is false)" },
        { pointer: "/structuredContent/label", message: "must NOT have more than 8 characters" },
        { pointer: "/structuredContent/label", message: 'must match pattern "^[a-z]+$"' },
        { pointer: "/structuredContent/meta/x", message: "must be number" },
        { pointer: "/structuredContent/shapes/0", message: "must match exactly one schema of oneOf (matches 0)" },
        { pointer: "/structuredContent/shapes/1", message: "must match exactly one schema of oneOf (matches 0)" },
        { pointer: "/structuredContent/size", message: "must be <= 10" },
        { pointer: "/structuredContent/tags", message: "must NOT have duplicate items (items 0 and 1 are equal)" },
      ]);
      expect(sorted(outcomes[5]!.errors)).toEqual([
        { pointer: "/structuredContent/label", message: "must be present (required)" },
        { pointer: "/structuredContent/shapes", message: "must NOT have fewer than 1 items" },
      ]);
    }, 60_000);
  });

  describe("--watch", () => {
    let child: ChildProcessWithoutNullStreams | undefined;
    afterAll(() => {
      child?.kill("SIGKILL");
    });

    it("generates again when the catalogue changes, and survives a half-written one", async () => {
      const file = join(project, "watched.json");
      const good = JSON.stringify(SHAPES, null, 2) + "\n";
      writeFileSync(file, good);
      child = spawn(
        process.execPath,
        [
          join(repoRoot, "bin/mcpgen.js"),
          "tools",
          "generate",
          "--watch",
          "--catalogue",
          "watched.json",
          "--out",
          "src/watched",
        ],
        { cwd: project },
      );
      const stdout = follow(child.stdout);
      const stderr = follow(child.stderr);
      await stdout(/wrote {5}src\/watched\/index\.ts/);
      await stderr(/watching \S*watched\.json/);
      writeFileSync(file, good.replace('"Draws shapes."', '"Draws shapes, better."'));
      await stderr(/changed {2}\S*watched\.json/);
      await stdout(/wrote {5}src\/watched\/index\.ts/);
      expect(readFileSync(join(project, "src/watched/index.ts"), "utf8")).toContain("Draws shapes, better.");
      // The header names the command without --watch, so it is the same as a plain generate's.
      expect(readFileSync(join(project, "src/watched/index.ts"), "utf8")).toContain(
        "run `mcpgen tools generate --catalogue watched.json --out src/watched`.",
      );
      writeFileSync(file, good.slice(0, 100));
      await stderr(/error {4}watched\.json:\d+:\d+: invalid JSON/);
      await stderr(/still watching/);
      expect(child.exitCode).toBeNull();
      child.kill("SIGTERM");
      expect(await new Promise<number | null>((done) => child!.once("exit", (code) => done(code)))).toBe(0);
    }, 60_000);
  });
});

describe("bad catalogues: exit 2 with the file and the JSON pointer", () => {
  const tool = (extra: Json) => ({ name: "t", inputSchema: { type: "object" }, ...extra });
  const catalogue = (tools: unknown[], extra: Json = {}) => ({ ...SHAPES, tools, ...extra });
  it.each([
    [
      "a dangling $ref",
      catalogue([tool({ inputSchema: { type: "object", properties: { a: { $ref: "#/$defs/Missing" } } } })]),
      'bad.json#/tools/0/inputSchema/properties/a/$ref: $ref "#/$defs/Missing" names nothing in this inputSchema',
    ],
    [
      "a tool listed twice",
      catalogue([tool({}), tool({})]),
      'bad.json#/tools/1/name: tool "t" is listed twice (also at /tools/0)',
    ],
    ["a tool without inputSchema", catalogue([{ name: "t" }]), "bad.json#/tools/0: a tool needs an inputSchema"],
    [
      "an outputSchema that is not an object",
      catalogue([tool({ outputSchema: { type: "string" } })]),
      'bad.json#/tools/0/outputSchema/type: outputSchema must describe an object (type "object")',
    ],
    [
      "a pattern that is not a regular expression",
      catalogue([tool({ inputSchema: { type: "object", properties: { a: { type: "string", pattern: "(" } } } })]),
      'bad.json#/tools/0/inputSchema/properties/a/pattern: pattern "(" is not an ECMA-262 regular expression',
    ],
    [
      "an unknown type",
      catalogue([tool({ inputSchema: { type: "object", properties: { a: { type: "text" } } } })]),
      'bad.json#/tools/0/inputSchema/properties/a/type: unknown type "text"',
    ],
    [
      "a schema",
      { $schema: "https://json-schema.org/draft/2020-12/schema" },
      'bad.json#: not a catalogue: no "mcpgenCatalogue" member',
    ],
    [
      "another format",
      catalogue([], { mcpgenCatalogue: 2 }),
      "bad.json#/mcpgenCatalogue: catalogue format 2 is not one this mcpgen reads (1)",
    ],
  ])("%s", async (_name, value, message) => {
    writeJson("bad.json", value);
    const r = await cli(["tools", "generate", "--catalogue", "bad.json", "--out", "src/bad"]);
    expect(r.err).toContain(`error: ${message}`);
    expect(r.code).toBe(2);
  });

  it("invalid JSON with its line and column; a missing file", async () => {
    writeFileSync(join(project, "bad.json"), '{\n  "mcpgenCatalogue": 1,\n  "tools": [{ "name" "t" }]\n}\n');
    const r = await cli(["tools", "generate", "--catalogue", "bad.json", "--out", "src/bad"]);
    expect(r.err).toMatch(/^error: bad\.json:3:\d+: invalid JSON/);
    expect(r.code).toBe(2);
    const missing = await cli(["tools", "generate", "--catalogue", "nope.json", "--out", "src/bad"]);
    expect(missing.err).toBe("error: nope.json: no such file");
    expect(missing.code).toBe(2);
  });
});
