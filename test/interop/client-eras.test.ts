// Our Client with default options against servers of either era, as real processes: the official SDK 2.x (dual-era
// and 2026-only) over stdio and Streamable HTTP lands on 2026-07-28; the SDK 1.x and our own 2025 build over stdio land
// on 2025-11-25 with one server process; a server that never answers the probe costs the probe timeout, no more.
import { spawn } from "node:child_process";
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

/**
 * A file each server process appends its pid to (how many processes the client started) and one its stdin, or its
 * POST bodies, go to (the requests the server received, in order): the taps of eras-count-starts.mjs and of the SDK
 * 2.x fixture.
 */
function serverTap(): { env: Record<string, string>; count: () => number; methods: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), "mcpgen-eras-"));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  const starts = join(dir, "starts");
  const received = join(dir, "received");
  const lines = (file: string) => {
    try {
      return readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "");
    } catch {
      return [];
    }
  };
  return {
    env: { MCPGEN_STARTS: starts, MCPGEN_TAP_FILE: received },
    count: () => lines(starts).length,
    methods: () =>
      lines(received)
        .flatMap((l) =>
          [JSON.parse(l) as { method?: string; id?: unknown } | { method?: string; id?: unknown }[]].flat(),
        )
        .filter((m) => m.method !== undefined && m.id !== undefined)
        .map((m) => m.method!),
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
async function v2(over: "stdio" | "http", posture: "dual" | "reject", env: Record<string, string> = {}) {
  const args = [V2, over, ...(posture === "reject" ? ["reject"] : [])];
  if (over === "stdio") return new StdioClientTransport({ command: process.execPath, args, env, stderr: "ignore" });
  return new StreamableHttpClientTransport({ url: await spawnWith(args, env) });
}

/** Starts the fixture with its arguments and waits for its URL. */
async function spawnWith(args: string[], env: Record<string, string> = {}): Promise<string> {
  const child = spawn(process.execPath, args, {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
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
  it.each(["stdio", "http"] as const)(
    "over %s, the 2026-only posture is real: a client that insists on 2025-11-25 is refused",
    async (over) => {
      await expect(connect(await v2(over, "reject"), { era: "legacy" })).rejects.toThrow(
        /unsupported protocol version/i,
      );
    },
  );
});

describe("our Client -> 2025-only servers over stdio", () => {
  const runner = fixture("eras-count-starts.mjs");

  it.each([
    ["the official SDK 1.x", "sdk-server.mjs"],
    ["our own 2025 build (no revision tables)", "our-server.mjs"],
  ])("%s: lands on 2025-11-25 with one server process, probed in place", async (_, script) => {
    const tap = serverTap();
    const client = await connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [runner, fixture(script)],
        env: tap.env,
        stderr: "ignore",
      }),
    );
    expect(client.peer.era).toBe("legacy");
    expect(client.peer.protocolVersion).toBe("2025-11-25");
    expect(client.peer.verdict).toEqual({ era: "legacy", protocolVersion: "2025-11-25" });
    expect(text(await client.callTool({ name: "add", arguments: { a: 1, b: 2 } }))).toBe("3");
    expect(tap.count()).toBe(1);
    // The one process was asked server/discover, refused it, and was then initialized.
    expect(tap.methods()).toEqual(["server/discover", "initialize", "tools/call"]);
  });

  it("a server that never answers server/discover: legacy within the probe timeout, one process", async () => {
    const tap = serverTap();
    const started = performance.now();
    const client = await connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [runner, fixture("eras-strict-server.mjs")],
        env: tap.env,
        stderr: "ignore",
      }),
      { probeTimeoutMs: 500 },
    );
    const took = performance.now() - started;
    expect(client.peer.era).toBe("legacy");
    expect(client.peer.protocolVersion).toBe("2025-11-25");
    expect(took).toBeGreaterThanOrEqual(450);
    expect(took).toBeLessThan(5000);
    expect((await client.listTools()).tools).toEqual([]);
    expect(tap.count()).toBe(1);
    expect(tap.methods()).toEqual(["server/discover", "initialize", "tools/list"]);
  });
});

describe("a kept verdict", () => {
  it("over stdio: the next process is never asked server/discover", async () => {
    const firstTap = serverTap();
    const first = await connect(await v2("stdio", "dual", firstTap.env));
    const verdict = first.peer.verdict!;
    expect(verdict).toEqual({ era: "modern", protocolVersion: "2026-07-28" });
    expect(firstTap.methods()).toEqual(["server/discover"]);

    const secondTap = serverTap();
    const second = await connect(await v2("stdio", "dual", secondTap.env), { verdict });
    expect(second.peer.era).toBe("modern");
    expect(second.peer.protocolVersion).toBe("2026-07-28");
    expect(text(await second.callTool({ name: "add", arguments: { a: 1, b: 1 } }))).toBe("2");
    expect(secondTap.methods()).toEqual(["tools/call"]);
  });

  it("over HTTP: the server receives no server/discover from the second client", async () => {
    const tap = serverTap();
    const url = await spawnWith([V2, "http"], tap.env);
    const first = await connect(new StreamableHttpClientTransport({ url }));
    const verdict = first.peer.verdict!;
    expect(verdict).toEqual({ era: "modern", protocolVersion: "2026-07-28" });
    expect(tap.methods()).toEqual(["server/discover"]);

    const second = await connect(new StreamableHttpClientTransport({ url }), { verdict });
    expect(second.peer.era).toBe("modern");
    expect(text(await second.callTool({ name: "add", arguments: { a: 1, b: 1 } }))).toBe("2");
    expect(tap.methods()).toEqual(["server/discover", "tools/call"]);
  });
});
