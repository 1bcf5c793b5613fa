// Compile-only checks of the task-augmented stubs: a call made as a task returns a handle typed by the method's
// result, a plain call the result itself, and tasks/result the result of the method its task runs.
import type { TaskHandle } from "../../runtime/index.js";
import type { Client, Server } from "../../generated/index.js";
import type {
  CallToolResult,
  ClientTaskMethod,
  CreateMessageResult,
  ElicitResult,
  ServerTaskMethod,
  TaskAugmentableMethod,
} from "../../generated/index.js";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assertType<T extends true>(_ok?: T): void {}

export async function clientTasks(client: Client): Promise<void> {
  const asTask = client.callTool({ name: "slow_count" }, { task: { ttl: 60_000 } });
  assertType<Equal<typeof asTask, Promise<TaskHandle<CallToolResult>>>>();
  const plain = client.callTool({ name: "slow_count" });
  assertType<Equal<typeof plain, Promise<CallToolResult>>>();
  const tuned = client.callTool({ name: "slow_count" }, { timeout: 5_000, pollIntervalMs: 100 });
  assertType<Equal<typeof tuned, Promise<CallToolResult>>>();
  const handle = await asTask;
  const finished = await handle.result();
  assertType<Equal<typeof finished, CallToolResult>>();
  const payload = client.getTaskPayload<"tools/call">({ taskId: handle.taskId });
  assertType<Equal<typeof payload, Promise<CallToolResult>>>();
  // Without a type argument: the client's only task-augmentable request.
  const defaulted = client.getTaskPayload({ taskId: handle.taskId });
  assertType<Equal<typeof defaulted, Promise<CallToolResult>>>();
  // @ts-expect-error: tools/list cannot be task-augmented, so no task's payload is its result
  void client.getTaskPayload<"tools/list">({ taskId: handle.taskId });
  // @ts-expect-error: a request that cannot be task-augmented takes no task
  void client.listTools(undefined, { task: {} });
  // @ts-expect-error: the task metadata is an object (ttl in milliseconds)
  void client.callTool({ name: "slow_count" }, { task: 60_000 });
}

export async function serverTasks(server: Server): Promise<void> {
  const sampled = server.createMessage({ messages: [], maxTokens: 10 }, { task: {} });
  assertType<Equal<typeof sampled, Promise<TaskHandle<CreateMessageResult>>>>();
  const elicited = server.elicit({ message: "?", requestedSchema: { type: "object", properties: {} } }, { task: {} });
  assertType<Equal<typeof elicited, Promise<TaskHandle<ElicitResult>>>>();
  const plain = server.elicit({ message: "?", requestedSchema: { type: "object", properties: {} } });
  assertType<Equal<typeof plain, Promise<ElicitResult>>>();
  const payload = server.getTaskPayload<"elicitation/create">({ taskId: (await elicited).taskId });
  assertType<Equal<typeof payload, Promise<ElicitResult>>>();
  // @ts-expect-error: the server cannot send tools/call, let alone read its task's payload
  void server.getTaskPayload<"tools/call">({ taskId: "t" });
}

assertType<Equal<ClientTaskMethod, "tools/call">>();
assertType<Equal<ServerTaskMethod, "elicitation/create" | "sampling/createMessage">>();
assertType<Equal<TaskAugmentableMethod, "tools/call" | "elicitation/create" | "sampling/createMessage">>();
