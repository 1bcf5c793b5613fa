// A client killed in the middle of a resumable call over HTTP: the request detaches, expires after maxWait, and everything is freed.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { ResumableRequests } from "../../runtime/resumable/server.js";
import { startResumableHttp, type ResumableHttp } from "../resumable/harness.js";
import { eventually } from "./helpers.js";

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
        await new Promise((r) => setTimeout(r, 20));
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
    while (abortedAt === undefined && Date.now() < guard) await new Promise((r) => setTimeout(r, 10));
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
    await eventually(() => session.operations.inbound.size === 0);
    expect(transport.pendingRequestCount).toBe(0);
  });
});
