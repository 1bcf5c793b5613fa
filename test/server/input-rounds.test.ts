// Input-required rounds (MCP 2026-07-28 MRTR) served by replay: handlers written once with `await ctx.elicit()`
// complete for a modern client over rounds of the same request, and for a 2025 client through real requests.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { CapabilityError, ReplacedAnswer } from "../../runtime/rpc/errors.js";
import { RequestStateSealer } from "../../runtime/eras/2026-07-28/request-state.js";
import type { McpServerInit } from "../../runtime/server/mcp-server.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { sleep } from "../kit/timing.js";
import { envelope, makeServer, rawPeer } from "./helpers.js";

const cleanup = closeAfterEach();
const ELICITING = { "io.modelcontextprotocol/clientCapabilities": { elicitation: {}, sampling: {} } };
const nameForm = { message: "Your name?", requestedSchema: { type: "object" as const, properties: {} } };

/** A server whose handlers ask: one ask, two in a row, two at once; counts runs and what aborted them. */
function asking(init: Partial<McpServerInit> = {}) {
  const s = makeServer(init);
  const runs = { greet: 0 };
  const aborts: unknown[] = [];
  s.tool("greet", {}, async (_args, ctx) => {
    runs.greet++;
    ctx.signal.addEventListener("abort", () => aborts.push(ctx.signal.reason));
    const answer = await ctx.elicit(nameForm);
    return `hello ${String(answer.content?.name)}`;
  });
  s.tool("two-in-a-row", {}, async (_args, ctx) => {
    const first = await ctx.elicit({ ...nameForm, message: "first?" });
    const second = await ctx.elicit({ ...nameForm, message: "second?" });
    return `${String(first.content?.v)}+${String(second.content?.v)}`;
  });
  s.tool("two-at-once", {}, async (_args, ctx) => {
    const [a, b] = await Promise.all([
      ctx.elicit({ ...nameForm, message: "a?" }),
      ctx.createMessage({ messages: [{ role: "user", content: { type: "text", text: "b?" } }], maxTokens: 5 }),
    ]);
    return `${String(a.content?.v)}+${(b.content as { text: string }).text}`;
  });
  s.tool("named", {}, async (_args, ctx) => {
    const answer = await ctx.elicit(nameForm, { inputKey: "user_name" });
    return `named ${String(answer.content?.name)}`;
  });
  s.tool("fallback", {}, async (_args, ctx) => {
    try {
      const answer = await ctx.elicit(nameForm);
      return `elicited ${String(answer.content?.name)}`;
    } catch (error) {
      if (!(error instanceof CapabilityError)) throw error;
      const sampled = await ctx.createMessage({
        messages: [{ role: "user", content: { type: "text", text: "a name?" } }],
        maxTokens: 5,
      });
      return `sampled ${(sampled.content as { text: string }).text}`;
    }
  });
  s.prompt("welcome", {}, async (_args, ctx) => {
    const answer = await ctx.elicit(nameForm);
    return { messages: [{ role: "user", content: { type: "text", text: `welcome ${String(answer.content?.name)}` } }] };
  });
  cleanup(() => s.close());
  return { server: s, runs, aborts };
}

const meta = (extra: JsonObject = {}) => envelope({ ...ELICITING, ...extra });
const accept = (content: JsonObject) => ({ action: "accept", content });

