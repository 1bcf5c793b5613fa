// Seeded fault injection: 200 concurrent resumable tool calls with cuts before the policy, mid-progress, before the response.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ClientSession } from "../../runtime/mcp/client-session.js";
import { ConnectionClosedError } from "../../runtime/rpc/errors.js";
import type { JsonObject } from "../../runtime/rpc/jsonrpc.js";
import type { RequestContext } from "../../runtime/rpc/peer.js";
import { ResumableRequests } from "../../runtime/eras/2025-11-25/resumable/server.js";
import { createStreamableHttpServer, type StreamableHttpServer } from "../../runtime/transports/http/server/server.js";
import { HttpStatusError, StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { rng } from "../kit/random.js";
import { connectInMemory, newServerSession } from "./harness.js";
import { clientSession } from "../kit/mcp-sessions.js";
import { resumableClient, resumerOf } from "../../runtime/eras/2025-11-25/resumable/client.js";

const CLIENTS = Number(process.env.FI_CLIENTS ?? 20);
const CALLS_PER_CLIENT = Number(process.env.FI_CALLS ?? 10);
const STEPS = 20;

interface Figures {
  calls: number;
  cuts: number;
  serverCloses: number;
  retriedBeforePolicy: number;
  resumes: number;
  replayed: number;
  duplicatesDropped: number;
}

interface Rig {
  clients: ClientSession[];
  /** Cut client `i`'s connection from the network side. */
  cut(i: number): void;
  /** The server drops client `i`'s connection (or its stream for `ctx`'s request, on HTTP). */
  serverClose(i: number, ctx: RequestContext): void;
  close(): Promise<void>;
}

/** One logical call: retried by the app only when it failed before any policy arrived (nothing to resume). */
const phase = new Map<string, string>();
async function callUntilDone(
  client: ClientSession,
  tag: string,
  figures: Figures,
  progress: number[],
): Promise<JsonObject> {
  for (;;) {
    phase.set(tag, "calling");
    try {
      return await client.request(
        "tools/call",
        { name: "count", arguments: { steps: STEPS, tag, client: Number(tag.split("-")[0]) } },
        {
          onProgress: (p) => progress.push(p.progress),
        },
      );
    } catch (error) {
      // Lost before the policy arrived: the connection closed, the HTTP stream or session was lost (-32000), the
      // request was refused while the session was being opened again (HTTP 400/404), or its POST was dropped.
      const closedEarly =
        error instanceof ConnectionClosedError ||
        (error as { code?: unknown }).code === -32000 ||
        error instanceof HttpStatusError ||
        (error instanceof Error && /abort|fetch failed|terminated|session .* expired/i.test(error.message));
      if (!closedEarly) throw error;
      figures.retriedBeforePolicy++;
      if (process.env.FI_DEBUG && progress.length > 0)
        console.log(
          "retry after progress",
          tag,
          progress.length,
          String(error),
          JSON.stringify((error as { data?: unknown }).data),
        );
      phase.set(tag, "waiting " + String(error));
      await resumerOf(client)!.whenConnected();
    }
  }
}

async function runScenario(
  seed: number,
  build: (manager: ResumableRequests, behaviour: Parameters<typeof newServerSession>[1]) => Promise<Rig>,
  serverCloseShare: number,
  maxWait: number,
  deferPolicy: boolean,
) {
  const random = rng(seed);
  const figures: Figures = {
    calls: CLIENTS * CALLS_PER_CLIENT,
    cuts: 0,
    serverCloses: 0,
    retriedBeforePolicy: 0,
    resumes: 0,
    replayed: 0,
    duplicatesDropped: 0,
  };
  const manager = new ResumableRequests({ policy: (method) => method === "tools/call", maxWait, deferPolicy });
  let rig: Rig | undefined;
  const behaviour = {
    step: async (_name: string, args: JsonObject, i: number, ctx: RequestContext) => {
      // Interleave the calls, then maybe fault: i = 1..STEPS is mid-progress, STEPS + 1 is right before the response.
      if (random() < 0.3) await new Promise((r) => setImmediate(r));
      const r = random();
      if (rig === undefined || r >= 0.012) return;
      const client = Number(args.client);
      if (r < 0.012 * serverCloseShare) {
        figures.serverCloses++;
        rig.serverClose(client, ctx);
      } else {
        figures.cuts++;
        rig.cut(client);
      }
    },
  };
  rig = await build(manager, behaviour);
  const progress = new Map<string, number[]>();
  const calls: Promise<void>[] = [];
  for (let c = 0; c < CLIENTS; c++) {
    for (let k = 0; k < CALLS_PER_CLIENT; k++) {
      const tag = `${c}-${k}`;
      const seen: number[] = [];
      progress.set(tag, seen);
      const client = rig.clients[c];
      calls.push(
        callUntilDone(client, tag, figures, seen).then((result) => {
          phase.set(tag, "done");
          expect((result.content as { text: string }[])[0].text).toBe(`counted ${STEPS} for ${tag}`);
        }),
      );
      // Cut right after sending some calls: the request or its policy is lost, so there is nothing to resume.
      if (random() < 0.02) {
        figures.cuts++;
        rig.cut(c);
      }
    }
  }
  const watchdog = process.env.FI_DEBUG
    ? setTimeout(() => {
        for (const [i, client] of rig!.clients.entries()) {
          const pend = resumerOf(client)!.pending();
          if (pend.length > 0 || client.operations.outbound.size > 0)
            console.log(
              "client",
              i,
              "open",
              client.isOpen,
              "recovering",
              resumerOf(client)!.isRecovering,
              "outbound",
              [...client.operations.outbound.keys()],
              JSON.stringify(pend),
            );
        }
        console.log("manager size", manager.size, JSON.stringify(manager.stats));
        for (const [tag, ph] of phase) if (ph !== "done") console.log(tag, ph);
      }, 8000)
    : undefined;
  await Promise.all(calls);
  if (watchdog) clearTimeout(watchdog);
  const expected = Array.from({ length: STEPS }, (_, i) => i + 1);
  for (const [tag, values] of progress) expect(values, tag).toEqual(expected);
  // Orphans (requests whose policy never arrived) expire after maxWait; delivered results after the retention.
  await manager.idle();
  expect(manager.size).toBe(0);
  expect(manager.store.count()).toBe(0);
  for (const client of rig.clients) {
    expect(client.operations.outbound.size).toBe(0);
    figures.resumes += resumerOf(client)!.stats.resumes;
    figures.duplicatesDropped += resumerOf(client)!.stats.duplicatesDropped;
  }
  figures.replayed = manager.stats.replayed;
  await rig.close();
  return { figures, manager };
}

// Deferred: a call becomes resumable at its first progress value or after its first tick, so some cuts land before it is.
describe.each([
  { mode: "eager policy", deferPolicy: false },
  { mode: "deferred policy", deferPolicy: true },
])("fault injection, $mode", ({ mode, deferPolicy }) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it("in memory: 200 concurrent resumable calls survive seeded cuts and server closes; nothing leaks", async () => {
    const { figures, manager } = await runScenario(
      975,
      async (manager, behaviour) => {
        const rigs = await Promise.all(Array.from({ length: CLIENTS }, () => connectInMemory(manager, behaviour)));
        return {
          clients: rigs.map((r) => r.client),
          cut: (i) => rigs[i].link.cut(),
          serverClose: (i) => void rigs[i].servers[rigs[i].servers.length - 1].close(),
          close: async () => {
            for (const r of rigs) await r.client.close();
          },
        };
      },
      0.3,
      1,
      deferPolicy,
    );
    console.log(
      `[fault-injection in-memory, ${mode}] ${JSON.stringify(figures)} made=${manager.stats.made} expired=${manager.stats.expired}`,
    );
    expect(figures.cuts + figures.serverCloses).toBeGreaterThan(10);
    expect(figures.resumes).toBeGreaterThan(10);
  });

  it("over Streamable HTTP: the same, with network drops, SEP-1699 stream closes and killed sessions", async () => {
    let http: StreamableHttpServer | undefined;
    let server: Server | undefined;
    const { figures, manager } = await runScenario(
      1699,
      async (manager, behaviour) => {
        http = createStreamableHttpServer({
          ...manager.transportOptions,
          onSession: async (transport) => {
            await newServerSession(manager, behaviour).connect(transport);
          },
        });
        server = createServer(http.nodeListener);
        await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
        const drops: (() => void)[] = [];
        const clients: ClientSession[] = [];
        for (let i = 0; i < CLIENTS; i++) {
          // A fetch whose connections the test can drop, as a flaky network would.
          const live = new Set<AbortController>();
          const flaky: typeof fetch = (input, init) => {
            const controller = new AbortController();
            live.add(controller);
            // The caller's signal outlives this request (it is the transport's own), so no listener is left on it.
            const signal = init?.signal ? AbortSignal.any([init.signal, controller.signal]) : controller.signal;
            return fetch(input, { ...init, signal });
          };
          drops.push(() => {
            for (const c of live) c.abort();
            live.clear();
          });
          // Half the clients never resume SSE streams themselves: every lost stream becomes a requests/resume.
          const reconnect = i % 2 === 0 ? { maxAttempts: 0 } : { maxAttempts: 3, initialDelayMs: 5 };
          const makeTransport = () =>
            new StreamableHttpClientTransport({ url, fetch: flaky, reconnect, standaloneStream: "manual" });
          const client = clientSession({
            clientInfo: { name: `client-${i}`, version: "1" },
            extensions: [resumableClient()],
            reconnect: async () => makeTransport(),
          });
          client.onerror = () => undefined;
          await client.connect(makeTransport());
          clients.push(client);
        }
        let closes = 0;
        return {
          clients,
          cut: (i) => drops[i](),
          serverClose: (_i, ctx) => {
            const transport = http!.sessions.get(ctx.sessionId ?? "");
            // Alternate: SEP-1699 close of the request's stream (with retry), or the whole session ends.
            if (closes++ % 2 === 0) void transport?.closeSseStream(ctx.requestId);
            else void transport?.close();
          },
          close: async () => {
            for (const c of clients) await c.close();
          },
        };
      },
      0.5,
      // Several times the server's SEP-1699 retry hint (1 s): a client told to wait a second before polling a
      // stream that turns out gone (404) then needs a new session before it can resume.
      5,
      deferPolicy,
    );
    cleanups.push(async () => {
      await http?.close();
      await new Promise<void>((resolve) => server?.close(() => resolve()));
    });
    console.log(
      `[fault-injection http, ${mode}] ${JSON.stringify(figures)} made=${manager.stats.made} expired=${manager.stats.expired}`,
    );
    expect(figures.cuts + figures.serverCloses).toBeGreaterThan(10);
    expect(figures.resumes).toBeGreaterThan(5);
  });
});
