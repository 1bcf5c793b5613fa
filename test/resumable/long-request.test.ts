// Long resumable requests on a healthy connection: what reached the client leaves the queue, so the queue limit bounds only what did not.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { ClientSession } from "../../runtime/mcp/client-session.js";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import { ResumableRequests } from "../../runtime/eras/2025-11-25/resumable/server.js";
import { RECEIVED_NOTIFICATION, RESUMABLE_FAILED_CODE } from "../../runtime/eras/2025-11-25/resumable/protocol.js";
import type { MemoryOperationStore } from "../../runtime/store/memory.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { StdioServerTransport } from "../../runtime/transports/stdio/stdio.js";
import { connectInMemory, cuttableFetch, newServerSession, startResumableHttp, type ToolBehaviour } from "./harness.js";
import { clientSession } from "../kit/mcp-sessions.js";
import { resumableClient } from "../../runtime/eras/2025-11-25/resumable/client.js";

const STEPS = 20_000;
const CUT_AT = 10_000;
const LIMIT = 64 * 1024;

interface Rig {
  client: ClientSession;
  cut(): void;
  close(): Promise<void>;
}

/** Samples the store's queued bytes (as JSON) and the manager's count of unconfirmed bytes while the tool runs. */
function sampler(manager: ResumableRequests) {
  const store = manager.store as MemoryOperationStore;
  const seen = { storeBytes: 0, storeMessages: 0, managerBytes: 0, samples: 0 };
  return {
    seen,
    sample() {
      const queued = store.queued();
      seen.storeBytes = Math.max(seen.storeBytes, queued.bytes);
      seen.storeMessages = Math.max(seen.storeMessages, queued.messages);
      seen.managerBytes = Math.max(seen.managerBytes, manager.queuedBytes);
      seen.samples++;
    },
  };
}

/** Every step yields to the event loop (so confirmations get in); at CUT_AT the connection is cut and the tool waits for the resume. */
function longTool(manager: ResumableRequests, sample: () => void, rig: () => Rig | undefined): ToolBehaviour {
  return {
    step: async (_name, _args, i) => {
      if (i % 250 === 0) sample();
      if (i === CUT_AT) {
        rig()!.cut();
        while (manager.stats.resumed === 0) await new Promise((r) => setTimeout(r, 2));
      }
      await new Promise((r) => setImmediate(r));
    },
  };
}

const transports: { name: string; connect: (manager: ResumableRequests, behaviour: ToolBehaviour) => Promise<Rig> }[] =
  [
    {
      name: "in memory, where the transport confirms delivery",
      connect: async (manager, behaviour) => {
        const { client, link } = await connectInMemory(manager, behaviour);
        return { client, cut: () => link.cut(), close: () => client.close() };
      },
    },
    {
      name: "in memory, on a transport that cannot confirm (the client confirms)",
      connect: async (manager, behaviour) => {
        const { client, link } = await connectInMemory(manager, behaviour, {}, undefined, { confirmsDelivery: false });
        return { client, cut: () => link.cut(), close: () => client.close() };
      },
    },
    {
      name: "over Streamable HTTP (the client confirms)",
      connect: async (manager, behaviour) => {
        const server = await startResumableHttp(manager, behaviour);
        const network = cuttableFetch();
        const transport = () =>
          new StreamableHttpClientTransport({ url: server.url, fetch: network.fetch, standaloneStream: "manual" });
        const client = clientSession({
          clientInfo: { name: "long-request", version: "1" },
          extensions: [resumableClient()],
          reconnect: async () => transport(),
        });
        client.onerror = () => undefined;
        await client.connect(transport());
        return {
          client,
          cut: () => network.cut(),
          close: async () => {
            await client.close();
            await server.stop();
          },
        };
      },
    },
  ];

describe("a resumable request longer than the queue limit, on a healthy connection", () => {
  it.each(transports)(
    `completes with ${STEPS} progress values, the queue bounded throughout, and resumes after a cut: $name`,
    async ({ connect }) => {
      const manager = new ResumableRequests({
        policy: (method) => method === "tools/call",
        maxQueuedBytes: LIMIT,
        retainDeliveredMs: 0,
      });
      let rig: Rig | undefined;
      const { seen, sample } = sampler(manager);
      rig = await connect(
        manager,
        longTool(manager, sample, () => rig),
      );
      const progress: number[] = [];
      let outOfOrder = 0;
      const result = await rig.client.request(
        "tools/call",
        { name: "count", arguments: { steps: STEPS } },
        {
          onProgress: (p) => {
            if (p.progress !== progress.length + 1) outOfOrder++;
            progress.push(p.progress);
          },
          timeout: 120_000,
        },
      );
      expect((result.content as { text: string }[])[0].text).toBe(`counted ${STEPS} for `);
      expect(outOfOrder).toBe(0);
      expect(progress).toHaveLength(STEPS);
      expect(manager.stats.resumed).toBe(1);
      // The whole run produced far more than the limit; what the store held at any sample stayed under it.
      expect(seen.samples).toBeGreaterThanOrEqual(STEPS / 250);
      expect(seen.storeBytes).toBeLessThanOrEqual(LIMIT);
      expect(seen.managerBytes).toBeLessThanOrEqual(LIMIT);
      console.log(
        `[long-request] max queued: store ${seen.storeBytes} bytes in ${seen.storeMessages} messages, manager ${seen.managerBytes} bytes; replayed ${manager.stats.replayed}`,
      );
      await manager.idle();
      expect(manager.store.count()).toBe(0);
      await rig.close();
      manager.close();
    },
    120_000,
  );
});

