// Task nodes on one Redis for the multi-node tests: nodes in this process, a node as its own process (to SIGKILL), and their clients' links.
import { afterAll, expect } from "vitest";
import { RpcError } from "../../runtime/rpc/jsonrpc.js";
import type { Transport } from "../../runtime/rpc/transport.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import { StdioClientTransport } from "../../runtime/transports/stdio/stdio.js";
import type { TaskReceiverOptions } from "../../runtime/eras/2025-11-25/tasks/receiver.js";
import { repoRoot } from "../kit/paths.js";
import { bundledForNode } from "../kit/bundle.js";
import type { redisForTests } from "../store/redis-server.js";
import { AsPrincipal, taskNode, type TaskNode } from "./redis-nodes-node.js";

/** The lease of every node's store: a node that stops renewing it is presumed dead this long after. */
export const LEASE_MS = 600;
/** Check-ins of tasks/result calls relayed between nodes (one setting for the whole cluster). */
export const RELAY_CHECK_MS = 100;

type Redis = ReturnType<typeof redisForTests>;

/**
 * Nodes in this process on `redis` (one key prefix per test, so tests share nothing), each closed by `cleanup`, and
 * in-memory links to them carrying a principal, as an authenticating transport would.
 */
export function nodesHere(redis: Redis, cleanup: (close: () => unknown) => void) {
  return {
    async node(prefix: string, options: TaskReceiverOptions = {}): Promise<TaskNode> {
      const store = redis.store({ prefix, leaseMs: LEASE_MS });
      await store.ready();
      const server = taskNode(store, { ...options, shared: { relayCheckMs: RELAY_CHECK_MS } });
      cleanup(() => server.tasks.close());
      return server;
    },
    /** The client's end of a link to `node` on which every message carries `principal`. */
    async link(node: TaskNode, principal: string): Promise<Transport> {
      const [clientEnd, serverEnd] = createInMemoryPair();
      await node.connect(new AsPrincipal(serverEnd, principal));
      return clientEnd;
    },
  };
}

/**
 * A task node as its own process (plain node over stdio, principal "alice"), so a test can SIGKILL it. Call in a
 * describe block: the node is bundled from the sources before its tests, and every child is stopped after them.
 */
export function childNodes(redis: Redis) {
  const bundle = bundledForNode("test/tasks/redis-nodes-child.ts", "task-node");
  const children: StdioClientTransport[] = [];
  afterAll(async () => {
    for (const child of children) await child.close().catch(() => undefined);
  });
  return {
    /** A started node on `prefix`: the transport to it (not yet started) and its pid once started. */
    spawn(prefix: string): StdioClientTransport {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [bundle()],
        cwd: repoRoot,
        env: {
          REDIS_URL: redis.server.url,
          STORE_PREFIX: prefix,
          LEASE_MS: String(LEASE_MS),
          RELAY_CHECK_MS: String(RELAY_CHECK_MS),
          PRINCIPAL: "alice",
        },
        stderr: "inherit",
      });
      children.push(transport);
      return transport;
    },
  };
}

/** The RpcError `promise` rejects with (fails the test when it resolves, or rejects with something else). */
export async function rpcFailure(promise: Promise<unknown>): Promise<RpcError> {
  const outcome = await promise.then(
    (value) => new Error(`expected an error, got ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(RpcError);
  return outcome as RpcError;
}
