#!/usr/bin/env node
// CLI launcher: runs the compiled command-line entry point.
import { main } from "../dist/generator/cli.js";
process.exitCode = await main(process.argv);