/** A client whose confirmations never reach the server (as one that does not know the notification). */
function silence(client: ClientSession): void {
  const spy = client as unknown as { transmit(message: JsonObject, relatedRequestId?: unknown): Promise<void> };
  const transmit = spy.transmit.bind(client);
  spy.transmit = (message, relatedRequestId) =>
    message.method === RECEIVED_NOTIFICATION ? Promise.resolve() : transmit(message, relatedRequestId);
}

describe("a resumable request longer than the queue limit, over stdio", () => {
  it(`completes with ${STEPS} progress values: a line written to the pipe confirms itself, the client need not`, async () => {
    const manager = new ResumableRequests({
      policy: (method) => method === "tools/call",
      maxQueuedBytes: LIMIT,
      retainDeliveredMs: 0,
    });
    const { seen, sample } = sampler(manager);
    // Two line-framed ends on a pair of pipes, as a client and a server process would have.
    const up = new PassThrough();
    const down = new PassThrough();
    const server = newServerSession(manager, {
      step: async (_name, _args, i) => {
        if (i % 250 === 0) sample();
        // A handler doing some work per value: the pipe's write callbacks (which confirm) run between steps.
        await new Promise((r) => setImmediate(r));
      },
    });
    await server.connect(new StdioServerTransport({ stdin: up, stdout: down, busyPollMicros: 0 }));
    const client = clientSession({ clientInfo: { name: "stdio", version: "1" }, extensions: [resumableClient()] });
    await client.connect(new StdioServerTransport({ stdin: down, stdout: up, busyPollMicros: 0 }));
    silence(client);
    const progress: number[] = [];
    const result = await client.request(
      "tools/call",
      { name: "count", arguments: { steps: STEPS } },
      { onProgress: (p) => progress.push(p.progress), timeout: 120_000 },
    );
    expect((result.content as { text: string }[])[0].text).toBe(`counted ${STEPS} for `);
    expect(progress).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));
    expect(seen.storeBytes).toBeLessThanOrEqual(LIMIT);
    expect(seen.managerBytes).toBeLessThanOrEqual(LIMIT);
    await manager.idle();
    expect(manager.store.count()).toBe(0);
    await client.close();
    await server.close();
  }, 120_000);
});

describe("the queue limit still bounds what is not confirmed", () => {
  it("fails the request with -32010 once a client that never confirms has the limit outstanding", async () => {
    const manager = new ResumableRequests({
      policy: (method) => method === "tools/call",
      maxQueuedBytes: 16 * 1024,
      retainDeliveredMs: 0,
    });
    const { seen, sample } = sampler(manager);
    const { client } = await connectInMemory(manager, { step: () => sample() }, {}, undefined, {
      confirmsDelivery: false,
    });
    silence(client);
    const error = await client
      .request("tools/call", { name: "count", arguments: { steps: 1000 } }, { onProgress: () => undefined })
      .catch((e: unknown) => e);
    expect((error as { code?: number }).code).toBe(RESUMABLE_FAILED_CODE);
    expect((error as Error).message).toMatch(/queue limit of 16384 bytes/);
    // The message that crossed the limit is counted (and stored) before the request fails.
    expect(seen.storeBytes).toBeLessThanOrEqual(16 * 1024);
    expect(seen.managerBytes).toBeLessThan(16 * 1024 + 512);
    await manager.idle();
    expect(manager.store.count()).toBe(0);
    await client.close();
  });

  it("ignores a confirmation from another session, even with the right token", async () => {
    const manager = new ResumableRequests({
      policy: (method) => method === "tools/call",
      maxQueuedBytes: 1024 * 1024,
      retainDeliveredMs: 0,
    });
    let pause!: () => void;
    const paused = new Promise<void>((r) => (pause = r));
    let resume!: () => void;
    const resumed = new Promise<void>((r) => (resume = r));
    const owner = await connectInMemory(
      manager,
      {
        step: async (_n, _a, i) => {
          if (i !== 50) return;
          pause();
          await resumed;
        },
      },
      {},
      undefined,
      { confirmsDelivery: false },
    );
    // 50 progress values are far below a quarter of the limit: the server has not asked the owner to confirm yet.
    let policy: JsonObject | undefined;
    owner.client.observe("notifications/requests/resumePolicy", (p) => void (policy = p));
    const call = owner.client.request(
      "tools/call",
      { name: "count", arguments: { steps: 60 } },
      { onProgress: () => undefined },
    );
    await paused;
    const before = manager.queuedBytes;
    expect(before).toBeGreaterThan(0);
    const other = await connectInMemory(manager);
    await other.client.notify(RECEIVED_NOTIFICATION, {
      requestId: policy!.requestId as number,
      resumeToken: policy!.resumeToken as string,
      lastSeq: 49,
    });
    await new Promise((r) => setImmediate(r));
    expect(manager.queuedBytes).toBe(before);
    // The same confirmation from the session that carries the request does free the queue.
    await owner.client.notify(RECEIVED_NOTIFICATION, {
      requestId: policy!.requestId as number,
      resumeToken: policy!.resumeToken as string,
      lastSeq: 49,
    });
    await new Promise((r) => setImmediate(r));
    expect(manager.queuedBytes).toBe(0);
    resume();
    await call;
    await other.client.close();
    await owner.client.close();
  });
});
