// mcpgen tools pull: the catalogue of server-everything (stdio) and of our example HTTP server, byte for byte the same on every pull; failures exit 2 naming what failed.
import { createServer, type Server } from "node:http";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExampleHttpServer } from "../../examples/http-server.js";
import { runCliAsync } from "../kit/cli.js";
import { tempDir } from "../kit/paths.js";
import { bearer, startAuthorizationServer, type TestAuthorizationServer } from "../auth/server/helpers.js";
import { EVERYTHING } from "./helpers.js";

interface Catalogue {
  mcpgenCatalogue: number;
  server: { name: string; version: string };
  protocolVersion: string;
  tools: { name: string; inputSchema: object; outputSchema?: object }[];
  prompts: { name: string }[];
  resourceTemplates: { uriTemplate: string }[];
}

let work: string;
beforeAll(() => {
  work = tempDir("tools-pull");
});

/** Keys sorted at every level, as the canonical bytes have them. */
function keysSorted(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(keysSorted);
  if (value === null || typeof value !== "object") return true;
  const keys = Object.keys(value);
  return keys.every((k, i) => i === 0 || keys[i - 1]! < k) && Object.values(value).every(keysSorted);
}

describe("mcpgen tools pull over stdio (server-everything)", () => {
  it("writes the canonical catalogue, and a second pull gives the same bytes", async () => {
    const first = await runCliAsync(["tools", "pull", "--server", EVERYTHING, "--out", "everything.json"], work);
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(
      /^wrote {5}everything\.json \(\d+ tools, \d+ prompts, \d+ resource templates of \S+ \S+\)\n$/,
    );
    const text = readFileSync(join(work, "everything.json"), "utf8");

    const second = await runCliAsync(["tools", "pull", "--server", EVERYTHING, "--out", "again.json"], work);
    expect(second.status).toBe(0);
    expect(readFileSync(join(work, "again.json"), "utf8")).toBe(text);
    const third = await runCliAsync(["tools", "pull", "--server", EVERYTHING, "--out", "everything.json"], work);
    expect(third.stdout).toMatch(/^unchanged everything\.json/);

    const catalogue = JSON.parse(text) as Catalogue;
    expect(text).toBe(JSON.stringify(catalogue, null, 2) + "\n");
    expect(keysSorted(catalogue)).toBe(true);
    expect(Object.keys(catalogue)).toEqual([
      "mcpgenCatalogue",
      "prompts",
      "protocolVersion",
      "resourceTemplates",
      "server",
      "tools",
    ]);
    expect(catalogue.mcpgenCatalogue).toBe(1);
    expect(catalogue.server.name).toBe("mcp-servers/everything");
    const names = catalogue.tools.map((t) => t.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(["echo", "get-sum", "get-structured-content"]));
    expect(catalogue.tools.find((t) => t.name === "get-structured-content")?.outputSchema).toBeDefined();
    expect(catalogue.prompts.length).toBeGreaterThan(0);
    expect(catalogue.resourceTemplates.length).toBeGreaterThan(0);
  }, 60_000);
});

describe("mcpgen tools pull over Streamable HTTP (examples/http-server.ts)", () => {
  it("pulls the example's tools on the era both speak, the same bytes twice", async () => {
    const running = await startExampleHttpServer(0);
    try {
      const a = await runCliAsync(["tools", "pull", "--url", running.url, "--out", "http.json"], work);
      expect(a.stderr).toBe("");
      expect(a.status).toBe(0);
      const b = await runCliAsync(["tools", "pull", "--url", running.url, "--out", "http-again.json"], work);
      expect(b.status).toBe(0);
      const text = readFileSync(join(work, "http.json"), "utf8");
      expect(readFileSync(join(work, "http-again.json"), "utf8")).toBe(text);
      const catalogue = JSON.parse(text) as Catalogue;
      expect(catalogue.server).toEqual({ name: "mcpgen-example-http", version: "1.0.0" });
      expect(catalogue.protocolVersion).toBe("2026-07-28");
      expect(catalogue.tools.map((t) => t.name)).toEqual(["add", "greet", "slow_count"]);
      expect(catalogue.prompts).toEqual([]);
      expect(catalogue.resourceTemplates).toEqual([]);
    } finally {
      await running.stop();
    }
  }, 60_000);

  describe("behind a bearer check", () => {
    let as: TestAuthorizationServer;
    beforeAll(async () => {
      as = await startAuthorizationServer();
    });
    afterAll(async () => {
      await as?.stop();
    });

    it("exits 2 on 401 naming the status and --header, and pulls with the token in --header", async () => {
      const running = await startExampleHttpServer(0, { authIssuer: as.issuer });
      try {
        const refused = await runCliAsync(["tools", "pull", "--url", running.url, "--out", "denied.json"], work);
        expect(refused.status).toBe(2);
        expect(refused.stderr).toContain(`error: ${running.url}: HTTP 401 while connecting`);
        expect(refused.stderr).toContain('--header "Authorization: Bearer <token>"');
        const token = bearer(await as.mint(running.url, { scope: "mcp:tools" })).authorization!;
        const allowed = await runCliAsync(
          ["tools", "pull", "--url", running.url, "--header", `Authorization: ${token}`, "--out", "allowed.json"],
          work,
        );
        expect(allowed.stderr).toBe("");
        expect(allowed.status).toBe(0);
        expect((JSON.parse(readFileSync(join(work, "allowed.json"), "utf8")) as Catalogue).tools).toHaveLength(3);
      } finally {
        await running.stop();
      }
    }, 60_000);
  });
});