describe("input-required rounds (2026-07-28)", () => {
  it("a handler's ask ends the round with inputRequests and a sealed state; the retry completes it", async () => {
    const s = asking();
    const peer = await rawPeer(cleanup, s.server);
    const first = await peer.request("tools/call", { name: "greet", arguments: {}, _meta: meta() });
    const round = first.result as JsonObject;
    expect(round).toMatchObject({
      resultType: "input_required",
      inputRequests: { q0: { method: "elicitation/create", params: nameForm } },
    });
    expect(round).not.toHaveProperty("content");
    expect(typeof round.requestState).toBe("string");
    // The run was stopped for the round, and its signal says so.
    expect(s.aborts[0]).toBeInstanceOf(ReplacedAnswer);
    const retry = await peer.request("tools/call", {
      name: "greet",
      arguments: {},
      inputResponses: { q0: accept({ name: "ada" }) },
      requestState: round.requestState as string,
      _meta: meta(),
    });
    expect(retry.result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "hello ada" }] });
    expect(s.runs.greet).toBe(2);
  });

  it("asks in a row take a round each; asks made together share one", async () => {
    const peer = await rawPeer(cleanup, asking().server);
    let params: JsonObject = { name: "two-in-a-row", arguments: {}, _meta: meta() };
    const r1 = (await peer.request("tools/call", params)).result as JsonObject;
    expect(Object.keys(r1.inputRequests as JsonObject)).toEqual(["q0"]);
    params = { ...params, inputResponses: { q0: accept({ v: 1 }) }, requestState: r1.requestState as string };
    const r2 = (await peer.request("tools/call", params)).result as JsonObject;
    expect(r2).toMatchObject({
      resultType: "input_required",
      inputRequests: { q1: { params: { message: "second?" } } },
    });
    expect(r2.inputRequests).not.toHaveProperty("q0");
    // Only the new answer comes with the retry: the first is in the state.
    params = { ...params, inputResponses: { q1: accept({ v: 2 }) }, requestState: r2.requestState as string };
    expect((await peer.request("tools/call", params)).result).toMatchObject({ content: [{ text: "1+2" }] });

    const together = (await peer.request("tools/call", { name: "two-at-once", arguments: {}, _meta: meta() }))
      .result as JsonObject;
    expect(Object.keys(together.inputRequests as JsonObject)).toEqual(["q0", "q1"]);
    const done = await peer.request("tools/call", {
      name: "two-at-once",
      arguments: {},
      inputResponses: {
        q0: accept({ v: "x" }),
        q1: { role: "assistant", content: { type: "text", text: "y" }, model: "m" },
      },
      requestState: together.requestState as string,
      _meta: meta(),
    });
    expect(done.result).toMatchObject({ content: [{ text: "x+y" }] });
  });

  it("asks again what a retry left unanswered, and ignores answers to keys it never asked", async () => {
    const peer = await rawPeer(cleanup, asking().server);
    const round = (await peer.request("tools/call", { name: "greet", arguments: {}, _meta: meta() }))
      .result as JsonObject;
    const again = await peer.request("tools/call", {
      name: "greet",
      arguments: {},
      inputResponses: { zz: accept({ name: "eve" }) },
      requestState: round.requestState as string,
      _meta: meta(),
    });
    expect(again.result).toMatchObject({ resultType: "input_required", inputRequests: { q0: {} } });
  });

  it("an ask named with inputKey takes that key, and an answer sent before it was asked (no state) is used", async () => {
    const peer = await rawPeer(cleanup, asking().server);
    const round = (await peer.request("tools/call", { name: "named", arguments: {}, _meta: meta() }))
      .result as JsonObject;
    expect(Object.keys(round.inputRequests as JsonObject)).toEqual(["user_name"]);
    const early = await peer.request("tools/call", {
      name: "named",
      arguments: {},
      inputResponses: { user_name: accept({ name: "zoe" }), extra: accept({}) },
      _meta: meta(),
    });
    expect(early.result).toMatchObject({ resultType: "complete", content: [{ text: "named zoe" }] });
    // Not an answer: asked again rather than completed.
    const bogus = await peer.request("tools/call", {
      name: "named",
      arguments: {},
      inputResponses: { user_name: 12345 },
      _meta: meta(),
    });
    expect(bogus.result).toMatchObject({ resultType: "input_required" });
  });

  it("a handler may catch the missing capability and ask something the client can answer", async () => {
    const peer = await rawPeer(cleanup, asking().server);
    const samplingOnly = envelope({ "io.modelcontextprotocol/clientCapabilities": { sampling: {} } });
    const round = (await peer.request("tools/call", { name: "fallback", arguments: {}, _meta: samplingOnly }))
      .result as JsonObject;
    expect(round).toMatchObject({
      resultType: "input_required",
      inputRequests: { q1: { method: "sampling/createMessage" } },
    });
    expect(Object.keys(round.inputRequests as JsonObject)).toEqual(["q1"]);
  });

  it("serves prompts/get the same way", async () => {
    const peer = await rawPeer(cleanup, asking().server);
    const round = (await peer.request("prompts/get", { name: "welcome", _meta: meta() })).result as JsonObject;
    expect(round.resultType).toBe("input_required");
    const done = await peer.request("prompts/get", {
      name: "welcome",
      inputResponses: { q0: accept({ name: "bo" }) },
      requestState: round.requestState as string,
      _meta: meta(),
    });
    expect(done.result).toMatchObject({ resultType: "complete", messages: [{ content: { text: "welcome bo" } }] });
  });

  describe("a requestState the server did not issue for this request and caller is refused -32602", () => {
    async function roundOf(peer: Awaited<ReturnType<typeof rawPeer>>): Promise<string> {
      const r = await peer.request("tools/call", { name: "greet", arguments: {}, _meta: meta() });
      return (r.result as JsonObject).requestState as string;
    }
    const retryWith = (state: string, args: JsonObject = {}) => ({
      name: "greet",
      arguments: args,
      inputResponses: { q0: accept({ name: "mallory" }) },
      requestState: state,
      _meta: meta(),
    });

    it.each([
      [
        "a changed payload",
        (state: string) => state.replace(/\.([A-Za-z0-9_-])/, (_m, c) => `.${c === "A" ? "B" : "A"}`),
      ],
      ["a changed signature", (state: string) => `${state.slice(0, -2)}${state.endsWith("AA") ? "BB" : "AA"}`],
      ["another key id", (state: string) => `other${state.slice(state.indexOf("."))}`],
      ["not a state at all", () => "hello"],
    ])("%s", async (_name, tamper) => {
      const s = asking();
      const peer = await rawPeer(cleanup, s.server);
      const refused = await peer.request("tools/call", retryWith(tamper(await roundOf(peer))));
      expect(refused.error).toMatchObject({ code: -32602 });
      expect((refused.error as JsonObject).message).toContain("requestState");
    });

    it("presented with other arguments", async () => {
      const peer = await rawPeer(cleanup, asking().server);
      const refused = await peer.request("tools/call", retryWith(await roundOf(peer), { other: true }));
      expect(refused.error).toMatchObject({ code: -32602 });
    });

    it("presented by another principal", async () => {
      const s = asking();
      const alice = await rawPeer(cleanup, s.server, { principal: "user:alice" });
      const bob = await rawPeer(cleanup, s.server, { principal: "user:bob" });
      const refused = await bob.request("tools/call", retryWith(await roundOf(alice)));
      expect(refused.error).toMatchObject({ code: -32602 });
    });

    it("after its ttl", async () => {
      const peer = await rawPeer(cleanup, asking({ requestState: { ttlMs: 1 } }).server);
      const state = await roundOf(peer);
      await sleep(5);
      expect((await peer.request("tools/call", retryWith(state))).error).toMatchObject({ code: -32602 });
    });
  });

  it("servers sharing a key ring accept each other's states (a retry may land on another node); others refuse them", async () => {
    const keys = [{ id: "k1", secret: "a shared secret of at least thirty-two bytes" }];
    const a = await rawPeer(cleanup, asking({ requestState: new RequestStateSealer({ keys }) }).server);
    const b = await rawPeer(cleanup, asking({ requestState: { keys } }).server);
    const stranger = await rawPeer(cleanup, asking().server);
    const round = (await a.request("tools/call", { name: "greet", arguments: {}, _meta: meta() })).result as JsonObject;
    const retry = {
      name: "greet",
      arguments: {},
      inputResponses: { q0: accept({ name: "nina" }) },
      requestState: round.requestState as string,
      _meta: meta(),
    };
    expect((await b.request("tools/call", retry)).result).toMatchObject({ content: [{ text: "hello nina" }] });
    expect((await stranger.request("tools/call", retry)).error).toMatchObject({ code: -32602 });
  });

  it("refuses keys that are too short", () => {
    expect(() => new RequestStateSealer({ keys: [{ id: "k", secret: "short" }] })).toThrow(/32 bytes/);
  });
});

