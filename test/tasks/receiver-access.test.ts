// Who sees a task: bound to the principal (else the session), other requestors get the unknown-id error; tasks/list pages.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import type { ClientSession } from "../../runtime/mcp/client-session.js";
import type { TaskReceiverOptions } from "../../runtime/eras/2025-11-25/tasks/receiver.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { clientAs, heldServer, type TaskServer } from "./helpers.js";

const cleanup = closeAfterEach();

function server(tasks: TaskReceiverOptions = {}): { server: TaskServer; release: () => void } {
  return heldServer(cleanup, tasks);
}

function client(s: TaskServer, principal?: string): Promise<ClientSession> {
  return clientAs(cleanup, s, principal);
}

async function createTask(c: ClientSession): Promise<string> {
  const reply = await c.request("tools/call", { name: "wait", task: {} });
  return (reply.task as JsonObject).taskId as string;
}

async function failure(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  return promise.then(
    () => ({ code: 0, message: "succeeded" }),
    (e: { code: number; message: string }) => ({ code: e.code, message: e.message }),
  );
}

describe("task ids are bound to their requestor", () => {
  it("another principal gets exactly the unknown-id error for get, result and cancel; the owner from any connection is served", async () => {
    const { server: s, release } = server();
    const alice = await client(s, "alice");
    const mallory = await client(s, "mallory");
    const taskId = await createTask(alice);
    const unknown = await failure(alice.request("tasks/get", { taskId: "no-such-task" }));
    expect(unknown.code).toBe(-32602);
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      expect(await failure(mallory.request(method, { taskId }))).toEqual(unknown);
    }
    expect((await mallory.request("tasks/list", {})).tasks).toEqual([]);
    // Alice on a second connection finds it.
    const aliceAgain = await client(s, "alice");
    expect(await aliceAgain.request("tasks/get", { taskId })).toMatchObject({ taskId, status: "working" });
    release();
    expect(await aliceAgain.request("tasks/result", { taskId })).toMatchObject({
      content: [{ type: "text", text: "waited" }],
    });
  });

  it("without principal or session id a task belongs to its connection: another connection gets the unknown-id error", async () => {
    const { server: s } = server();
    const first = await client(s);
    const second = await client(s);
    const taskId = await createTask(first);
    const unknown = await failure(second.request("tasks/get", { taskId: "x".repeat(32) }));
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      expect(await failure(second.request(method, { taskId }))).toEqual(unknown);
    }
    // A principal-less caller cannot reach a principal's task either.
    const alice = await client(s, "alice");
    const alicesTask = await createTask(alice);
    expect(await failure(first.request("tasks/get", { taskId: alicesTask }))).toEqual(unknown);
    expect(await first.request("tasks/get", { taskId })).toMatchObject({ status: "working" });
  });

  it.each([["not-a-task"], [""], ["x".repeat(300)], [42]])("a malformed or unknown id %j is -32602", async (taskId) => {
    const { server: s } = server();
    const c = await client(s, "alice");
    expect((await failure(c.request("tasks/get", { taskId } as JsonObject))).code).toBe(-32602);
  });
});

describe("tasks/list", () => {
  it("pages through the caller's tasks only, in creation order, with an opaque cursor", async () => {
    const { server: s } = server({ pageSize: 2 });
    const alice = await client(s, "alice");
    const bob = await client(s, "bob");
    const mine: string[] = [];
    for (let i = 0; i < 5; i++) {
      mine.push(await createTask(alice));
      await createTask(bob);
    }
    const seen: string[] = [];
    const cursors: string[] = [];
    let cursor: string | undefined = undefined;
    do {
      const page: JsonObject = await alice.request("tasks/list", cursor === undefined ? {} : { cursor });
      const tasks = page.tasks as JsonObject[];
      expect(tasks.length).toBeLessThanOrEqual(2);
      for (const t of tasks) {
        expect(t).toMatchObject({ status: "working", ttl: expect.any(Number) });
        seen.push(t.taskId as string);
      }
      cursor = page.nextCursor as string | undefined;
      if (cursor !== undefined) cursors.push(cursor);
    } while (cursor !== undefined);
    expect(seen).toEqual(mine);
    expect(cursors).toHaveLength(2);
    // Every task tasks/get finds is listed, and only those.
    for (const taskId of seen) await alice.request("tasks/get", { taskId });
  });

  it.each([["garbage"], ["dDA"], [Buffer.from("t-1").toString("base64url")]])(
    "an invalid cursor %j is -32602",
    async (cursor) => {
      const { server: s } = server();
      const c = await client(s, "alice");
      expect((await failure(c.request("tasks/list", { cursor }))).code).toBe(-32602);
    },
  );
});
