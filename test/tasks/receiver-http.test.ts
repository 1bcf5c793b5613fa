// Tasks survive the connection: over Streamable HTTP, tasks/result waiting when the connection is cut, resumed on a new one.
import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { until } from "../kit/timing.js";
import { cuttableFetch } from "../resumable/harness.js";
import { requestAsTask } from "../../runtime/eras/2025-11-25/tasks/requestor.js";
import { gate, kit, makeServer, serveOverHttp, textOf } from "./helpers.js";

const cleanup = closeAfterEach();

/** The task server behind our HTTP transport; with `auth`, the Authorization header names the principal. */
async function httpServer(auth: boolean) {
  const hold = gate();
  const server = makeServer();
  server.tool("wait", { taskSupport: "optional" }, async () => {
    await hold.promise;
    return "waited";
  });
  const url = await serveOverHttp(
    cleanup,
    server,
    auth ? { authenticate: (req) => String(req.headers.authorization ?? "").replace(/^Bearer /, "") } : {},
  );
  return { server, url, release: hold.open };
}

function transport(url: string, options: { principal?: string; sessionId?: string; fetch?: typeof fetch } = {}) {
  return new StreamableHttpClientTransport({
    url,
    terminateOnClose: false,
    standaloneStream: "manual",
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.principal === undefined ? {} : { headers: { authorization: `Bearer ${options.principal}` } }),
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId, protocolVersion: "2025-11-25" }),
  });
}

describe("tasks/result across a cut connection", () => {
  it.each(["same principal", "same session id"] as const)(
    "a requestor cut off while waiting gets the result on a new connection (%s)",
    async (how) => {
      const { server, url, release } = await httpServer(how === "same principal");
      const principal = how === "same principal" ? "alice" : undefined;
      const first = kit.clientSession();
      const network = cuttableFetch();
      const firstTransport = transport(url, { principal, fetch: network.fetch });
      await first.connect(firstTransport);
      cleanup(() => first.close());
      const created = await first.request("tools/call", { name: "wait", task: {} });
      const taskId = (created.task as JsonObject).taskId as string;
      const waiting = first.request("tasks/result", { taskId }).then(
        () => "answered",
        () => "cut",
      );
      await until(() => server.tasks.size === 1);
      await until(() => [...server.sessions[0].operations.inbound.values()].some((op) => op.method === "tasks/result"));
      // A real cut: the first client's connections drop under the pending tasks/result, as a failing network would.
      network.cut();
      // The client may try to resume the cut stream; it gives up here, as a requestor whose process ends would.
      await first.close();
      expect(await waiting).toBe("cut");

      let second;
      if (how === "same principal") {
        second = kit.clientSession();
        await second.connect(transport(url, { principal }));
      } else {
        // The HTTP session outlives its TCP connections: a plain JSON-RPC session carries on with its id.
        second = kit.session("client");
        await second.connect(transport(url, { sessionId: firstTransport.sessionId }));
      }
      cleanup(() => second.close());
      expect(await second.request("tasks/get", { taskId })).toMatchObject({ status: "working" });
      const resumed = second.request("tasks/result", { taskId });
      release();
      expect(textOf(await resumed)).toBe("waited");
    },
  );
});

describe("a task that ends at once, over HTTP", () => {
  it("the handle takes the status notification that overtook the CreateTaskResult and polls no tasks/get", async () => {
    // A long poll interval: a handle that missed the notification would wait it out before looking again.
    const server = makeServer({ tasks: { pollIntervalMs: 60_000 } });
    server.tool("quick", { taskSupport: "optional" }, () => "done");
    const url = await serveOverHttp(cleanup, server);
    const sent: string[] = [];
    const counting: typeof fetch = async (input, init) => {
      if (typeof init?.body === "string") sent.push(String((JSON.parse(init.body) as JsonObject).method));
      return fetch(input, init);
    };
    const client = kit.clientSession();
    // The standalone GET stream carries the status notification, apart from the POST that answers the call.
    await client.connect(new StreamableHttpClientTransport({ url, fetch: counting }));
    cleanup(() => client.close());
    for (let i = 0; i < 5; i++) {
      const handle = await requestAsTask<JsonObject>(client, "tools/call", { name: "quick" }, { task: {} });
      expect(textOf(await handle.result())).toBe("done");
    }
    expect(sent.filter((m) => m === "tasks/get")).toEqual([]);
    expect(sent.filter((m) => m === "tasks/result")).toHaveLength(5);
  }, 20_000);
});