describe("the same handler for a 2025-11-25 client", () => {
  it("asks through a real elicitation/create request and completes in one call", async () => {
    const s = asking();
    const peer = await rawPeer(cleanup, s.server);
    peer.answerRequests(() => accept({ name: "old-timer" }));
    await peer.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: { elicitation: {} },
      clientInfo: { name: "legacy", version: "1" },
    });
    await peer.notify("notifications/initialized");
    const call = await peer.request("tools/call", { name: "greet", arguments: {} });
    expect(call.result).toMatchObject({ content: [{ text: "hello old-timer" }] });
    expect(call.result).not.toHaveProperty("resultType");
    expect(peer.received.filter((m) => m.method === "elicitation/create")).toHaveLength(1);
  });
});

describe("the explicit style: return ctx.inputRequired(...)", () => {
  /** A tool that asks once, names its request and state, and greets with what came back. */
  function explicit(init: Partial<McpServerInit> = {}) {
    const s = makeServer(init);
    let runs = 0;
    s.tool("explicit", {}, async (_args, ctx) => {
      runs++;
      const who = ctx.inputResponses?.who as { content?: { name?: string } } | undefined;
      if (who === undefined)
        return ctx.inputRequired({
          inputRequests: { who: { method: "elicitation/create", params: nameForm } },
          requestState: "step-1",
        });
      return `hello ${String(who.content?.name)} after ${String(ctx.requestState)}`;
    });
    s.tool("never-satisfied", {}, async (_args, ctx) =>
      ctx.inputRequired({ inputRequests: { again: { method: "elicitation/create", params: nameForm } } }),
    );
    cleanup(() => s.close());
    return { server: s, runs: () => runs };
  }

  it("a 2026 client gets the handler's own input requests and state, and its retry completes", async () => {
    const peer = await rawPeer(cleanup, explicit().server);
    const round = (await peer.request("tools/call", { name: "explicit", arguments: {}, _meta: meta() }))
      .result as JsonObject;
    expect(round).toEqual(
      expect.objectContaining({
        resultType: "input_required",
        inputRequests: { who: { method: "elicitation/create", params: nameForm } },
        requestState: "step-1",
      }),
    );
    const done = await peer.request("tools/call", {
      name: "explicit",
      arguments: {},
      inputResponses: { who: accept({ name: "kim" }) },
      requestState: "step-1",
      _meta: meta(),
    });
    expect(done.result).toMatchObject({ resultType: "complete", content: [{ text: "hello kim after step-1" }] });
  });

  it("a 2025 client is asked with real requests and the handler runs again with the answers, in one call", async () => {
    const s = explicit({ maxInputRounds: 3 });
    const peer = await rawPeer(cleanup, s.server);
    peer.answerRequests(() => accept({ name: "lee" }));
    await peer.request("initialize", {
      protocolVersion: "2025-11-25",
      capabilities: { elicitation: {} },
      clientInfo: { name: "legacy", version: "1" },
    });
    await peer.notify("notifications/initialized");
    const call = await peer.request("tools/call", { name: "explicit", arguments: {} });
    expect(call.result).toMatchObject({ content: [{ text: "hello lee after step-1" }] });
    expect(s.runs()).toBe(2);
    // A handler that never has enough stops after maxInputRounds rounds, as a tool error.
    const endless = await peer.request("tools/call", { name: "never-satisfied", arguments: {} });
    expect(endless).toMatchObject({ result: { isError: true } });
    expect(peer.received.filter((m) => m.method === "elicitation/create")).toHaveLength(1 + 3);
  });
});

describe("answers checked against the revision's input-request table", () => {
  it("an answer that is no ElicitResult is refused -32602 naming its key, and the handler never sees it", async () => {
    const s = asking();
    const peer = await rawPeer(cleanup, s.server);
    const round = (await peer.request("tools/call", { name: "greet", arguments: {}, _meta: meta() }))
      .result as JsonObject;
    const retry = await peer.request("tools/call", {
      name: "greet",
      arguments: {},
      inputResponses: { q0: { action: "maybe" } },
      requestState: round.requestState as string,
      _meta: meta(),
    });
    expect(retry.error).toMatchObject({ code: -32602, data: { inputKey: "q0" } });
    expect((retry.error as JsonObject).message).toContain("ElicitResult");
    // The same answer in the right shape completes the request.
    const good = await peer.request("tools/call", {
      name: "greet",
      arguments: {},
      inputResponses: { q0: accept({ name: "ada" }) },
      requestState: round.requestState as string,
      _meta: meta(),
    });
    expect(good.result).toMatchObject({ content: [{ text: "hello ada" }] });
  });
});
