// The same app code on both eras: one client program and one server program from the generated SDK, run unchanged;
// only the server's build (with or without the 2026-07-28 tables) differs, and the client's output is the same.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

function run(serverEras: "both" | "2025") {
  const result = spawnSync(process.execPath, [fixture("eras-app-client.mjs"), fixture("eras-app-server.mjs")], {
    encoding: "utf8",
    timeout: 20_000,
    env: { ...process.env, MCPGEN_SERVER_ERAS: serverEras === "2025" ? "2025" : "" },
  });
  expect(result.status, result.stderr).toBe(0);
  return result;
}

describe("one client program, one server program, both eras", () => {
  it("prints the same with a dual-era server (2026-07-28) and a 2025-only build of it (2025-11-25)", () => {
    const modern = run("both");
    const legacy = run("2025");
    expect(modern.stderr).toContain("era modern 2026-07-28");
    expect(legacy.stderr).toContain("era legacy 2025-11-25");
    expect(modern.stdout).toBe(legacy.stdout);
    expect(modern.stdout).toBe(
      [
        "server app-server 1.0.0",
        "tools: add, count, greet",
        "add: 5",
        "progress 1/3 step 1",
        "progress 2/3 step 2",
        "progress 3/3 step 3",
        "count: counted 3",
        "asked: What is your name?",
        "greet: hello Ada",
        "",
      ].join("\n"),
    );
  });
});
