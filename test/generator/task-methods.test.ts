// Which requests can be task-augmented: derived from the receivers' `tasks.requests` capabilities, settled by the
// methods sidecar where the schema does not say it, and checked against the params and the answer definition.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildModel } from "../../generator/build-model.js";
import { SchemaErrors } from "../../generator/errors.js";
import { loadSchema } from "../../generator/load.js";
import type { Model } from "../../generator/model.js";
import { referenceDir, tempDir } from "../kit/paths.js";

/** Schema JSON, edited freely by the variants. */
type Json = Record<string, any>;

const official = join(referenceDir, "mcp-schema", "2025-11-25", "schema.json");
let dir: string;
beforeAll(() => {
  dir = tempDir("task-methods");
});

let serial = 0;
/** The 2025-11-25 schema changed by `edit`, and a sidecar with `entries` beside it when given. */
function variant(edit: (defs: Json) => void, entries?: Json[]): { schemaFile: string; methodsFile?: string } {
  const schema = JSON.parse(readFileSync(official, "utf8")) as Json;
  edit(schema.$defs);
  const name = `v${serial++}`;
  const schemaFile = join(dir, `${name}.schema.json`);
  writeFileSync(schemaFile, JSON.stringify(schema));
  if (entries === undefined) return { schemaFile };
  const methodsFile = join(dir, `${name}.methods.json`);
  writeFileSync(methodsFile, JSON.stringify({ methods: entries }));
  return { schemaFile, methodsFile };
}

/** The official sidecar entries that name the empty result (a sidecar must, for every such request). */
const emptyResults = ["logging/setLevel", "ping", "resources/subscribe", "resources/unsubscribe"].map((method) => ({
  method,
  result: "EmptyResult",
}));

function model(files: { schemaFile: string; methodsFile?: string }, notes: string[] = []): Model {
  return buildModel(loadSchema(files.schemaFile, files.methodsFile), { notes });
}

const tasked = (m: Model): [string, string, string][] =>
  m.messages.filter((x) => x.task !== undefined).map((x) => [x.method, x.task!.capability, x.task!.result]);

function errors(files: { schemaFile: string; methodsFile?: string }): string[] {
  try {
    model(files);
  } catch (error) {
    if (error instanceof SchemaErrors) return error.errors.map((e) => `${e.where ?? ""}: ${e.message}`);
    throw error;
  }
  throw new Error("expected the model to be refused");
}

describe("task-augmentable requests from tasks.requests", () => {
  it("2025-11-25: tools/call from ServerCapabilities, sampling and elicitation from ClientCapabilities", () => {
    expect(tasked(model({ schemaFile: official }))).toEqual([
      ["elicitation/create", "tasks.requests.elicitation.create", "CreateTaskResult"],
      ["sampling/createMessage", "tasks.requests.sampling.createMessage", "CreateTaskResult"],
      ["tools/call", "tasks.requests.tools.call", "CreateTaskResult"],
    ]);
  });

  it("a category the capability adds is derived like the rest, when the request's params allow `task`", () => {
    const files = variant((defs) => {
      defs.ServerCapabilities.properties.tasks.properties.requests.properties.prompts = {
        type: "object",
        properties: { get: { type: "object" } },
      };
      defs.GetPromptRequestParams.properties.task = { $ref: "#/$defs/TaskMetadata" };
    });
    expect(tasked(model(files)).map(([m]) => m)).toEqual([
      "elicitation/create",
      "prompts/get",
      "sampling/createMessage",
      "tools/call",
    ]);
  });

  it("leaves out, with a note, a capability whose request has no `task` in its params or is not the receiver's", () => {
    const files = variant((defs) => {
      const requests = defs.ServerCapabilities.properties.tasks.properties.requests.properties;
      requests.prompts = { type: "object", properties: { get: { type: "object" } } };
      // sampling/createMessage is a request the client receives, not the server.
      requests.sampling = { type: "object", properties: { createMessage: { type: "object" } } };
    });
    const notes: string[] = [];
    expect(tasked(model(files, notes)).map(([m]) => m)).toEqual([
      "elicitation/create",
      "sampling/createMessage",
      "tools/call",
    ]);
    expect(notes).toEqual([
      'ServerCapabilities.tasks.requests.prompts.get: the params of GetPromptRequest have no "task"; prompts/get left out',
      "ServerCapabilities.tasks.requests.sampling.createMessage names sampling/createMessage, which is not a client-to-server request; left out",
    ]);
  });

  it("a union of params allows `task` only when every member declares it", () => {
    const files = variant((defs) => delete defs.ElicitRequestURLParams.properties.task);
    expect(tasked(model(files)).map(([m]) => m)).toEqual(["sampling/createMessage", "tools/call"]);
  });
});

describe("the sidecar's `task`", () => {
  it("false takes a request out; a capability path puts one in where the schema does not say it", () => {
    const files = variant(
      (defs) => delete defs.ServerCapabilities.properties.tasks.properties.requests,
      [
        ...emptyResults,
        { method: "tools/call", task: "tasks", why: "this revision lists no task requests" },
        { method: "sampling/createMessage", task: false, why: "not run as a task here" },
      ],
    );
    expect(tasked(model(files))).toEqual([
      ["elicitation/create", "tasks.requests.elicitation.create", "CreateTaskResult"],
      ["tools/call", "tasks", "CreateTaskResult"],
    ]);
  });

  it("is refused, pointing at the entry, for a path the receiver's capabilities lack, params without `task` or a notification", () => {
    const files = variant(() => {}, [
      ...emptyResults,
      { method: "tools/call", task: "tasks.requests.tool.call" },
      { method: "tools/list", task: "tasks.list" },
      { method: "notifications/progress", task: "tasks" },
    ]);
    expect(errors(files)).toEqual([
      "/methods/4/task: ServerCapabilities has no member tasks.requests.tool.call",
      '/methods/5/task: the params of ListToolsRequest have no "task", so it cannot be task-augmented',
      '/methods/6/task: only requests can be task-augmented; leave "task" out',
    ]);
  });

  it("is refused when the schema has no CreateTaskResult to answer a task with", () => {
    const files = variant((defs) => {
      delete defs.CreateTaskResult;
      defs.ServerResult.anyOf = defs.ServerResult.anyOf.filter((m: Json) => m.$ref !== "#/$defs/CreateTaskResult");
      defs.ClientResult.anyOf = defs.ClientResult.anyOf.filter((m: Json) => m.$ref !== "#/$defs/CreateTaskResult");
    });
    expect(errors(files)).toContain(
      "/$defs/CallToolRequest: CallToolRequest is listed as task-augmentable, but " +
        files.schemaFile +
        " has no CreateTaskResult to answer it with",
    );
  });

  it("is checked by the sidecar's own schema: a path or false, nothing else", () => {
    const files = variant(() => {}, [...emptyResults, { method: "tools/call", task: true }]);
    expect(errors(files)).toEqual([expect.stringMatching(/^\/methods\/4\/task: /)]);
  });
});

describe("the sidecar's `taskPayload`", () => {
  it("marks the request that answers with a task's payload (tasks/result), and only a request", () => {
    const ok = variant(() => {}, [...emptyResults, { method: "tasks/result", taskPayload: true }]);
    expect(
      model(ok)
        .messages.filter((m) => m.taskPayload)
        .map((m) => m.method),
    ).toEqual(["tasks/result"]);
    const bad = variant(() => {}, [...emptyResults, { method: "notifications/tasks/status", taskPayload: true }]);
    expect(errors(bad)).toEqual([
      `/methods/4/taskPayload: only a request answers with a task's payload; leave "taskPayload" out`,
    ]);
  });
});
