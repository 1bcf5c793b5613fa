// mcpgen tools with the servers listed once in mcpgen.config.json: pull, generate and check run for every entry; flags still win; a bad entry is named.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExampleHttpServer } from "../../examples/http-server.js";
import { runCliAsync } from "../kit/cli.js";
import { tempDir } from "../kit/paths.js";
import { EVERYTHING } from "./helpers.js";

let work: string;
let http: { url: string; stop: () => Promise<void> };

beforeAll(async () => {
  work = tempDir("tools-config");
  http = await startExampleHttpServer(0);
  writeFileSync(
    join(work, "mcpgen.config.json"),
    JSON.stringify(
      {
        tools: [
          { catalogue: "tools/everything.json", server: EVERYTHING, out: "src/everything" },
          { catalogue: "tools/example.json", url: http.url, out: "src/example" },
        ],
      },
      null,
      2,
    ),
  );
});

afterAll(async () => {
  await http?.stop();
});

describe("mcpgen tools with the config's servers", () => {
  it("pull writes every entry's catalogue, generate writes every entry's bindings, check passes them all", async () => {
    const pulled = await runCliAsync(["tools", "pull"], work);
    expect(pulled.status, pulled.stderr).toBe(0);
    expect(pulled.stdout).toMatch(/^wrote {5}tools\/everything\.json \(/m);
    expect(pulled.stdout).toMatch(/^wrote {5}tools\/example\.json \(/m);
    const generated = await runCliAsync(["tools", "generate"], work);
    expect(generated.status, generated.stderr).toBe(0);
    for (const out of ["src/everything/index.ts", "src/example/index.ts"]) {
      expect(existsSync(join(work, out)), out).toBe(true);
      expect(readFileSync(join(work, out), "utf8")).toContain("export function bindTools(");
    }
    const checked = await runCliAsync(["tools", "check"], work);
    expect(checked.status, checked.stderr).toBe(0);
    expect(checked.stdout).toContain("tools/everything.json matches");
    expect(checked.stdout).toContain("tools/example.json matches");
  }, 60_000);

  it("check exits 1 when one entry's server drifted from its snapshot, naming that file", async () => {
    const file = join(work, "tools/example.json");
    const original = readFileSync(file, "utf8");
    const snapshot = JSON.parse(original) as { tools: { name: string; inputSchema: { required?: string[] } }[] };
    const add = snapshot.tools.find((t) => t.name === "add")!;
    add.inputSchema.required = ["a"];
    writeFileSync(file, JSON.stringify(snapshot, null, 2) + "\n");
    try {
      const checked = await runCliAsync(["tools", "check"], work);
      expect(checked.status).toBe(1);
      expect(checked.stdout).toContain("tools/everything.json matches");
      expect(checked.stderr).toContain("tools/example.json differs from");
    } finally {
      writeFileSync(file, original);
    }
  }, 60_000);

  it("flags name one server and win over the config", async () => {
    const pulled = await runCliAsync(["tools", "pull", "--url", http.url, "--out", "one.json"], work);
    expect(pulled.status, pulled.stderr).toBe(0);
    expect(pulled.stdout.trim().split("\n")).toHaveLength(1);
    expect(readFileSync(join(work, "one.json"), "utf8")).toBe(readFileSync(join(work, "tools/example.json"), "utf8"));
  }, 60_000);

  it("an entry without what the command needs, or no config at all, exits 2 naming it", async () => {
    const bare = tempDir("tools-config-bare");
    const none = await runCliAsync(["tools", "check"], bare);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('--catalogue is required (or list servers under "tools" in mcpgen.config.json)');
    writeFileSync(join(bare, "mcpgen.config.json"), JSON.stringify({ tools: [{ catalogue: "a.json" }] }));
    const noServer = await runCliAsync(["tools", "pull"], bare);
    expect(noServer.status).toBe(2);
    expect(noServer.stderr).toContain("mcpgen.config.json");
    expect(noServer.stderr).toContain("/tools/0");
    writeFileSync(join(bare, "mcpgen.config.json"), JSON.stringify({ tools: [{ catalogue: "a.json", sever: "x" }] }));
    const typo = await runCliAsync(["tools", "pull"], bare);
    expect(typo.status).toBe(2);
    expect(typo.stderr).toContain('unknown setting "sever"');
  });
});
