// A resumable call whose server dies for good: every retry waits, the call fails with ResumeFailedError within maxWait, attempts stay few.
import { afterEach, describe, expect, it } from "vitest";
import { ClientSession } from "../../runtime/mcp/client-session.js";
import { ResumableRequests } from "../../runtime/eras/2025-11-25/resumable/server.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { startResumableHttp, type ResumableHttp } from "./harness.js";
import { clientSession } from "../kit/mcp-sessions.js";
import { resumableClient } from "../../runtime/eras/2025-11-25/resumable/client.js";
import { countConnections } from "../kit/net.js";

const MAX_WAIT_S = 2;

let server: ResumableHttp | undefined;
const clients: ClientSession[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  await server?.stop();
  server = undefined;
});

describe("a resumable call whose server dies and never comes back", () => {
  it.each([
    { hook: "a reconnect hook", withHook: true },
    { hook: "no reconnect hook", withHook: false },
  ])(
    "fails with ResumeFailedError within maxWait, with $hook, after a bounded number of waiting attempts",
    async ({ withHook }) => {
      const manager = new ResumableRequests({ policy: (method) => method === "tools/call", maxWait: MAX_WAIT_S });
      let running!: () => void;
      const started = new Promise<void>((resolve) => (running = resolve));
      server = await startResumableHttp(manager, {
        step: async (_name, _args, i, ctx) => {
          if (i === 2) running();
          // Runs until the test ends it: the server is "killed" under it.
          if (i >= 2)
            await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
        },
      });
      const url = server.url;
      const reconnects: number[] = [];
      const client = clientSession({
        clientInfo: { name: "dead-server", version: "1" },
        extensions: [resumableClient()],
        ...(withHook
          ? {
              reconnect: async () => {
                reconnects.push(Date.now());
                return new StreamableHttpClientTransport({ url });
              },
            }
          : {}),
      });
      client.onerror = () => undefined;
      clients.push(client);
      await client.connect(new StreamableHttpClientTransport({ url }));
      const call = client.request("tools/call", { name: "count", arguments: { steps: 5 } }).then(
        () => new Error("the call succeeded"),
        (error: unknown) => error,
      );
      await started;
      await new Promise((r) => setTimeout(r, 50)); // the policy and the first progress values have arrived

      // Kill the server: its connections end and nothing listens on its port any more.
      const attempts = countConnections(server.port);
      const killedAt = Date.now();
      await server.stop();
      const hangGuard = new Promise((r) => setTimeout(() => r("still pending"), MAX_WAIT_S * 1000 + 5000));
      const outcome = await Promise.race([call, hangGuard]);
      const settledAt = Date.now();
      // Whatever the session still tries afterwards (plain reconnects, bounded by maxAttempts) counts too.
      await new Promise((r) => setTimeout(r, 500));
      attempts.stop();

      expect(outcome).toBeInstanceOf(Error);
      expect((outcome as Error).name).toBe("ResumeFailedError");
      expect((outcome as Error).message).toMatch(/maxWait/);
      // Not before maxWait (the server keeps the request that long), and not much after it.
      expect(settledAt - killedAt).toBeGreaterThanOrEqual(MAX_WAIT_S * 1000 - 50);
      expect(settledAt - killedAt).toBeLessThan(MAX_WAIT_S * 1000 + 1000);
      if (withHook) expect(reconnects.length).toBeGreaterThanOrEqual(1);
      // The backoff (50 ms doubling, capped at maxWait / 8, jittered to half or more) allows about 20 attempts in
      // 2 s; the spin this guards against made thousands.
      expect(attempts.count).toBeGreaterThanOrEqual(3);
      expect(attempts.count).toBeLessThanOrEqual(40);
      console.log(
        `[dead-server, ${withHook ? "hook" : "no hook"}] settled after ${settledAt - killedAt} ms, ${attempts.count} connection attempts, ${reconnects.length} reconnects`,
      );
    },
  );
});
