// Our Client with default options against servers of either era, as real processes: the official SDK 2.x (dual-era
// and 2026-only) over stdio and Streamable HTTP lands on 2026-07-28; the SDK 1.x and our own 2025 build over stdio land
// on 2025-11-25 with one server process; a server that never answers the probe costs the probe timeout, no more.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Client, type ClientOptions } from "../../generated/client.js";
import { RequestCancelledError } from "../../runtime/rpc/errors.js";
import type { Transport } from "../../runtime/rpc/transport.js";
import { StdioClientTransport } from "../../runtime/transports/stdio/stdio.js";
import { StreamableHttpClientTransport } from "../../runtime/transports/http/client/transport.js";
import { closeAfterEach } from "../kit/cleanup.js";
import { sleep } from "../kit/timing.js";

const cleanup = closeAfterEach();
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const V2 = fixture("eras-sdk-v2-server.mjs");

function text(result: { content: readonly { type: string; text?: string }[] }): string {
  return result.content.map((c) => c.text ?? "").join("");
}

/** A file each server process appends its pid to: how many processes the client started. */
function startsFile(): { env: Record<string, string>; count: () => number } {
  const dir = mkdtempSync(join(tmpdir(), "mcpgen-eras-"));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "starts");
  return {
    env: { MCPGEN_STARTS: file },
    count: () => readFileSync(file, "utf8").trim().split("\n").filter(Boolean).length,
  };
}

async function connect(transport: Transport, options: Partial<ClientOptions> = {}) {
  const client = await Client.connect(transport, {
    clientInfo: { name: "eras-interop", version: "1.0.0" },
    capabilities: { elicitation: {} },
    ...options,
  });
  cleanup(() => client.peer.close());
  return client;
}

/** The transport to the SDK 2.x fixture in `posture`, over `over`. */
async function v2(over: "stdio" | "http", posture: "dual" | "reject"): Promise<Transport> {
  const args = [V2, over, ...(posture === "reject" ? ["reject"] : [])];
  if (over === "stdio") return new StdioClientTransport({ command: process.execPath, args, stderr: "ignore" });
  return new StreamableHttpClientTransport({ url: await spawnWith(args) });
}

/** Starts the fixture with its arguments and waits for its URL. */
async function spawnWith(args: string[]): Promise<string> {
  const { spawn } = await import("node:child_process");
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  cleanup(() => {
    child.kill();
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`the fixture exited with ${code}`)));
  });
}

describe("our Client -> the official SDK 2.x server", () => {
  const cases = [
    ["stdio", "dual"],
    ["stdio", "reject"],
    ["http", "dual"],
    ["http", "reject"],
  ] as const;

  it.each(cases)(
    "over %s, %s: 2026-07-28, progress, an input round through onElicit, cancellation",
    async (over, posture) => {
      const client = await connect(await v2(over, posture));
      expect(client.peer.era).toBe("modern");
      expect(client.peer.protocolVersion).toBe("2026-07-28");
      expect(client.peer.serverInfo).toMatchObject({ name: "sdk-v2-fixture" });
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([
        "add",
        "cancelled_count",
        "greet",
        "slow_count",
      ]);
      expect(text(await client.callTool({ name: "add", arguments: { a: 2, b: 3 } }))).toBe("5");

      const progress: number[] = [];
      const counted = await client.callTool(
        { name: "slow_count", arguments: { count: 3, delayMs: 10 } },
        { onProgress: (p) => progress.push(p.progress) },
      );
      expect(text(counted)).toBe("done 3");
      expect(progress).toEqual([1, 2, 3]);

      const asked: string[] = [];
      client.onElicit((params) => {
        asked.push(params.message);
        return { action: "accept", content: { name: "Ada" } };
      });
      expect(text(await client.callTool({ name: "greet" }))).toBe("hello Ada");
      expect(asked).toEqual(["What is your name?"]);

      const controller = new AbortController();
      const long = client.callTool(
        { name: "slow_count", arguments: { count: 100, delayMs: 20 } },
        { signal: controller.signal, onProgress: () => controller.abort("enough") },
      );
      await expect(long).rejects.toBeInstanceOf(RequestCancelledError);
      // The server saw it: stdio sent notifications/cancelled, HTTP closed the request's stream.
      const deadline = Date.now() + 3000;
      let seen = "0";
      while (Date.now() < deadline && seen === "0") {
        seen = text(await client.callTool({ name: "cancelled_count" }));
        if (seen === "0") await sleep(20);
      }
      expect(seen).toBe("1");
    },
  );
});

describe("our Client -> 2025-only servers over stdio", () => {
  it.each([
    ["the official SDK 1.x", "sdk-server.mjs"],
    ["our own 2025 build (no revision tables)", "our-server.mjs"],
  ])("%s: lands on 2025-11-25 with one server process, probed in place", async (_, script) => {
    const starts = startsFile();
    const runner = fixture("eras-count-starts.mjs");
    const client = await connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [runner, fixture(script)],
        env: starts.env,
        stderr: "ignore",
      }),
    );
    expect(client.peer.era).toBe("legacy");
    expect(client.peer.protocolVersion).toBe("2025-11-25");
    expect(text(await client.callTool({ name: "add", arguments: { a: 1, b: 2 } }))).toBe("3");
    expect(starts.count()).toBe(1);
  });

  it("a server that never answers server/discover: legacy within the probe timeout, one process", async () => {
    const starts = startsFile();
    const started = performance.now();
    const client = await connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [fixture("eras-silent-server.mjs")],
        env: starts.env,
        stderr: "ignore",
      }),
      { probeTimeoutMs: 500 },
    );
    const took = performance.now() - started;
    expect(client.peer.era).toBe("legacy");
    expect(took).toBeGreaterThanOrEqual(450);
    expect(took).toBeLessThan(5000);
    expect((await client.listTools()).tools).toEqual([]);
    expect(starts.count()).toBe(1);
  });
});

describe("a kept verdict", () => {
  it("skips the probe on the next connection (the SDK 2.x server sees no server/discover)", async () => {
    const first = await connect(await v2("stdio", "dual"));
    const verdict = first.peer.verdict!;
    expect(verdict).toEqual({ era: "modern", protocolVersion: "2026-07-28" });
    const transport = new StdioClientTransport({ command: process.execPath, args: [V2, "stdio"], stderr: "ignore" });
    const sent: string[] = [];
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if ("method" in message) sent.push(message.method);
      return send(message, options);
    };
    const second = await connect(transport, { verdict });
    expect(second.peer.era).toBe("modern");
    expect(text(await second.callTool({ name: "add", arguments: { a: 1, b: 1 } }))).toBe("2");
    expect(sent).toEqual(["tools/call"]);
  });
});
