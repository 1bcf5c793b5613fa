// The task status machine: every allowed transition reached through a real task, every forbidden one refused.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import type { ServerSession } from "../../runtime/mcp/lifecycle.js";
import type { ClientSession } from "../../runtime/mcp/client-session.js";
import type { RequestContext } from "../../runtime/rpc/peer.js";
import { TaskReceiver } from "../../runtime/eras/2025-11-25/tasks/receiver.js";
import {
  TASK_STATUS_NOTIFICATION,
  canTransition,
  type TaskStatus,
} from "../../runtime/eras/2025-11-25/tasks/protocol.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { until } from "../kit/timing.js";
import { gate, kit, type Gate } from "./helpers.js";

const cleanup = closeAfterEach();
const ALL: TaskStatus[] = ["working", "input_required", "completed", "failed", "cancelled"];
const ALLOWED = new Set([
  "working>input_required",
  "working>completed",
  "working>failed",
  "working>cancelled",
  "input_required>working",
  "input_required>completed",
  "input_required>failed",
  "input_required>cancelled",
]);

describe("canTransition", () => {
  it.each(ALL.flatMap((from) => ALL.map((to) => [from, to] as const)))("%s -> %s", (from, to) => {
    expect(canTransition(from, to)).toBe(ALLOWED.has(`${from}>${to}`));
  });
});

/** What the tool handler of the test server does with its task context, chosen per call by arguments.script. */
type Script = (ctx: RequestContext, gates: Gate[]) => Promise<JsonObject>;

interface Rig {
  receiver: TaskReceiver;
  client: ClientSession;
  server: ServerSession;
  /** Status notifications the client heard, per task. */
  statuses: Map<string, TaskStatus[]>;
  start(script: Script, gates: Gate[]): Promise<string>;
  status(taskId: string): Promise<TaskStatus>;
}

/** A raw server session whose tools/call runs `script`s, task-augmented through the generic install path. */
async function rig(): Promise<Rig> {
  const receiver = new TaskReceiver();
  cleanup(() => receiver.close());
  const scripts: { script: Script; gates: Gate[] }[] = [];
  const pair = await kit.connectedPair({
    server: { capabilities: { tools: {}, ...receiver.capabilities(["tools/call"]) } },
    client: { capabilities: { elicitation: {} } },
    setup: (server) => {
      server.onRequest("tools/call", (params, ctx) => {
        const { script, gates } = scripts[Number((params?.arguments as JsonObject).n)];
        return script(ctx, gates);
      });
      receiver.install(server, ["tools/call"]);
    },
  });
  cleanup(() => pair.client.close());
  const statuses = new Map<string, TaskStatus[]>();
  pair.client.onNotification(TASK_STATUS_NOTIFICATION, (params) => {
    const id = params!.taskId as string;
    statuses.set(id, [...(statuses.get(id) ?? []), params!.status as TaskStatus]);
  });
  pair.client.onRequest("elicitation/create", () => ({ action: "accept", content: {} }));
  return {
    receiver,
    client: pair.client,
    server: pair.server,
    statuses,
    async start(script, gates) {
      scripts.push({ script, gates });
      const reply = await pair.client.request("tools/call", {
        name: "t",
        arguments: { n: scripts.length - 1 },
        task: {},
      });
      return (reply.task as JsonObject).taskId as string;
    },
    async status(taskId) {
      return (await pair.client.request("tasks/get", { taskId })).status as TaskStatus;
    },
  };
}

const ask = (ctx: RequestContext) =>
  ctx.request("elicitation/create", { message: "?", requestedSchema: { type: "object", properties: {} } });
const done = { content: [{ type: "text", text: "done" }] };

describe("transitions of a running task", () => {
  it.each([
    ["working -> completed", async () => done, ["completed"]],
    ["working -> failed (error)", async () => Promise.reject(new Error("boom")), ["failed"]],
    ["working -> failed (isError)", async () => ({ ...done, isError: true }), ["failed"]],
    [
      "working -> input_required -> working -> completed",
      async (ctx: RequestContext) => {
        await ask(ctx);
        return done;
      },
      ["input_required", "working", "completed"],
    ],
    [
      "input_required -> completed",
      async (ctx: RequestContext) => {
        void ask(ctx).catch(() => undefined);
        return done;
      },
      ["input_required", "completed"],
    ],
    [
      "input_required -> failed",
      async (ctx: RequestContext) => {
        void ask(ctx).catch(() => undefined);
        throw new Error("gave up");
      },
      ["input_required", "failed"],
    ],
  ] as const)("%s", async (_, script, expected) => {
    const r = await rig();
    const taskId = await r.start(script as Script, []);
    // tasks/result carries the elicitation when there is one, and waits for the end.
    await r.client.request("tasks/result", { taskId }).catch(() => undefined);
    await until(() => (r.statuses.get(taskId) ?? []).at(-1) === expected.at(-1));
    expect(r.statuses.get(taskId)).toEqual(expected);
    expect(await r.status(taskId)).toBe(expected.at(-1));
  });

  it.each(["working", "input_required"] as const)("%s -> cancelled by tasks/cancel", async (from) => {
    const r = await rig();
    const hold = gate();
    let aborted = false;
    const taskId = await r.start(async (ctx) => {
      ctx.signal.addEventListener("abort", () => (aborted = true));
      if (from === "input_required") void ask(ctx).catch(() => undefined);
      await hold.promise;
      return done;
    }, []);
    await until(() => (r.statuses.get(taskId)?.length ?? 0) === (from === "working" ? 0 : 1));
    expect(await r.status(taskId)).toBe(from);
    const answer = await r.client.request("tasks/cancel", { taskId });
    // Cancelled before the answer: the answer already says so, and the handler's signal fired.
    expect(answer).toMatchObject({ taskId, status: "cancelled", statusMessage: "The task was cancelled by request." });
    expect(aborted).toBe(true);
    // The handler finishing afterwards changes nothing: cancelled stays cancelled.
    hold.open();
    await until(() => r.receiver.stats.cancelled === 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await r.status(taskId)).toBe("cancelled");
    expect(r.statuses.get(taskId)?.at(-1)).toBe("cancelled");
    await expect(r.client.request("tasks/result", { taskId })).rejects.toMatchObject({ data: { status: "cancelled" } });
  });

  it.each(["completed", "failed", "cancelled"] as const)(
    "a %s task refuses tasks/cancel with -32602 and never changes again",
    async (terminal) => {
      const r = await rig();
      const taskId = await r.start(async (ctx) => {
        if (terminal === "failed") throw new Error("no");
        if (terminal === "cancelled") await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        return done;
      }, []);
      if (terminal === "cancelled") await r.client.request("tasks/cancel", { taskId });
      else await r.client.request("tasks/result", { taskId }).catch(() => undefined);
      expect(await r.status(taskId)).toBe(terminal);
      await expect(r.client.request("tasks/cancel", { taskId })).rejects.toMatchObject({
        code: -32602,
        message: `Cannot cancel task: already in terminal status '${terminal}'`,
      });
      expect(await r.status(taskId)).toBe(terminal);
    },
  );

  it("statusMessage changes after the end are ignored", async () => {
    const r = await rig();
    let control: { status(message: string): void } | undefined;
    const taskId = await r.start(async (ctx) => {
      control = ctx as unknown as { status(message: string): void };
      return done;
    }, []);
    await r.client.request("tasks/result", { taskId });
    const before = await r.client.request("tasks/get", { taskId });
    control!.status("late");
    expect(await r.client.request("tasks/get", { taskId })).toEqual(before);
  });
});
