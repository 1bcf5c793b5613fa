// Compile-only checks of McpServer.tool's inferred types (JSON Schema literals and variables, anyOf/oneOf, zod 4, Valibot, typed structuredContent). Checked by tsc in tool-schemas.test.ts.
import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import * as z from "zod";
import type { McpServer, McpServerInit } from "../../runtime/server/mcp-server.js";
import type { JsonSchema, ObjectJsonSchema } from "../../runtime/server/types.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Mutual assignability, for the types a schema library computes (their spelling differs, their meaning must not). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
function assertType<T extends true>(_ok?: T): void {}

type Loose = { [key: string]: unknown };

export function jsonSchemaLiterals(server: McpServer): void {
  server.tool(
    "add",
    {
      inputSchema: {
        type: "object",
        properties: { a: { type: "number" }, note: { type: "string" } },
        required: ["a"],
      },
    },
    (args) => {
      assertType<Equal<typeof args, { a: number; note?: string }>>();
      // @ts-expect-error: note is optional
      return args.note.toUpperCase();
    },
  );

  server.tool(
    "pick",
    {
      inputSchema: {
        type: "object",
        properties: {
          id: { anyOf: [{ type: "string" }, { type: "integer" }] },
          speed: { oneOf: [{ const: "fast" }, { const: "slow" }] },
          maybe: { type: "string", anyOf: [{ minLength: 1 }, { pattern: "^x" }] },
        },
        required: ["id", "speed", "maybe"],
      },
    },
    ({ id, speed, maybe }) => {
      assertType<Equal<typeof id, string | number>>();
      assertType<Equal<typeof speed, "fast" | "slow">>();
      // Branches that name no type leave the property's own type.
      assertType<Equal<typeof maybe, string>>();
      // @ts-expect-error: id may be a number
      return id.toUpperCase();
    },
  );

  // A union at the top: an object that is one of two shapes.
  server.tool(
    "shape",
    {
      inputSchema: {
        type: "object",
        oneOf: [
          {
            type: "object",
            properties: { kind: { const: "circle" }, r: { type: "number" } },
            required: ["kind", "r"],
          },
          {
            type: "object",
            properties: { kind: { const: "square" }, side: { type: "number" } },
            required: ["kind", "side"],
          },
        ],
      },
    },
    (args) => {
      assertType<Equal<typeof args, { kind: "circle"; r: number } | { kind: "square"; side: number }>>();
      return args.kind === "circle" ? String(args.r) : String(args.side);
    },
  );
}

export function jsonSchemaVariables(server: McpServer): void {
  // Held in a variable typed as a JSON Schema: accepted, and the arguments are any JSON object.
  const search: JsonSchema = { type: "object", properties: { q: { type: "string" } } };
  server.tool("search", { inputSchema: search }, (args) => {
    assertType<Equal<typeof args, Loose>>();
    return String(args.q);
  });
  const find: ObjectJsonSchema = { type: "object", properties: { q: { type: "string" } } };
  server.tool("find", { inputSchema: find, outputSchema: find }, (args) => {
    assertType<Equal<typeof args, Loose>>();
    return { content: [], structuredContent: { anything: 1 } };
  });
  // As a const, it types the arguments as a literal does.
  const exact = { type: "object", properties: { q: { type: "string" } }, required: ["q"] } as const;
  server.tool("exact", { inputSchema: exact }, (args) => {
    assertType<Equal<typeof args, { q: string }>>();
    return args.q;
  });
}

export function jsonSchemaOutput(server: McpServer): void {
  const outputSchema = { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] } as const;
  server.tool("sum", { outputSchema }, () => ({ content: [], structuredContent: { sum: 3 } }));
  const notANumber = { content: [], structuredContent: { sum: "3" } };
  // @ts-expect-error: sum is a number
  server.tool("sum-bad", { outputSchema }, () => notANumber);
  // An error result is not held to the output schema.
  server.tool("sum-error", { outputSchema }, () => ({
    content: [{ type: "text", text: "no" }],
    isError: true,
    structuredContent: { reason: "overflow" },
  }));
  // Without an outputSchema, any JSON object.
  server.tool("free", {}, () => ({ content: [], structuredContent: { whatever: [1, "2"] } }));
}

export function zodTools(server: McpServer): void {
  const Forecast = z.object({ city: z.string(), days: z.number().int().default(3) });
  const Temps = z.object({ temps: z.array(z.number()), unit: z.enum(["C", "F"]).default("C") });

  server.tool(
    "forecast",
    {
      inputSchema: Forecast,
      outputSchema: Temps,
      // Called with the arguments as sent: days may be missing.
      immediateResponse: (args) => {
        assertType<Same<typeof args, { city: string; days?: number | undefined }>>();
        return `forecast for ${args.city}`;
      },
    },
    (args) => {
      // The handler gets zod's output: the default is applied.
      assertType<Same<typeof args, { city: string; days: number }>>();
      assertType<Same<typeof args, z.output<typeof Forecast>>>();
      // @ts-expect-error: no such argument
      void args.country;
      // structuredContent is zod's input: unit may be left to its default.
      return { content: [], structuredContent: { temps: [args.days] } };
    },
  );

  const wordsNotNumbers = { content: [], structuredContent: { temps: ["warm"] } };
  // @ts-expect-error: temps are numbers
  server.tool("forecast-bad", { inputSchema: Forecast, outputSchema: Temps }, () => wordsNotNumbers);

  const kelvin = { content: [], structuredContent: { temps: [], unit: "K" } };
  // @ts-expect-error: unit must be "C" or "F"
  server.tool("forecast-missing", { outputSchema: Temps }, () => kelvin);
}

export function valibotTools(server: McpServer): void {
  const Item = v.object({ n: v.pipe(v.number(), v.integer()), tag: v.optional(v.string(), "none") });
  // Valibot gives its JSON Schema through @valibot/to-json-schema, passed as is.
  server.tool("item", { inputSchema: Item, toJsonSchema }, (args) => {
    assertType<Same<typeof args, { n: number; tag: string }>>();
    // @ts-expect-error: n is a number
    const s: string = args.n;
    return s;
  });
}

export function serverConverter(): McpServerInit[] {
  // Either converter fits the server-wide option: one library's own, or a wrapper.
  return [
    { serverInfo: { name: "s", version: "1" }, toJsonSchema },
    {
      serverInfo: { name: "s", version: "1" },
      toJsonSchema: (schema) => toJsonSchema(schema as v.GenericSchema, { target: "draft-2020-12" }),
    },
  ];
}

export function refused(server: McpServer): void {
  // @ts-expect-error: not a schema
  server.tool("nope", { inputSchema: "object" }, () => "");
  // @ts-expect-error: a misspelled type name inside a literal
  server.tool("typo", { inputSchema: { type: "object", properties: { a: { type: "numbr" } } } }, () => "");
}
