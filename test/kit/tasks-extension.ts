// A 2026-07-28 client's side of the Tasks extension in tests: the request envelope with or without the opt-in, reading replies, polling a task.
import { expect } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { sleep } from "./timing.js";

/** The extension's identifier, in `capabilities.extensions` of both sides. */
export const TASKS_EXTENSION_ID = "io.modelcontextprotocol/tasks";

/** The JSON-RPC error of a reply, as the wire carries it. */
export interface WireError {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * The `_meta` envelope a 2026-07-28 client puts in every request: `extension` declares the Tasks extension in its
 * capabilities; `capabilities` are the rest of them (default: elicitation).
 */
export function modernMeta(options: { extension?: boolean; capabilities?: JsonObject } = {}): JsonObject {
  const capabilities: JsonObject = { ...(options.capabilities ?? { elicitation: {} }) };
  if (options.extension !== false) capabilities.extensions = { [TASKS_EXTENSION_ID]: {} };
  return {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": capabilities,
    "io.modelcontextprotocol/clientInfo": { name: "tasks-extension-client", version: "1.0.0" },
  };
}

/** The result of a JSON-RPC reply; fails the test with the error when it is one. */
export function resultOf(reply: JsonObject, what = "the request"): JsonObject {
  if (reply.error !== undefined) throw new Error(`${what} failed: ${JSON.stringify(reply.error)}`);
  expect(reply.result, `${what} has a result`).toBeTypeOf("object");
  return reply.result as JsonObject;
}

/** The error of a JSON-RPC reply; fails the test when it is a result. */
export function errorOf(reply: JsonObject, what = "the request"): WireError {
  if (reply.result !== undefined) throw new Error(`${what} succeeded: ${JSON.stringify(reply.result)}`);
  expect(reply.error, `${what} has an error`).toBeTypeOf("object");
  return reply.error as WireError;
}

/** A result without the members every 2026-07-28 result carries beside its own (`_meta` with the server's identity). */
export function withoutMeta(result: JsonObject): JsonObject {
  const { _meta: _dropped, ...rest } = result;
  return rest;
}

/**
 * Checks a CreateTaskResult as the extension shapes it: `resultType: "task"`, the Task flat (no `task` wrapper), an
 * integer ttlMs above 0 and an integer pollIntervalMs, nothing of an input round; returns its taskId.
 */
export function expectCreateTaskResult(result: JsonObject): string {
  expect(result.resultType).toBe("task");
  expect(result).not.toHaveProperty("task");
  expect(result).not.toHaveProperty("requestState");
  expect(result).not.toHaveProperty("inputRequests");
  expect(result).not.toHaveProperty("content");
  expect(typeof result.taskId).toBe("string");
  expect((result.taskId as string).length).toBeGreaterThan(0);
  expect(result.status).toBe("working");
  expect(Number.isInteger(result.ttlMs)).toBe(true);
  expect(result.ttlMs as number).toBeGreaterThan(0);
  expect(Number.isInteger(result.pollIntervalMs)).toBe(true);
  expect(typeof result.createdAt).toBe("string");
  expect(typeof result.lastUpdatedAt).toBe("string");
  return result.taskId as string;
}

const NON_TERMINAL: ReadonlySet<unknown> = new Set(["working", "input_required"]);

/**
 * Polls `get` (tasks/get's result) until `done` holds or the task is terminal, whichever comes first, and returns
 * that last state for the caller to check; `timeoutMs` is only a hang guard.
 */
export async function pollTask(
  get: () => Promise<JsonObject>,
  done: (task: JsonObject) => boolean,
  timeoutMs = 10_000,
): Promise<JsonObject> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await get();
    if (done(task) || !NON_TERMINAL.has(task.status)) return task;
    if (Date.now() > deadline) throw new Error(`task still ${String(task.status)} after ${timeoutMs} ms`);
    await sleep(5);
  }
}

/** Polls until the task's status is `status` (or it ended otherwise); returns the state seen then. */
export function pollStatus(get: () => Promise<JsonObject>, status: string, timeoutMs?: number): Promise<JsonObject> {
  return pollTask(get, (task) => task.status === status, timeoutMs);
}

/** Waits for `release` or for the handler's signal to abort, recording the abort's reason in `seen.aborted`. */
export function heldUntil(
  release: Promise<void>,
  ctx: { readonly signal: AbortSignal },
  seen: { readonly aborted: unknown[] },
): Promise<"released" | "aborted"> {
  const signal = ctx.signal;
  return new Promise((resolve) => {
    void release.then(() => resolve("released"));
    const aborted = () => {
      seen.aborted.push(signal.reason);
      resolve("aborted");
    };
    if (signal.aborted) aborted();
    else signal.addEventListener("abort", aborted, { once: true });
  });
}
