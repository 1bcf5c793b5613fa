// The built package under Bun: the stdio server and client (with Node on the other end too), and the HTTP server through node:http and Bun.serve.
import { bunBinary, describeRuntime } from "../kit/runtimes.js";

describeRuntime({
  name: "bun",
  title: "Bun",
  nativeServer: "Bun.serve",
  binary: bunBinary,
  args: (_role, program, rest) => [program, ...rest],
});
