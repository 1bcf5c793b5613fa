// The provisioning step of npm test: which system programs are missing, and whether it installs them or says how.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, tempDir } from "./kit/paths.js";
import { findOnPath, plan, programs, provision, type Host, type Program } from "./provision.mjs";

const redis: Program = { command: "redis-server", debianPackage: "redis-server", neededBy: "store tests" };
const browser: Program = { command: "chromium", debianPackage: "chromium", neededBy: "browser tests" };
const table = [redis, browser];

/** A host where `installed` commands are on PATH; installing a package (via `run`) puts its command there. */
function fakeHost(installed: string[], facts: { isRoot: boolean; isDebian: boolean }): Host & { onPath: Set<string> } {
  const onPath = new Set(installed);
  return { onPath, has: (c) => onPath.has(c), ...facts };
}

describe("plan", () => {
  const cases: {
    name: string;
    installed: string[];
    isRoot: boolean;
    isDebian: boolean;
    expected: ReturnType<typeof plan>["action"];
    command?: string;
  }[] = [
    {
      name: "everything present, not root",
      installed: ["redis-server", "chromium"],
      isRoot: false,
      isDebian: true,
      expected: "none",
    },
    {
      name: "everything present, root on Debian",
      installed: ["redis-server", "chromium"],
      isRoot: true,
      isDebian: true,
      expected: "none",
    },
    { name: "missing, root on Debian", installed: ["chromium"], isRoot: true, isDebian: true, expected: "install" },
    {
      name: "missing, not root on Debian",
      installed: ["chromium"],
      isRoot: false,
      isDebian: true,
      expected: "stop",
      command: "sudo apt-get install -y redis-server",
    },
    {
      name: "missing, root elsewhere",
      installed: ["chromium"],
      isRoot: true,
      isDebian: false,
      expected: "stop",
      command: "apt-get install -y redis-server",
    },
    {
      name: "missing, not root elsewhere",
      installed: [],
      isRoot: false,
      isDebian: false,
      expected: "stop",
      command: "sudo apt-get install -y redis-server chromium",
    },
  ];

  it.each(cases)("$name: $expected", ({ installed, isRoot, isDebian, expected, command }) => {
    const p = plan(table, fakeHost(installed, { isRoot, isDebian }));
    expect(p.action).toBe(expected);
    expect(p.missing.map((m) => m.command)).toEqual(table.map((t) => t.command).filter((c) => !installed.includes(c)));
    if (p.action === "install")
      expect(p.commands).toEqual([
        ["apt-get", "update"],
        ["apt-get", "install", "-y", ...p.missing.map((m) => m.debianPackage)],
      ]);
    if (p.action === "stop") {
      expect(p.command).toBe(command);
      // The exact command on a line of its own, and every missing program named with what needs it.
      expect(p.message.split("\n")).toContain(`  ${command}`);
      for (const m of p.missing) expect(p.message).toContain(`${m.command} (needed by ${m.neededBy})`);
    }
  });

  it("installs a package once even when two programs come from it", () => {
    const server: Program = { command: "redis-server", debianPackage: "redis", neededBy: "a" };
    const cli: Program = { command: "redis-cli", debianPackage: "redis", neededBy: "b" };
    const p = plan([server, cli], fakeHost([], { isRoot: true, isDebian: true }));
    expect(p.action === "install" && p.commands[1]).toEqual(["apt-get", "install", "-y", "redis"]);
  });
});

