// Two ResumableRequests managers on two Redis stores (two nodes in one process): elicitation, cancel and status across nodes.
import { describe, expect, it } from "vitest";
import { InMemoryLink } from "../../runtime/transports/in-memory.js";
import { ResumableRequests } from "../../runtime/eras/2025-11-25/resumable/server.js";
import type { Transport } from "../../runtime/rpc/transport.js";
import type { RequestContext } from "../../runtime/rpc/peer.js";
import type { JsonObject, RequestId } from "../../runtime/rpc/jsonrpc.js";
import { newServerSession, type ToolBehaviour } from "../resumable/harness.js";
import { redisForTests } from "./redis-server.js";
import { clientSession } from "../kit/mcp-sessions.js";
import { sleep, until } from "../kit/timing.js";
import { resumableClient } from "../../runtime/eras/2025-11-25/resumable/client.js";

const redis = redisForTests();
let prefixes = 0;

async function twoNodes(
  behaviour: ToolBehaviour,
  route: { next?: (n: number) => "a" | "b"; connected?: (node: "a" | "b", server: Transport, n: number) => void } = {},
  maxQueuedBytes?: number,
) {
  const prefix = `nodes${prefixes++}:`;
  const make = async () => {
    const store = redis.store({ prefix, leaseMs: 400 });
    const manager = redis.closeAfter(
      new ResumableRequests({
        store,
        policy: (method) => method === "tools/call",
        retainDeliveredMs: 200,
        maxQueuedBytes,
      }),
    );
    await store.ready();
    return manager;
  };
  const a = await make();
  const b = await make();
  const link = new InMemoryLink();
  let reconnects = 0;
  await newServerSession(a, behaviour).connect(link.server);
  const client = clientSession({
    clientInfo: { name: "two-nodes", version: "1" },
    capabilities: { elicitation: {} },
    extensions: [resumableClient()],
    // After a cut the client lands on node B (unless the test routes it), as a load balancer might send it.
    reconnect: async (): Promise<Transport> => {
      const n = reconnects++;
      const node = route.next?.(n) ?? "b";
      const [c, s] = link.reconnect();
      await newServerSession(node === "a" ? a : b, behaviour).connect(s);
      route.connected?.(node, s, n);
      return c;
    },
  });
  const policies = new Map<RequestId, string>();
  client.onNotification(
    "notifications/requests/resumePolicy",
    (p) => void policies.set(p?.requestId as RequestId, String(p?.resumeToken)),
  );
  await client.connect(link.client);
  return { a, b, client, link, policies };
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

describe("resumable requests across two nodes (Redis)", () => {
  it("an elicitation made on node A while the client was away is answered through node B", async () => {
    const cutHere = gate();
    const cutDone = gate();
    const { a, b, client, link } = await twoNodes({
      step: async (name, _args, i) => {
        if (name === "ask" && i === 0) {
          cutHere.open();
          await cutDone.opened;
        }
      },
    });
    client.onRequest("elicitation/create", () => ({ action: "accept", content: { name: "Ada" } }));
    const call = client.request("tools/call", { name: "ask", arguments: {} });
    await cutHere.opened;
    link.cut();
    cutDone.open();
    const result = await call;
    expect(JSON.parse((result.content as { text: string }[])[0].text)).toEqual({
      action: "accept",
      content: { name: "Ada" },
    });
    expect(a.stats.made).toBe(1);
    expect(b.stats.remoteResumes).toBe(1);
    await client.close();
  });

  it("an elicitation answered on node A's own connection no longer counts as pending input on node B", async () => {
    const answered = gate();
    const finish = gate();
    const { a, b, client, link, policies } = await twoNodes({
      step: async (name, _args, i) => {
        if (name === "ask" && i === 1) {
          answered.open();
          await finish.opened;
        }
      },
    });
    client.onRequest("elicitation/create", () => ({ action: "accept", content: { name: "Ada" } }));
    const call = client.request("tools/call", { name: "ask", arguments: {} });
    await answered.opened; // the answer reached the handler on A, over A's connection
    link.cut();
    await until(() => b.stats.remoteResumes > 0, 25_000);
    const [requestId, resumeToken] = [...policies.entries()][0];
    const status = (await client.request("requests/getStatus", { requestId, resumeToken })) as JsonObject;
    expect(b.stats.remoteStatusChecks).toBe(1);
    expect(status).toMatchObject({ status: "processing", hasInputRequest: false });
    finish.open();
    await call;
    expect(a.stats.made).toBe(1);
    await client.close();
  });

  it("cancelling the resumed request on node B aborts the handler on node A; status on B reads it", async () => {
    let aborted: unknown;
    const running = gate();
    const cutHere = gate();
    const { a, b, client, link, policies } = await twoNodes({
      step: async (_name, _args, i, ctx: RequestContext) => {
        if (i === 2) cutHere.open();
        if (i === 3) running.open();
        if (i >= 3) {
          await new Promise<void>((resolve) => {
            if (ctx.signal.aborted) return resolve();
            ctx.signal.addEventListener("abort", () => resolve(), { once: true });
            setTimeout(resolve, 5000).unref();
          });
          if (ctx.signal.aborted) aborted = ctx.signal.reason;
        }
      },
    });
    const controller = new AbortController();
    const progress: number[] = [];
    const call = client.request(
      "tools/call",
      { name: "count", arguments: { steps: 10 } },
      { signal: controller.signal, onProgress: (p) => progress.push(p.progress) },
    );
    await cutHere.opened;
    link.cut();
    await running.opened;
    await until(() => b.stats.remoteResumes > 0, 25_000);
    const [requestId, resumeToken] = [...policies.entries()][0];
    const status = (await client.request("requests/getStatus", { requestId, resumeToken })) as JsonObject;
    expect(status.status).toBe("processing");
    expect(b.stats.remoteStatusChecks).toBe(1);
    controller.abort("changed my mind");
    await expect(call).rejects.toThrow();
    await until(() => aborted !== undefined, 25_000);
    expect(String(aborted)).toMatch(/cancel/i);
    await a.idle();
    expect(a.size).toBe(0);
    await client.close();
  });

  it("a long request served through node B: the client's confirmations reach node A, whose queue stays within its limit", async () => {
    const steps = 1500;
    const cutHere = gate();
    let nodeB: ResumableRequests | undefined;
    const { a, b, client, link } = await twoNodes(
      {
        step: async (_name, _args, i) => {
          if (i === 20) {
            cutHere.open();
            // Nothing is confirmed while the client is away: wait until B serves it again.
            await until(() => nodeB !== undefined && nodeB.stats.remoteResumes > 0, 25_000);
          }
          // Slow enough for confirmations to travel B -> Redis -> A while the request runs.
          if (i % 5 === 0) await sleep(1);
        },
      },
      {},
      16 * 1024,
    );
    nodeB = b;
    const progress: number[] = [];
    const call = client.request(
      "tools/call",
      { name: "count", arguments: { steps } },
      { onProgress: (p) => progress.push(p.progress) },
    );
    await cutHere.opened;
    link.cut();
    const result = await call;
    expect((result.content as { text: string }[])[0].text).toBe(`counted ${steps} for `);
    expect(progress).toEqual(Array.from({ length: steps }, (_, i) => i + 1));
    expect(b.stats.remoteResumes).toBe(1);
    // About 300 KB went through a queue limited to 16 KiB: A freed what the client confirmed through B.
    expect(a.stats.made).toBe(1);
    await client.close();
  });

  // On HTTP a session outlives its client's connection, so B may never hear that the client left.
  it.each([
    ["B's connection closes", false],
    ["B never hears the client leave (half-open)", true],
  ])(
    "a resume on node B overtaken by a resume back on node A (%s): B's late attach does not take the request from A",
    async (_name, halfOpen) => {
      const cutHere = gate();
      const leftOpen: Transport[] = [];
      const { a, b, client, link } = await twoNodes(
        {
          step: async (_name, _args, i) => {
            if (i === 3) cutHere.open();
            await sleep(5);
          },
        },
        {
          next: (n) => (n === 0 ? "b" : "a"),
          connected: (node, server) => {
            if (node !== "b") return;
            // Cut the moment B has the resume in hand, before B's attach can reach A: the client goes back to A.
            const deliver = server.onmessage!;
            server.onmessage = (message, info) => {
              deliver(message, info);
              if ((message as { method?: unknown }).method !== "requests/resume") return;
              if (!halfOpen) return link.cut();
              const { client: end } = link;
              end.peer = undefined;
              link.server.peer = undefined;
              leftOpen.push(link.server);
              link.server = end; // so the reconnect does not close B's end
              void end.close();
            };
          },
        },
      );
      const progress: number[] = [];
      const call = client.request(
        "tools/call",
        { name: "count", arguments: { steps: 30 } },
        { onProgress: (p) => progress.push(p.progress) },
      );
      await cutHere.opened;
      link.cut();
      const outcome = await Promise.race([
        call.then(() => "done"),
        new Promise((r) => setTimeout(() => r("hung"), 4000)),
      ]);
      expect(outcome).toBe("done");
      expect(progress).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      expect(b.stats.remoteResumes).toBe(1);
      expect(a.stats.resumed).toBeGreaterThanOrEqual(1);
      expect(leftOpen).toHaveLength(halfOpen ? 1 : 0);
      await client.close();
      for (const end of leftOpen) await end.close();
    },
  );
});
