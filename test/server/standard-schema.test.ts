// McpServer tools whose schemas are Standard Schemas (zod 4, Valibot) beside JSON Schema ones: listing, argument and result checks.
import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { StandardSchemaV1 } from "../../runtime/server/standard-schema.js";
import { closedAfterEach, makeServer } from "./helpers.js";

const connected = closedAfterEach();

const Forecast = z.object({ city: z.string(), days: z.number().int().default(3) });
const Temps = z.object({ temps: z.array(z.number()), unit: z.enum(["C", "F"]).default("C") });
const Item = v.object({ n: v.pipe(v.number(), v.integer()), inner: v.object({ tag: v.string() }) });
const SUM = {
  type: "object",
  properties: { a: { type: "number" }, b: { type: "number" } },
  required: ["a", "b"],
} as const;

/** One tool of each kind; `seen` records the arguments each handler got. */
function mixedServer(seen: unknown[] = []) {
  const server = makeServer();
  server.tool("forecast", { inputSchema: Forecast, outputSchema: Temps }, (args) => {
    seen.push(args);
    return { content: [{ type: "text", text: args.city }], structuredContent: { temps: [args.days] } };
  });
  server.tool("item", { inputSchema: Item, toJsonSchema }, (args) => {
    seen.push(args);
    return String(args.n);
  });
  server.tool("sum", { inputSchema: SUM }, ({ a, b }) => String(a + b));
  return server;
}

function text(result: { content: unknown[] }): string {
  return (result.content[0] as { text: string }).text;
}

/** A Standard Schema by hand: `validate` may answer with a promise, and it offers no JSON Schema. */
function handMade(validate: (value: unknown) => unknown): StandardSchemaV1<{ x: number }> {
  return {
    "~standard": {
      version: 1,
      vendor: "hand",
      validate: validate as StandardSchemaV1<{ x: number }>["~standard"]["validate"],
    },
  };
}

describe("tools/list", () => {
  it("shows each schema as JSON Schema: zod's own, Valibot's through toJsonSchema, a literal as written", async () => {
    const { client } = await connected(mixedServer());
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    // zod describes the arguments a client sends (days optional) and the content the server sends (unit filled in);
    // the converter's $schema is kept.
    expect(byName.forecast!.inputSchema).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        city: { type: "string" },
        days: { type: "integer", default: 3, minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
      },
      required: ["city"],
    });
    expect(byName.forecast!.outputSchema).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        temps: { type: "array", items: { type: "number" } },
        unit: { type: "string", enum: ["C", "F"], default: "C" },
      },
      required: ["temps", "unit"],
      additionalProperties: false,
    });
    expect(byName.item!.inputSchema).toEqual(toJsonSchema(Item));
    expect(byName.item!.inputSchema).toMatchObject({ type: "object", required: ["n", "inner"] });
    expect(byName.sum!.inputSchema).toEqual(SUM);
  });
});

describe("arguments", () => {
  it("refuses wrong arguments with each issue at its JSON pointer, without running the handler", async () => {
    const seen: unknown[] = [];
    const { client } = await connected(mixedServer(seen));
    const zod = await client.callTool({ name: "forecast", arguments: { city: 7, days: 1.5 } });
    expect(zod.isError).toBe(true);
    expect(text(zod)).toMatch(/^Invalid arguments for tool forecast: \/city: .+; \/days: .+$/);
    const valibot = await client.callTool({ name: "item", arguments: { n: 1, inner: { tag: 2 } } });
    expect(valibot.isError).toBe(true);
    expect(text(valibot)).toMatch(/^Invalid arguments for tool item: \/inner\/tag: Invalid type: Expected string/);
    const json = await client.callTool({ name: "sum", arguments: { a: "1" } });
    expect(text(json)).toBe(
      'Invalid arguments for tool sum: /: missing required property "b"; /a: expected number, got string',
    );
    expect(seen).toEqual([]);
  });

  it("hands the handler the validated value: defaults and transforms applied, unknown keys dropped", async () => {
    const seen: unknown[] = [];
    const server = mixedServer(seen);
    server.tool(
      "shout",
      { inputSchema: z.object({ word: z.string().transform((w) => w.toUpperCase()) }) },
      ({ word }) => word,
    );
    const { client } = await connected(server);
    await client.callTool({ name: "forecast", arguments: { city: "Oslo", extra: true } });
    expect(seen).toEqual([{ city: "Oslo", days: 3 }]);
    expect(text(await client.callTool({ name: "shout", arguments: { word: "hey" } }))).toBe("HEY");
  });

  it("awaits a validator that answers with a promise, and fails the call when one throws", async () => {
    const server = makeServer();
    const toJson = () => ({ type: "object", properties: { x: { type: "number" } } });
    const async = handMade(async (value) =>
      typeof (value as { x?: unknown }).x === "number"
        ? { value }
        : { issues: [{ message: "x must be a number", path: [{ key: "x" }] }] },
    );
    server.tool("async", { inputSchema: async, toJsonSchema: toJson }, ({ x }) => `x=${x}`);
    const broken = handMade(() => {
      throw new Error("validator crashed");
    });
    server.tool("broken", { inputSchema: broken, toJsonSchema: toJson }, () => "unreachable");
    const { client } = await connected(server);
    expect(text(await client.callTool({ name: "async", arguments: { x: 2 } }))).toBe("x=2");
    const bad = await client.callTool({ name: "async", arguments: { x: "2" } });
    expect(bad).toMatchObject({ isError: true });
    expect(text(bad)).toBe("Invalid arguments for tool async: /x: x must be a number");
    expect(await client.callTool({ name: "broken", arguments: {} })).toEqual({
      content: [{ type: "text", text: "validator crashed" }],
      isError: true,
    });
  });

  it("checks anyOf and oneOf of a JSON Schema with the built-in checker", async () => {
    const server = makeServer();
    server.tool(
      "pick",
      {
        inputSchema: {
          type: "object",
          properties: {
            id: { anyOf: [{ type: "string" }, { type: "integer" }] },
            speed: { oneOf: [{ const: "fast" }, { const: "slow" }] },
          },
        },
      },
      ({ id, speed }) => `${id}:${speed}`,
    );
    const { client } = await connected(server);
    expect(text(await client.callTool({ name: "pick", arguments: { id: 4, speed: "fast" } }))).toBe("4:fast");
    expect(text(await client.callTool({ name: "pick", arguments: { id: true, speed: "warp" } }))).toBe(
      "Invalid arguments for tool pick: /id: must match a schema of anyOf; " +
        "/speed: must match exactly one schema of oneOf, matches 0",
    );
  });
});

