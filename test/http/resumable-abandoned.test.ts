// A client gone in the middle of a resumable call over HTTP: the request waits maxWait for it, then ends and everything is freed.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { ResumableRequests } from "../../runtime/eras/2025-11-25/resumable/server.js";
import { startResumableHttp, type ResumableHttp } from "../resumable/harness.js";
import { post, readSse, sessionHeaders } from "./helpers.js";
import { sleep, until } from "../kit/timing.js";

const rawClient = fileURLToPath(new URL("./fixtures/resumable-raw-client.mjs", import.meta.url));
const MAX_WAIT_S = 1;

let server: ResumableHttp | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe("a resumable request whose client process is killed (SIGKILL)", () => {
  it("is aborted maxWait after its connection closed, and the manager, store, session and transport hold nothing", async () => {
    const manager = new ResumableRequests({ policy: (method) => method === "tools/call", maxWait: MAX_WAIT_S });
    let abortedAt: number | undefined;
    let abortReason: unknown;
    server = await startResumableHttp(manager, {
      step: async (_name, _args, i, ctx) => {
        if (i === 1) {
          ctx.signal.addEventListener("abort", () => {
            abortedAt = Date.now();
            abortReason = ctx.signal.reason;
          });
        }
        // Would run for about half an hour: only an abort ends it.
        await sleep(20);
      },
    });
    const child = spawn(process.execPath, [rawClient, server.url], { stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && resolve());
      child.once("exit", (code) => reject(new Error(`client exited early (${code}): ${stderr}`)));
    });
    expect(manager.size).toBe(1);
    const killedAt = Date.now();
    child.kill("SIGKILL");
    await exited;

    const guard = Date.now() + MAX_WAIT_S * 1000 + 5000;
    while (abortedAt === undefined && Date.now() < guard) await sleep(10);
    expect(abortedAt, "the handler was never aborted").toBeDefined();
    // The server kept the request for the client's maxWait, counted from when the connection went.
    expect(abortedAt! - killedAt).toBeGreaterThanOrEqual(MAX_WAIT_S * 1000 - 50);
    expect(abortedAt! - killedAt).toBeLessThan(MAX_WAIT_S * 1000 + 2000);
    expect(String((abortReason as Error).message)).toMatch(/expired/);
    expect(manager.stats.expired).toBe(1);

    await manager.idle();
    expect(manager.size).toBe(0);
    expect(manager.store.count()).toBe(0);
    const [session] = server.servers;
    const transport = [...server.mcp.sessions.values()][0];
    await until(() => session.operations.inbound.size === 0);
    expect(transport.pendingRequestCount).toBe(0);
  });
});

describe("a resumable request whose reply stream's connection closes", () => {
  it("goes on when the client comes back with GET + Last-Event-ID within maxWait: not aborted, the rest arrives there", async () => {
    const manager = new ResumableRequests({ policy: (method) => method === "tools/call", maxWait: MAX_WAIT_S });
    let aborted = false;
    server = await startResumableHttp(manager, {
      step: async (_name, _args, i, ctx) => {
        if (i === 1) ctx.signal.addEventListener("abort", () => (aborted = true));
        // Runs well past maxWait after the disconnect below.
        await sleep(30);
      },
    });
    const init = await post(server.url, {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: { resumableRequests: {} },
        clientInfo: { name: "raw", version: "0" },
      },
    });
    await readSse(init);
    const sid = init.headers.get("mcp-session-id")!;
    await post(server.url, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionHeaders(sid));
    const steps = 60;
    const call = await post(
      server.url,
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "count", arguments: { steps }, _meta: { progressToken: 1 } },
      },
      sessionHeaders(sid),
    );
    // Read two progress values, then drop the connection.
    const first = await readSse(
      call,
      (r) => r.messages.filter((m) => m.method === "notifications/progress").length === 2,
    );
    await sleep((MAX_WAIT_S * 1000) / 2);
    const again = await fetch(server.url, {
      headers: { accept: "text/event-stream", "last-event-id": first.events.at(-1)!.id, ...sessionHeaders(sid) },
    });
    expect(again.status).toBe(200);
    const rest = await readSse(again);
    const progress = [...first.messages, ...rest.messages]
      .filter((m) => m.method === "notifications/progress")
      .map((m) => (m.params as { progress: number }).progress);
    expect(progress).toEqual(Array.from({ length: steps }, (_, i) => i + 1));
    expect(rest.messages.at(-1)).toMatchObject({
      id: 1,
      result: { content: [{ type: "text", text: `counted ${steps} for ` }] },
    });
    expect(aborted).toBe(false);
    expect(manager.stats.expired).toBe(0);
  });
});
