// The built package under Deno (npm packages from the project's node_modules, no registry): the stdio server and client (with Node on the other end too), and the HTTP server through node:http and Deno.serve.
import { DEFAULT_INHERITED_ENV_VARS } from "../../runtime/transports/stdio/stdio.js";
import { denoBinary, denoRun, describeRuntime, type ProgramRole } from "../kit/runtimes.js";

/** The only permissions each program gets: a stdio server none, an HTTP server loopback, a client to run its server and read the variables it passes on. */
function permissions(role: ProgramRole, spawns: string | undefined): string[] {
  if (role === "stdio-server") return [];
  if (role === "http-server") return ["--allow-net=127.0.0.1"];
  // Deno's node:child_process reads NODE_V8_COVERAGE when it spawns.
  const env = [...DEFAULT_INHERITED_ENV_VARS, "NODE_V8_COVERAGE"];
  return [`--allow-run=${spawns}`, `--allow-env=${env.join(",")}`];
}

describeRuntime({
  name: "deno",
  title: "Deno",
  nativeServer: "Deno.serve",
  binary: denoBinary,
  args: (role, program, rest, spawns) => denoRun(permissions(role, spawns), program, rest),
});
