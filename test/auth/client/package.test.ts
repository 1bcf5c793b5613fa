// mcpgen/auth's client and its optional peer: loaded only when used, a clear error without it, no peer type in its declarations.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../kit/paths.js";

const dist = join(repoRoot, "dist/runtime");

function built(file: string): string {
  const path = join(dist, file);
  if (!existsSync(path)) throw new Error(`${path} is missing: run npm run build`);
  return path;
}

function files(dir: string, suffix: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(suffix))
    .map((f) => join(dir, f));
}

/** Bare module specifiers of import/export statements, and of dynamic import() calls separately. */
function specifiers(code: string): { static: string[]; dynamic: string[] } {
  const statics = [
    ...code.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|^\s*import\s*["']([^"']+)["']/gm),
  ].map((m) => (m[1] ?? m[2])!);
  const dynamics = [...code.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]!);
  return { static: statics, dynamic: dynamics };
}

describe("mcpgen/auth client packaging", () => {
  it("its public declarations reach no module outside the package (no oauth4webapi or jose type: a consumer without the peer typechecks)", () => {
    const seen = new Set<string>();
    const outside: string[] = [];
    const walk = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const code = readFileSync(file, "utf8");
      for (const spec of [...specifiers(code).static, ...specifiers(code).dynamic]) {
        if (spec.startsWith(".")) walk(resolve(dirname(file), spec.replace(/\.js$/, ".d.ts")));
        else outside.push(`${relative(dist, file)}: ${spec}`);
      }
    };
    walk(built("auth/client/index.d.ts"));
    expect(seen.size).toBeGreaterThan(5);
    expect(outside).toEqual([]);
  });

  it("loads oauth4webapi only with import() on first use; nothing in the runtime outside runtime/auth imports it or jose", () => {
    const client = files(join(dist, "auth/client"), ".js").map((f) => specifiers(readFileSync(f, "utf8")));
    expect(client.flatMap((s) => s.static).filter((s) => !s.startsWith("."))).toEqual([]);
    expect(client.flatMap((s) => s.dynamic)).toEqual(["oauth4webapi"]);
    const core = files(dist, ".js").filter((f) => !relative(dist, f).startsWith("auth"));
    const peers = core.flatMap((f) => {
      const s = specifiers(readFileSync(f, "utf8"));
      return [...s.static, ...s.dynamic]
        .filter((spec) => /^(oauth4webapi|jose)(\/|$)/.test(spec))
        .map((spec) => `${relative(dist, f)}: ${spec}`);
    });
    expect(core.length).toBeGreaterThan(20);
    expect(peers).toEqual([]);
  });

  it("without oauth4webapi installed, importing works and the first authorization fails with OAuthError missing_dependency naming the package", () => {
    // A resolve hook that answers for oauth4webapi as npm would if it were not installed.
    const hide = `data:text/javascript,${encodeURIComponent(
      `import { register } from "node:module"; register("data:text/javascript," + encodeURIComponent('export async function resolve(s, c, n) { if (s === "oauth4webapi") { const e = new Error("Cannot find package \\'oauth4webapi\\'"); e.code = "ERR_MODULE_NOT_FOUND"; throw e; } return n(s, c); }'));`,
    )}`;
    const script = `
      const { OAuthClient } = await import(${JSON.stringify(pathToFileURL(built("auth/index.js")).href)});
      const client = new OAuthClient({ clientMetadata: { redirect_uris: ["http://127.0.0.1/callback"] }, redirectToAuthorization() {} });
      try {
        await client.challenge({ status: 401, headers: {}, url: new URL("http://127.0.0.1:1/mcp"), method: "POST", attempt: 1 });
        console.log("no error");
      } catch (error) {
        console.log(JSON.stringify({ name: error.name, code: error.code, message: error.message }));
      }`;
    const out = execFileSync(process.execPath, ["--import", hide, "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    const result = JSON.parse(out) as { name: string; code: string; message: string };
    expect(result).toMatchObject({ name: "OAuthError", code: "missing_dependency" });
    expect(result.message).toContain("npm install oauth4webapi");
  });
});
