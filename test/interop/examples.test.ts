// The examples as users run them: the stdio client exits 0 against the stdio server, and the server's stdout is pure JSON-RPC.
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { sleep } from "../kit/timing.js";

const dist = (path: string) => fileURLToPath(new URL(`../../dist/examples/${path}`, import.meta.url));

describe("examples", () => {
  it("the stdio client drives the stdio server and exits 0", () => {
    const run = spawnSync(process.execPath, [dist("stdio-client.js")], { encoding: "utf8", timeout: 20_000 });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("add(2, 3) = 5");
    expect(run.stdout).toContain("progress 3/3");
    expect(run.stdout).toContain("slow_count: done 3");
    expect(run.stdout).toContain("long slow_count: cancelled");
  });

  it("the stdio server writes nothing but JSON-RPC lines to stdout and exits when stdin ends", async () => {
    const child = spawn(process.execPath, [dist("stdio-server.js")], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (out += d));
    const lines = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "slow_count", arguments: { count: 2, delayMs: 5 }, _meta: { progressToken: "p" } },
      },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "add", arguments: { a: 1, b: 2 } } },
    ];
    child.stdin.write(lines.map((l) => JSON.stringify(l) + "\n").join(""));
    const deadline = Date.now() + 5000;
    while (!out.includes('"id":2,"result"') && Date.now() < deadline) await sleep(10);
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(code).toBe(0);
    const messages = out
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as { jsonrpc: string; id?: number; method?: string; result?: unknown });
    expect(messages.every((m) => m.jsonrpc === "2.0")).toBe(true);
    expect(messages.find((m) => m.id === 3)?.result).toEqual({ content: [{ type: "text", text: "3" }] });
    expect(messages.find((m) => m.id === 2)?.result).toEqual({ content: [{ type: "text", text: "done 2" }] });
    expect(messages.filter((m) => m.method === "notifications/progress")).toHaveLength(2);
  });
});
