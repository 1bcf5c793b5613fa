// A task node as its own process (bundled by the multi-node tests): stdio, the principal and Redis from the env.
import { RedisOperationStore } from "../../runtime/store/redis.js";
import { StdioServerTransport } from "../../runtime/transports/stdio/stdio.js";
import { AsPrincipal, taskNode } from "./redis-nodes-node.js";

const store = new RedisOperationStore({
  url: process.env.REDIS_URL,
  prefix: process.env.STORE_PREFIX,
  leaseMs: Number(process.env.LEASE_MS),
});
await store.ready();
const server = taskNode(store, { shared: { relayCheckMs: Number(process.env.RELAY_CHECK_MS) } });
await server.connect(new AsPrincipal(new StdioServerTransport(), process.env.PRINCIPAL ?? "alice"));
