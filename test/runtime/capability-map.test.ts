// The capability map comes from the generated tables: it matches what the lifecycle enforced from its own
// hand-written map before (plus the Tasks capabilities), and the sessions refuse what the table says, nothing else.
import { describe, expect, it } from "vitest";
import { clientToServer, serverToClient } from "../../generated/dispatch.js";
import type { DispatchTable } from "../../runtime/rpc/dispatch.js";
import { CapabilityError } from "../../runtime/rpc/errors.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { connectedPair } from "../kit/mcp-sessions.js";
import { sessionKit } from "../kit/sessions.js";

const onClose = closeAfterEach();

/** The map lifecycle.ts kept by hand before the generator derived it: exact entries, then prefixes. */
const before = {
  server: (method: string): string | undefined =>
    ({
      "resources/subscribe": "resources.subscribe",
      "resources/unsubscribe": "resources.subscribe",
      "logging/setLevel": "logging",
      "completion/complete": "completions",
    })[method] ?? ["tools", "resources", "prompts"].find((p) => method.startsWith(`${p}/`)),
  client: (method: string): string | undefined =>
    ({ "sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots" })[method],
};

/** What is new: the Tasks methods need the receiver's tasks capability (tasks/list and tasks/cancel their own). */
const tasks: Record<string, string> = {
  "tasks/get": "tasks",
  "tasks/result": "tasks",
  "tasks/list": "tasks.list",
  "tasks/cancel": "tasks.cancel",
};

const derived = (table: DispatchTable): [string, string | undefined][] =>
  Object.entries(table).map(([method, spec]) => [method, spec.capability]);

describe("the generated capability map", () => {
  it("client to server: what the client refused before, plus the Tasks methods", () => {
    expect(derived(clientToServer)).toEqual(
      Object.keys(clientToServer).map((method) => [method, tasks[method] ?? before.server(method)]),
    );
  });

  it("server to client: what the server refused before, plus the Tasks methods", () => {
    expect(derived(serverToClient)).toEqual(
      Object.keys(serverToClient).map((method) => [method, tasks[method] ?? before.client(method)]),
    );
  });
});

describe("the sessions refuse what their outbound table says", () => {
  it("the client: tasks/list needs the server's tasks.list, tasks/get its tasks", async () => {
    const { client, server } = await connectedPair({ server: { capabilities: { tools: {}, tasks: { cancel: {} } } } });
    onClose(() => server.close());
    onClose(() => client.close());
    const refused = await client.request("tasks/list", {}).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CapabilityError);
    expect((refused as CapabilityError).capability).toBe("tasks.list");
    // tasks.cancel and tasks are advertised: the requests go out (and the server, with no handler, answers -32601).
    for (const method of ["tasks/cancel", "tasks/get"]) {
      const answered = await client.request(method, { taskId: "t" }).catch((e: unknown) => e);
      expect(answered, method).not.toBeInstanceOf(CapabilityError);
      expect((answered as { code?: number }).code, method).toBe(-32601);
    }
  });

  it("the server: elicitation/create needs the client's elicitation", async () => {
    const { client, server } = await connectedPair({ client: { capabilities: { roots: {} } } });
    onClose(() => server.close());
    onClose(() => client.close());
    const refused = await server.request("elicitation/create", { message: "?", requestedSchema: {} }).catch((e) => e);
    expect(refused).toBeInstanceOf(CapabilityError);
    expect((refused as CapabilityError).capability).toBe("elicitation");
    client.onRequest("roots/list", () => ({ roots: [] }));
    expect(await server.request("roots/list", undefined)).toEqual({ roots: [] });
  });

  it("a table entry without a capability is not gated, one with a capability is, whatever the method's name", async () => {
    const tables = {
      clientToServer: {
        ...clientToServer,
        "tools/list": { ...clientToServer["tools/list"], capability: undefined },
        ping: { ...clientToServer.ping, capability: "custom.ping" },
      },
      serverToClient,
    };
    const { client, server } = await sessionKit(tables).connectedPair();
    onClose(() => server.close());
    onClose(() => client.close());
    server.onRequest("tools/list", () => ({ tools: [] }));
    expect(await client.request("tools/list", undefined)).toEqual({ tools: [] });
    const refused = await client.request("ping", undefined).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CapabilityError);
    expect((refused as CapabilityError).capability).toBe("custom.ping");
  });
});
