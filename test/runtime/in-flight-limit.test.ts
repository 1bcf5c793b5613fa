// The per-session cap on requests served at once (maxInFlightRequests): refusals, freed places, defaults, McpServer.
import { describe, expect, it } from "vitest";
import { ErrorCode, RpcError } from "../../runtime/rpc/jsonrpc.js";
import { DEFAULT_MAX_IN_FLIGHT_REQUESTS } from "../../runtime/rpc/session/session.js";
import { connect, makeServer } from "../server/helpers.js";
import { until } from "../kit/timing.js";
import { sessionPair } from "./helpers.js";
import { session } from "./helpers.js";

/** A server whose tools/call handler parks until released; counts how many handlers started. */
async function parkedServer(maxInFlightRequests?: number) {
  const { client, server } = await sessionPair(maxInFlightRequests === undefined ? {} : { maxInFlightRequests });
  let started = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  server.onRequest("tools/call", async () => {
    started++;
    await gate;
    return { content: [] };
  });
  const call = (i: number, signal?: AbortSignal) =>
    client.request("tools/call", { name: "long", arguments: { i } }, { signal });
  return { client, server, call, started: () => started, release };
}

/** Starts `count` calls at once, each already handled so that refusals arriving early are not unhandled. */
function many(count: number, call: (i: number) => Promise<unknown>): Promise<unknown>[] {
  const calls = Array.from({ length: count }, (_, i) => call(i));
  for (const c of calls) c.catch(() => undefined);
  return calls;
}

/** Settles every call; returns the answers and the errors apart. */
async function outcomes(
  calls: Promise<unknown>[],
): Promise<{ answered: number; refused: RpcError[]; other: unknown[] }> {
  const refused: RpcError[] = [];
  const other: unknown[] = [];
  let answered = 0;
  for (const result of await Promise.allSettled(calls)) {
    if (result.status === "fulfilled") answered++;
    else if (result.reason instanceof RpcError && result.reason.code === ErrorCode.ServerBusy)
      refused.push(result.reason);
    else other.push(result.reason);
  }
  return { answered, refused, other };
}

describe("maxInFlightRequests", () => {
  it("of 1,000 concurrent long calls against a cap of 10, starts 10 and refuses 990 with -32000 without running them", async () => {
    const { call, started, release } = await parkedServer(10);
    const calls = many(1000, call);
    await until(() => started() === 10);
    release();
    const { answered, refused, other } = await outcomes(calls);
    expect({ answered, refused: refused.length, other }).toEqual({ answered: 10, refused: 990, other: [] });
    expect(started()).toBe(10);
    expect(refused[0].message).toBe("too many requests in flight");
    expect(refused[0].data).toEqual({ maxInFlightRequests: 10 });
  });

  it("accepts again once a call finishes or is cancelled, and the connection goes on", async () => {
    const { client, server } = await sessionPair({ maxInFlightRequests: 2 });
    const gates = new Map<string, () => void>();
    server.onRequest("ping", () => ({}));
    server.onRequest(
      "tools/call",
      (params, ctx) =>
        new Promise((resolve, reject) => {
          gates.set(params!.name as string, () => resolve({ content: [] }));
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
        }),
    );
    const call = (name: string, signal?: AbortSignal) => client.request("tools/call", { name }, { signal });
    const a = call("a");
    const cancel = new AbortController();
    const b = call("b", cancel.signal);
    await until(() => gates.size === 2);
    await expect(call("c")).rejects.toMatchObject({ code: ErrorCode.ServerBusy });
    gates.get("a")!();
    await a;
    const d = call("d");
    await until(() => gates.has("d"));
    await expect(call("e")).rejects.toMatchObject({ code: ErrorCode.ServerBusy });
    cancel.abort();
    await expect(b).rejects.toThrow(/cancelled/);
    // The cancellation reaches the server asynchronously; then "f" fits.
    await until(() => server.operations.inbound.size === 1);
    const f = call("f");
    await until(() => gates.has("f"));
    gates.get("d")!();
    gates.get("f")!();
    await expect(Promise.all([d, f])).resolves.toHaveLength(2);
    expect(await client.request("ping", undefined)).toEqual({});
  });

  it(`caps at ${DEFAULT_MAX_IN_FLIGHT_REQUESTS} by default; 0 and Infinity mean no cap`, async () => {
    for (const [cap, expected] of [
      [undefined, DEFAULT_MAX_IN_FLIGHT_REQUESTS],
      [0, 1000],
      [Infinity, 1000],
    ] as const) {
      const { call, started, release } = await parkedServer(cap);
      const calls = many(1000, call);
      await until(() => started() === expected);
      release();
      const { answered, refused, other } = await outcomes(calls);
      expect({ cap, answered, refused: refused.length, other }).toEqual({
        cap,
        answered: expected,
        refused: 1000 - expected,
        other: [],
      });
    }
  });

  it("rejects a negative or non-numeric cap", () => {
    for (const bad of [-1, Number.NaN]) {
      expect(() => session("server", { maxInFlightRequests: bad })).toThrow(RangeError);
    }
  });

  it("is an McpServer option too", async () => {
    const server = makeServer({ maxInFlightRequests: 1 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    server.tool("wait", { inputSchema: { type: "object" } }, async () => {
      started++;
      await gate;
      return "done";
    });
    const { client } = await connect(server);
    const first = client.callTool({ name: "wait" });
    await until(() => started === 1);
    await expect(client.callTool({ name: "wait" })).rejects.toMatchObject({ code: ErrorCode.ServerBusy });
    release();
    expect(await first).toEqual({ content: [{ type: "text", text: "done" }] });
    expect(started).toBe(1);
  });
});
