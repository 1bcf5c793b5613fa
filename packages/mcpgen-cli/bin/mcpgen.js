#!/usr/bin/env node
// CLI launcher of the mcpgen-cli package: runs the compiled command-line entry point.
import { main } from "../dist/generator/cli.js";
process.exitCode = await main(process.argv);
