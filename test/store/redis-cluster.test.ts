// Two example HTTP server processes sharing one Redis: calls move between nodes, a killed node's calls fail promptly.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { ClientSession } from "../../runtime/mcp/client-session.js";
import { ConnectionClosedError } from "../../runtime/rpc/errors.js";
import { RpcError, type JsonObject, type JsonRpcMessage, type RequestId } from "../../runtime/rpc/jsonrpc.js";
import type { InboundInfo, SendOptions, Transport } from "../../runtime/rpc/transport.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { callToolAsync, joinToolAsync } from "../../runtime/eras/2025-11-25/async-tools/client.js";
import { RESUMABLE_FAILED_CODE } from "../../runtime/eras/2025-11-25/resumable/protocol.js";
import { rng } from "../kit/random.js";
import { freePort } from "../kit/net.js";
import { startRedis, type RedisServer } from "./redis-server.js";
import { clientSession } from "../kit/mcp-sessions.js";
import { until } from "../kit/timing.js";
import { resumableClient, resumerOf } from "../../runtime/eras/2025-11-25/resumable/client.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const LEASE_MS = 600;

/** dist/examples/http-server.js, refusing a build older than the sources it runs (`npm test` builds first). */
function builtExample(): string {
  const built = join(ROOT, "dist/examples/http-server.js");
  if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build`);
  const dirs = ["runtime/store", "runtime/eras", "runtime/transports", "runtime/rpc"];
  const sources = [
    "examples/http-server.ts",
    ...dirs.flatMap((d) => readdirSync(join(ROOT, d), { recursive: true }).map((f) => `${d}/${String(f)}`)),
  ];
  const newest = Math.max(...sources.map((file) => statSync(join(ROOT, file)).mtimeMs));
  if (statSync(built).mtimeMs < newest) throw new Error(`${built} is older than its sources: run npm run build`);
  return built;
}

interface Node {
  url: string;
  process: ChildProcess;
  exited: Promise<void>;
}

async function startNode(redisUrl: string): Promise<Node> {
  const port = await freePort();
  const child = spawn(process.execPath, [builtExample()], {
    env: { ...process.env, PORT: String(port), REDIS_URL: redisUrl, MCPGEN_LEASE_MS: String(LEASE_MS) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk.toString();
      const match = /listening on (\S+)/.exec(out);
      if (match !== null) resolveUrl(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`node exited (${code}): ${stderr}`)));
  });
  return { url, process: child, exited };
}

/** An HTTP client transport the test can cut as a failing network or a dead node would: it closes by itself. */
class CuttableTransport implements Transport {
  onmessage?: (message: unknown, info?: InboundInfo) => void;
  onmalformed?: (error: Error, info?: InboundInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private readonly inner: StreamableHttpClientTransport;
  private cutDone = false;

  constructor(readonly url: string) {
    this.inner = new StreamableHttpClientTransport({ url, terminateOnClose: false, reconnect: { maxAttempts: 0 } });
    this.inner.onmessage = (m, info) => this.onmessage?.(m, info);
    this.inner.onmalformed = (e, info) => this.onmalformed?.(e, info);
    this.inner.onerror = () => undefined;
    this.inner.onclose = () => this.cut();
  }
  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }
  start(): Promise<void> {
    return this.inner.start();
  }
  send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    if (this.cutDone) return Promise.reject(new ConnectionClosedError());
    return this.inner.send(message, options);
  }
  async close(): Promise<void> {
    this.cut();
  }
  cut(): void {
    if (this.cutDone) return;
    this.cutDone = true;
    this.inner.onmessage = undefined;
    this.inner.onclose = undefined;
    void this.inner.close().catch(() => undefined);
    this.onclose?.();
  }
}

/** A resumable client that starts on `first` and, each time its connection is cut, reconnects to `next()`. */
async function clusterClient(first: string, next: () => string, name: string) {
  const transports: CuttableTransport[] = [];
  const open = (url: string) => {
    const t = new CuttableTransport(url);
    transports.push(t);
    return t;
  };
  const client = clientSession({
    clientInfo: { name, version: "1" },
    extensions: [resumableClient({ retryDelayMs: 20 })],
    reconnect: async () => open(next()),
  });
  client.onerror = () => undefined;
  const policies = new Map<RequestId, string>();
  client.onNotification("notifications/requests/resumePolicy", (p) => {
    if (p !== undefined) policies.set(p.requestId as RequestId, String(p.resumeToken));
  });
  await client.connect(open(first));
  return {
    client,
    policies,
    cut: () => transports[transports.length - 1].cut(),
    current: () => transports[transports.length - 1].url,
  };
}

/** The app's retry for a call whose policy never arrived (nothing to resume): the request died with its connection. */
async function callSlowCount(
  client: ClientSession,
  count: number,
  delayMs: number,
  seen: number[],
  onStep = () => {},
): Promise<JsonObject> {
  for (;;) {
    const id = client.nextRequestId;
    try {
      return await client.request(
        "tools/call",
        { name: "slow_count", arguments: { count, delayMs } },
        {
          onProgress: (p) => {
            seen.push(p.progress);
            onStep();
          },
        },
      );
    } catch (error) {
      if (!(error instanceof ConnectionClosedError) && (error as { code?: unknown }).code !== -32000) throw error;
      if (process.env.CLUSTER_DEBUG)
        console.log("retry", id, seen.length, String(error), JSON.stringify((error as { data?: unknown }).data));
      seen.length = 0;
      await resumerOf(client)!.whenConnected();
    }
  }
}

describe("two nodes sharing one Redis", () => {
  let redis: RedisServer;
  let a: Node;
  let b: Node;

  beforeAll(async () => {
    redis = await startRedis();
    [a, b] = await Promise.all([startNode(redis.url), startNode(redis.url)]);
  });
  afterAll(async () => {
    for (const node of [a, b]) {
      if (node !== undefined && node.process.exitCode === null && node.process.signalCode === null) {
        node.process.kill("SIGTERM");
        await node.exited;
      }
    }
    await redis?.stop();
  });

  it("seeded cuts: resumable calls hop between nodes A and B, each progress value arrives once, in order", async () => {
    const random = rng(Number(process.env.CLUSTER_SEED ?? 20975));
    const CLIENTS = 10;
    const CALLS = 6;
    const COUNT = 20;
    // Every cut sends the client to the other node: calls started on A resume on B, and back.
    const rigs: Awaited<ReturnType<typeof clusterClient>>[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      const start = i % 2 === 0 ? a.url : b.url;
      const rig = await clusterClient(start, () => (rigs[i].current() === a.url ? b.url : a.url), `mover-${i}`);
      rigs.push(rig);
    }
    const calls: Promise<void>[] = [];
    const seen: number[][] = [];
    let cuts = 0;
    for (const [i, rig] of rigs.entries()) {
      // Three cuts per client, each when its calls together have received a seeded number of progress values.
      const cutAt = Array.from({ length: 3 }, () => CALLS * 2 + Math.floor(random() * CALLS * (COUNT - 4))).sort(
        (x, y) => x - y,
      );
      let received = 0;
      const step = () => {
        received++;
        while (cutAt.length > 0 && received >= cutAt[0]) {
          cutAt.shift();
          cuts++;
          rig.cut();
        }
      };
      for (let k = 0; k < CALLS; k++) {
        const progress: number[] = [];
        seen.push(progress);
        calls.push(
          callSlowCount(rig.client, COUNT, 10 + Math.floor(random() * 10), progress, step).then((result) => {
            expect(result.content).toEqual([{ type: "text", text: `done ${COUNT}` }]);
          }),
        );
      }
      void i;
    }
    // A hang must say where it stands: which calls are unfinished, how far each got, what each client is doing.
    const watchdog = setTimeout(() => {
      const unfinished = seen.map((p, k) => ({ call: k, progress: p.length })).filter((c) => c.progress < COUNT);
      const clients = rigs.map((rig, k) => ({
        client: k,
        open: rig.client.isOpen,
        recovering: resumerOf(rig.client)!.isRecovering,
        pending: resumerOf(rig.client)!.pending(),
        stats: resumerOf(rig.client)!.stats,
      }));
      console.log(`[redis cluster] still waiting: ${JSON.stringify(unfinished)}\n${JSON.stringify(clients)}`);
    }, 20_000);
    await Promise.all(calls).finally(() => clearTimeout(watchdog));
    const expected = Array.from({ length: COUNT }, (_, i) => i + 1);
    for (const progress of seen) expect(progress).toEqual(expected);
    let resumes = 0;
    let duplicates = 0;
    for (const rig of rigs) {
      resumes += resumerOf(rig.client)!.stats.resumes;
      duplicates += resumerOf(rig.client)!.stats.duplicatesDropped;
      await rig.client.close();
    }
    console.log(
      `[redis cluster] ${CLIENTS * CALLS} calls, ${cuts} cuts, ${resumes} resumes on the other node, ${duplicates} duplicates dropped`,
    );
    expect(resumes).toBeGreaterThan(CLIENTS * 2);
  });

  it("tools/async/call on node A; join, get and cancel on node B", async () => {
    const onA = await clusterClient(a.url, () => a.url, "async-a");
    const onB = await clusterClient(b.url, () => b.url, "async-b");
    try {
      const handle = await callToolAsync(onA.client, "slow_count", { count: 6, delayMs: 20 });
      const joinedProgress: number[] = [];
      const joined = await joinToolAsync(onB.client, handle.token, {
        onProgress: (p) => joinedProgress.push(p.progress),
      });
      const result = await onB.client.request("tools/async/get", { token: handle.token });
      expect(result.content).toEqual([{ type: "text", text: "done 6" }]);
      // Joined mid-run: it hears the rest of the progress, in order, ending with the last step (progress comes on
      // the standalone stream, the result on the POST's: the last step may land just after the result).
      await until(() => joinedProgress[joinedProgress.length - 1] === 6, 25_000);
      expect(joinedProgress.length).toBeGreaterThan(0);
      expect(joinedProgress).toEqual([...joinedProgress].sort((x, y) => x - y));
      expect(joinedProgress[joinedProgress.length - 1]).toBe(6);
      joined.release();

      const long = await callToolAsync(onA.client, "slow_count", { count: 200, delayMs: 20 });
      const cancelledOnA = new Promise<void>((r) => (long.oncancelled = () => r()));
      await onB.client.notify("tools/async/cancel", { token: long.token });
      await cancelledOnA;
      await expect(onB.client.request("tools/async/get", { token: long.token })).rejects.toThrow(/cancelled/i);
      await expect(onB.client.request("tools/async/get", { token: "not-a-token" })).rejects.toThrow(
        /Unknown or expired/,
      );
    } finally {
      await onA.client.close();
      await onB.client.close();
    }
  });

  it("node A killed mid-run: its calls resumed on B end as failed within the lease, status and async get say so", async () => {
    const CLIENTS = 4;
    const rigs = await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) => clusterClient(a.url, () => b.url, `victim-${i}`)),
    );
    const asyncHandle = await callToolAsync(rigs[0].client, "slow_count", { count: 500, delayMs: 20 });
    const outcomes: Promise<unknown>[] = [];
    const seen: number[][] = [];
    for (const rig of rigs) {
      for (let k = 0; k < 3; k++) {
        const progress: number[] = [];
        seen.push(progress);
        outcomes.push(
          rig.client
            .request(
              "tools/call",
              { name: "slow_count", arguments: { count: 500, delayMs: 20 } },
              { onProgress: (p) => progress.push(p.progress) },
            )
            .then(
              () => new Error("a call on the killed node completed"),
              (error: unknown) => error,
            ),
        );
      }
    }
    // Every call is under way on A (policy received, some progress) before A dies.
    await until(() => seen.every((p) => p.length >= 2), 25_000);
    const tokens = rigs.flatMap((rig) => [...rig.policies.entries()]);
    expect(tokens).toHaveLength(CLIENTS * 3);
    const killedAt = Date.now();
    a.process.kill("SIGKILL");
    await a.exited;
    for (const rig of rigs) rig.cut();
    const errors = await Promise.all(outcomes);
    const failedAfter = Date.now() - killedAt;
    console.log(
      `[redis cluster] node A killed: ${errors.length} calls resumed on B failed ${failedAfter} ms after the kill (lease ${LEASE_MS} ms)`,
    );
    for (const error of errors) {
      expect(error).toBeInstanceOf(RpcError);
      expect((error as RpcError).code).toBe(RESUMABLE_FAILED_CODE);
      expect((error as RpcError).message).toMatch(/node running this request stopped/);
    }
    // Within the lease, one watch period and the client's reconnect, plus slack for a loaded machine: never a hang.
    expect(failedAfter).toBeLessThan(LEASE_MS + 3000);
    for (const progress of seen) expect(progress).toEqual(Array.from({ length: progress.length }, (_, i) => i + 1));

    const observer = await clusterClient(b.url, () => b.url, "observer");
    try {
      const [requestId, resumeToken] = tokens[0];
      const status = await observer.client.request("requests/getStatus", { requestId, resumeToken });
      expect(status.status).toBe("failed");
      await expect(observer.client.request("tools/async/get", { token: asyncHandle.token })).rejects.toThrow(
        /node running it stopped/,
      );
    } finally {
      await observer.client.close();
      for (const rig of rigs) await rig.client.close().catch(() => undefined);
    }

    // Nothing in Redis lives forever: every key has an expiry (the dead node's records included).
    const raw = new Redis(redis.url);
    try {
      const keys = await raw.keys("mcpgen:*");
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) expect(await raw.pttl(key), key).toBeGreaterThan(0);
    } finally {
      raw.disconnect();
    }
  });
});