describe("results", () => {
  it("sends structuredContent as the outputSchema's validation gives it back", async () => {
    const { client } = await connected(mixedServer());
    const result = await client.callTool({ name: "forecast", arguments: { city: "Oslo", days: 2 } });
    expect(result.structuredContent).toEqual({ temps: [2], unit: "C" });
  });

  it("refuses a result that breaks the outputSchema, zod or JSON Schema, with the existing error", async () => {
    const server = makeServer();
    server.tool("zod", { outputSchema: Temps }, () => ({
      content: [],
      structuredContent: { temps: ["warm"] } as never,
    }));
    server.tool("valibot", { outputSchema: Item, toJsonSchema }, () => ({
      content: [],
      structuredContent: {} as never,
    }));
    server.tool("missing", { outputSchema: Temps }, () => ({ content: [] }));
    server.tool("failed", { outputSchema: Temps }, () => ({ content: [{ type: "text", text: "no" }], isError: true }));
    const { client } = await connected(server);
    await expect(client.callTool({ name: "zod" })).rejects.toMatchObject({
      code: -32603,
      message: expect.stringMatching(/^Tool zod returned output that does not fit its outputSchema: \/temps\/0: /),
    });
    await expect(client.callTool({ name: "valibot" })).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining("/n: "),
    });
    await expect(client.callTool({ name: "missing" })).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining("structuredContent is missing"),
    });
    // An error result is not held to the schema.
    expect(await client.callTool({ name: "failed" })).toMatchObject({ isError: true });
  });
});

describe("registration", () => {
  it("refuses a Standard Schema that gives no JSON Schema, naming the tool", () => {
    const server = makeServer();
    expect(() => server.tool("plain", { inputSchema: Item }, () => "")).toThrow(TypeError);
    expect(() => server.tool("plain", { inputSchema: Item }, () => "")).toThrow(
      /^Tool "plain": inputSchema \(a valibot schema\) has no JSON Schema: pass toJsonSchema/,
    );
    expect(() => server.tool("out", { outputSchema: Item }, () => "")).toThrow(/^Tool "out": outputSchema/);
  });

  it("uses the server's toJsonSchema for schemas without one, after the schema's own", async () => {
    const server = makeServer({ toJsonSchema });
    server.tool("item", { inputSchema: Item }, () => "");
    server.tool("forecast", { inputSchema: Forecast }, () => "");
    const { client } = await connected(server);
    const { tools } = await client.listTools();
    expect(tools[0]!.inputSchema).toEqual(toJsonSchema(Item));
    // zod's own Standard JSON Schema wins over a server-wide converter meant for another library.
    expect(tools[1]!.inputSchema).toMatchObject({ required: ["city"] });
  });

  it("prefers the tool's own toJsonSchema", async () => {
    const server = makeServer();
    server.tool(
      "forecast",
      { inputSchema: Forecast, toJsonSchema: (schema) => z.toJSONSchema(schema as z.ZodType, { io: "input" }) },
      () => "",
    );
    const { client } = await connected(server);
    const { tools } = await client.listTools();
    expect(tools[0]!.inputSchema).toEqual(z.toJSONSchema(Forecast, { io: "input" }));
  });

  it("refuses schemas that do not describe an object, and conversions that fail", () => {
    const server = makeServer();
    expect(() => server.tool("str", { inputSchema: z.string() }, () => "")).toThrow(
      'Tool "str": inputSchema (a zod schema) must describe an object (type: "object"); its type is "string"',
    );
    expect(() => server.tool("json", { inputSchema: { type: "array" } }, () => "")).toThrow(
      'Tool "json": inputSchema must describe an object (type: "object"); its type is "array"',
    );
    expect(() => server.tool("date", { outputSchema: z.object({ at: z.date() }) }, () => "")).toThrow(
      /^Tool "date": outputSchema \(a zod schema\) could not be turned into JSON Schema: /,
    );
    expect(() => server.tool("junk", { inputSchema: 5 as never }, () => "")).toThrow(
      'Tool "junk": inputSchema must be a JSON Schema object or a Standard Schema',
    );
  });
});
