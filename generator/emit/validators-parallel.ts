// Runs the validators emitter on a second core while the main thread emits everything else.
import { Worker } from "node:worker_threads";
import type { Model } from "../model.js";

export interface PendingValidators {
  /** Hands the model over; resolves to the emitted validators.ts. */
  emit(model: Model, runtimeImport: string): Promise<string>;
  /** Stop the worker without emitting (the schema failed to load): a watch session would keep one per failed save. */
  cancel(): void;
}

/**
 * Start the worker before the model exists, so Ajv loads while the schema is read. From TypeScript sources
 * (tests) there is no compiled worker file, so the emitter runs in this thread instead.
 */
export function startValidators(): PendingValidators {
  const workerUrl = new URL("./validators-worker.js", import.meta.url);
  if (import.meta.url.endsWith(".ts")) {
    return {
      emit: async (model, runtimeImport) => (await import("./validators.js")).emitValidators(model, runtimeImport),
      cancel() {},
    };
  }
  const worker = new Worker(workerUrl);
  worker.unref();
  return {
    emit: (model, runtimeImport) =>
      new Promise<string>((resolve, reject) => {
        worker.once("message", (reply: { ok: boolean; content?: string; error?: string }) => {
          void worker.terminate();
          if (reply.ok) resolve(reply.content!);
          else reject(new Error(reply.error));
        });
        worker.once("error", reject);
        worker.postMessage({ model, runtimeImport });
      }),
    cancel: () => void worker.terminate(),
  };
}