/** A stdio server that lists one tool per page over three pages ("pages"), or hands out the same cursor forever ("loop"). */
const PAGER = `import { createInterface } from "node:readline";
const mode = process.argv[2];
const send = (message) => process.stdout.write(JSON.stringify(message) + "\\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  if (message.method === "initialize")
    return send({ jsonrpc: "2.0", id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "pager", version: "1" } } });
  if (message.method === "tools/list") {
    const page = Number(message.params?.cursor ?? 0);
    const next = mode === "loop" ? "0" : page < 2 ? String(page + 1) : undefined;
    const tools = [{ name: "tool-" + (2 - page), inputSchema: { type: "object" } }];
    return send({ jsonrpc: "2.0", id: message.id, result: next === undefined ? { tools } : { tools, nextCursor: next } });
  }
  send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } });
});
`;

describe("mcpgen tools pull pages through tools/list", () => {
  const pager = (mode: string) => `${JSON.stringify(process.execPath)} pager.mjs ${mode}`;
  beforeAll(() => {
    writeFileSync(join(work, "pager.mjs"), PAGER);
  });

  it("follows nextCursor to the last page, and sorts what it read", async () => {
    const r = await runCliAsync(["tools", "pull", "--server", pager("pages"), "--out", "paged.json"], work);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const catalogue = JSON.parse(readFileSync(join(work, "paged.json"), "utf8")) as Catalogue;
    expect(catalogue.tools.map((t) => t.name)).toEqual(["tool-0", "tool-1", "tool-2"]);
  }, 30_000);

  it("stops at --max-pages, and at a cursor handed out twice (exit 2)", async () => {
    const capped = await runCliAsync(
      ["tools", "pull", "--server", pager("pages"), "--max-pages", "2", "--out", "never.json"],
      work,
    );
    expect(capped.stderr).toContain("tools/list: more than 2 pages (raise --max-pages)");
    expect(capped.status).toBe(2);
    const looping = await runCliAsync(["tools", "pull", "--server", pager("loop"), "--out", "never.json"], work);
    expect(looping.stderr).toContain('tools/list: the server handed out cursor "0" twice');
    expect(looping.status).toBe(2);
  }, 30_000);
});

describe("mcpgen tools pull failures: exit 2, naming what failed", () => {
  const node = JSON.stringify(process.execPath);

  it.each<[string, string[], RegExp]>([
    [
      "a program that is not there",
      ["--server", "no-such-program-mcpgen --stdio"],
      /`no-such-program-mcpgen --stdio`: cannot start it: no-such-program-mcpgen not found/,
    ],
    [
      "a server that exits",
      ["--server", `${node} -e "process.exit(3)"`],
      /the server process ended while connecting: .*exited with code 3/,
    ],
    [
      "a server that never answers",
      ["--server", `${node} -e "setInterval(() => {}, 1000)"`, "--timeout-ms", "1500"],
      /timed out after 1500 ms while connecting \(raise --timeout-ms/,
    ],
    [
      "nothing listening",
      ["--url", "http://127.0.0.1:9/mcp"],
      /http:\/\/127\.0\.0\.1:9\/mcp: connection refused while connecting/,
    ],
    [
      "not an HTTP URL",
      ["--url", "ftp://example.com/mcp"],
      /--url ftp:\/\/example\.com\/mcp: only http: and https: endpoints/,
    ],
    [
      "both --server and --url",
      ["--server", "x", "--url", "http://127.0.0.1:9/mcp"],
      /give exactly one of --server <command line> and --url <endpoint>/,
    ],
    ["neither --server nor --url", [], /give exactly one of --server/],
    [
      "a header without a colon",
      ["--url", "http://127.0.0.1:9/mcp", "--header", "no colon"],
      /--header "no colon": expected "Name: value"/,
    ],
    ["an unterminated quote", ["--server", "'unterminated"], /--server: unterminated single quote/],
    ["a timeout of 0", ["--server", "x", "--timeout-ms", "0"], /option '--timeout-ms <ms>' argument '0' is invalid/],
  ])(
    "%s",
    async (_name, args, message) => {
      const r = await runCliAsync(["tools", "pull", ...args, "--out", "never.json"], work);
      expect(r.stderr).toMatch(message);
      expect(r.status).toBe(2);
    },
    30_000,
  );

  it("names the HTTP status a server answers with", async () => {
    const server: Server = createServer((_req, res) => void res.writeHead(503).end("down for maintenance"));
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    try {
      const { port } = server.address() as { port: number };
      const r = await runCliAsync(
        ["tools", "pull", "--url", `http://127.0.0.1:${port}/mcp`, "--out", "never.json"],
        work,
      );
      expect(r.stderr).toMatch(/HTTP 503 while connecting: down for maintenance/);
      expect(r.status).toBe(2);
    } finally {
      await new Promise((done) => server.close(done));
    }
  }, 30_000);
});
