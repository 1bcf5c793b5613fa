// Worker thread entry: emits validators.ts off the main thread, since Ajv's code generation is the slowest emitter.
import { parentPort } from "node:worker_threads";
import type { Model } from "../model.js";
import { emitValidators } from "./validators.js";

parentPort!.on("message", (job: { model: Model; runtimeImport: string }) => {
  try {
    parentPort!.postMessage({ ok: true, content: emitValidators(job.model, job.runtimeImport) });
  } catch (error) {
    parentPort!.postMessage({
      ok: false,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  }
});