describe("provision", () => {
  /** Runs provision with a recorder in place of apt-get; `status` is what each command exits with. */
  function runWith(host: ReturnType<typeof fakeHost>, status: (argv: string[]) => number, dryRun = false) {
    const ran: string[] = [];
    const log: string[] = [];
    const code = provision(
      table,
      host,
      (argv) => {
        ran.push(argv.join(" "));
        const s = status(argv);
        if (s === 0 && argv[1] === "install")
          for (const pkg of argv.slice(3)) host.onPath.add(table.find((t) => t.debianPackage === pkg)!.command);
        return s;
      },
      (line) => log.push(line),
      { dryRun },
    );
    return { code, ran, log: log.join("\n") };
  }

  it("runs nothing and prints nothing when every program is present", () => {
    expect(runWith(fakeHost(["redis-server", "chromium"], { isRoot: true, isDebian: true }), () => 0)).toEqual({
      code: 0,
      ran: [],
      log: "",
    });
  });

  it("as root on Debian, updates the package lists, installs what is missing and succeeds", () => {
    const r = runWith(fakeHost(["chromium"], { isRoot: true, isDebian: true }), () => 0);
    expect(r.ran).toEqual(["apt-get update", "apt-get install -y redis-server"]);
    expect(r.code).toBe(0);
  });

  it("stops with the failing command when apt-get fails, and runs nothing after it", () => {
    const r = runWith(fakeHost(["chromium"], { isRoot: true, isDebian: true }), (argv) =>
      argv[1] === "update" ? 100 : 0,
    );
    expect(r.ran).toEqual(["apt-get update"]);
    expect(r.code).toBe(1);
    expect(r.log).toContain("`apt-get update` failed (exit status 100)");
  });

  it("fails when the install succeeds but the program is still not on PATH", () => {
    const host = fakeHost(["chromium"], { isRoot: true, isDebian: true });
    const ran: string[] = [];
    const log: string[] = [];
    // This runner installs nothing: the package did not provide the command.
    expect(
      provision(
        table,
        host,
        (argv) => (ran.push(argv.join(" ")), 0),
        (l) => log.push(l),
      ),
    ).toBe(1);
    expect(ran).toEqual(["apt-get update", "apt-get install -y redis-server"]);
    expect(log.join("\n")).toContain("redis-server (needed by store tests)");
    expect(log.join("\n")).toContain("still not on PATH");
  });

  it("without root, runs nothing and exits 1 with the sudo command", () => {
    const r = runWith(fakeHost([], { isRoot: false, isDebian: true }), () => 0);
    expect(r.ran).toEqual([]);
    expect(r.code).toBe(1);
    expect(r.log).toContain("sudo apt-get install -y redis-server chromium");
  });

  it("in a dry run, names the commands and runs none", () => {
    const r = runWith(fakeHost([], { isRoot: true, isDebian: true }), () => 0, true);
    expect(r.ran).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.log).toContain("would run: apt-get update\nwould run: apt-get install -y redis-server chromium");
  });
});

describe("findOnPath", () => {
  it("finds an executable file in any PATH directory, not a plain file, a directory or an empty entry", () => {
    const dir = tempDir("provision");
    for (const sub of ["a", "b"]) mkdirSync(join(dir, sub));
    writeFileSync(join(dir, "a", "plain"), "");
    chmodSync(join(dir, "a", "plain"), 0o644);
    writeFileSync(join(dir, "b", "tool"), "#!/bin/sh\n");
    chmodSync(join(dir, "b", "tool"), 0o755);
    mkdirSync(join(dir, "a", "folder"));
    const path = ["", join(dir, "a"), join(dir, "missing"), join(dir, "b")].join(delimiter);
    expect(findOnPath("tool", path)).toBe(true);
    expect(findOnPath("folder", path)).toBe(false);
    expect(findOnPath("tool", join(dir, "a"))).toBe(false);
    expect(findOnPath("tool", undefined)).toBe(false);
    // Even for root, a file without an execute bit does not pass the X_OK check.
    expect(findOnPath("plain", path)).toBe(false);
  });
});

describe("npm test", () => {
  it("provisions before it builds and runs vitest, and knows the programs the tests start", () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts["test"]).toMatch(/^node test\/provision\.mjs && .*vitest run$/);
    expect(programs.map((p) => [p.command, p.debianPackage])).toEqual([
      ["redis-server", "redis-server"],
      ["chromium", "chromium"],
    ]);
  });
});
