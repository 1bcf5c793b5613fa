// Assembles the two published packages from the build in dist/: each package folder gets only the files it ships.
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { transformSync } from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * What each package gets from the build, as [from (repo), to (package folder)]. The CLI's launcher is kept in
 * packages/mcpgen-cli/bin itself: npm links a workspace's bin at install time, before any build.
 */
export const LAYOUT = {
  mcpgen: [
    ["dist/runtime", "dist/runtime"],
    ["dist/generated", "dist/generated"],
  ],
  "mcpgen-cli": [
    ["dist/generator", "dist/generator"],
    ["schema", "schema"],
    ["templates", "templates"],
  ],
};

for (const [name, entries] of Object.entries(LAYOUT)) {
  const dir = join(root, "packages", name);
  for (const [from, to] of entries) {
    const source = join(root, from);
    if (!existsSync(source)) throw new Error(`${from} is missing: run tsc -p tsconfig.build.json first`);
    // Replaced whole, so a file deleted from the sources does not linger in the package.
    rmSync(join(dir, to), { recursive: true, force: true });
    cpSync(source, join(dir, to), { recursive: true });
  }
}

/**
 * The detailed validators (each revision's definitions table, about 80 KB) load only when a message fails its fast
 * guard; the package ships them minified (about 50 KB: unquoted keys, no comments), headed as generated. The
 * repository's generated/ keeps the readable source.
 */
function minifyValidators(dir) {
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, name.name);
    if (name.isDirectory()) minifyValidators(path);
    else if (name.name === "validators.js") {
      const source = readFileSync(path, "utf8");
      const header = source.split("\n").filter((line, i) => i < 3 && line.startsWith("//"));
      const { code } = transformSync(source, { minify: true, format: "esm", target: "es2022", legalComments: "none" });
      writeFileSync(
        path,
        [...header, "// Minified for the package; the readable source is the repository's generated/.", code].join(
          "\n",
        ),
      );
    }
  }
}
minifyValidators(join(root, "packages", "mcpgen", "dist", "generated"));

/**
 * A few declarations of the Node entry (stdio streams, the node:http server of listenHttp) name Node's own types.
 * The root entry's declarations are the ones a browser project gets too (TypeScript applies no `browser` condition),
 * and it has no Node types: each import of a node: module is marked so that there it reads as `any` instead of
 * failing the project's typecheck. Projects with Node's types get Node's types.
 */
const NODE_IMPORT = /^import [^;]* from "node:[^"]+";$/gm;
function markNodeImports(dir) {
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, name.name);
    if (name.isDirectory()) markNodeImports(path);
    else if (name.name.endsWith(".d.ts")) {
      const source = readFileSync(path, "utf8");
      const marked = source.replace(
        NODE_IMPORT,
        (line) => `// @ts-ignore: Node's types, absent from a browser project\n${line}`,
      );
      if (marked !== source) writeFileSync(path, marked);
    }
  }
}
markNodeImports(join(root, "packages", "mcpgen", "dist"));
