// Run by `npm test` before vitest: makes sure the system programs the suite starts are installed, or says how.
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Each program some test starts, with the Debian package that provides it. Add a row when a test needs another. */
export const programs = [
  { command: "redis-server", debianPackage: "redis-server", neededBy: "the Redis store tests in test/store" },
  { command: "chromium", debianPackage: "chromium", neededBy: "the browser tests in test/browser" },
];

/** Whether `command` is an executable file in one of the PATH directories (no child process: this runs on every `npm test`). */
export function findOnPath(command, pathValue) {
  for (const dir of (pathValue ?? "").split(delimiter)) {
    if (dir === "") continue;
    const file = join(dir, command);
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      // Not in this directory, or not executable: look further.
    }
  }
  return false;
}

/**
 * What to do, from the facts alone: nothing, install with apt-get (root on Debian), or stop and name the command.
 * `host` is { has(command): boolean, isRoot: boolean, isDebian: boolean }.
 */
export function plan(table, host) {
  const missing = table.filter((p) => !host.has(p.command));
  if (missing.length === 0) return { action: "none", missing };
  const packages = [...new Set(missing.map((p) => p.debianPackage))];
  const install = ["apt-get", "install", "-y", ...packages];
  if (host.isDebian && host.isRoot) return { action: "install", missing, commands: [["apt-get", "update"], install] };
  // Not root, or not Debian: installing is the user's call; name the command exactly so it can be pasted.
  const command = (host.isRoot ? install : ["sudo", ...install]).join(" ");
  const how = host.isDebian
    ? `Install with:\n  ${command}`
    : `Install with your system's package manager; on Debian or Ubuntu:\n  ${command}`;
  return { action: "stop", missing, command, message: missingMessage(missing, how) };
}

function missingMessage(missing, how) {
  const lines = missing.map((p) => `  ${p.command} (needed by ${p.neededBy})`);
  return ["The tests need programs that are not on PATH:", ...lines, how, "then run npm test again."].join("\n");
}

/**
 * Carries out the plan: returns the exit code. `run(argv)` runs one command and returns its exit status; after an
 * install every program is looked up again, so a package that does not provide its command is reported.
 */
export function provision(table, host, run, log, { dryRun = false } = {}) {
  const p = plan(table, host);
  if (p.action === "none") return 0;
  if (p.action === "stop") {
    log(p.message);
    return 1;
  }
  log(`Installing ${p.missing.map((m) => m.command).join(", ")} for the tests:`);
  for (const argv of p.commands) {
    log(`${dryRun ? "would run" : "running"}: ${argv.join(" ")}`);
    if (dryRun) continue;
    const status = run(argv);
    if (status !== 0) {
      log(
        missingMessage(
          p.missing,
          `\`${argv.join(" ")}\` failed (exit status ${status}); fix its cause, or install them yourself,`,
        ),
      );
      return 1;
    }
  }
  if (dryRun) return 0;
  const still = table.filter((m) => !host.has(m.command));
  if (still.length > 0) {
    log(missingMessage(still, "The packages installed, yet these are still not on PATH; install them yourself,"));
    return 1;
  }
  return 0;
}

/** The facts of this machine. */
export function currentHost(env = process.env) {
  return {
    has: (command) => findOnPath(command, env.PATH),
    isRoot: typeof process.getuid === "function" && process.getuid() === 0,
    isDebian: existsSync("/etc/debian_version"),
  };
}

function runCommand(argv) {
  const r = spawnSync(argv[0], argv.slice(1), {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  return r.status ?? 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dryRun = process.argv.includes("--dry-run");
  process.exitCode = provision(programs, currentHost(), runCommand, (line) => console.error(line), { dryRun });
}
