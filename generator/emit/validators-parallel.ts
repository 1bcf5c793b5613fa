// The validators emitter behind the interface generate and watch hold: it runs in this thread, since writing the
// definitions table takes milliseconds, too little to pay for a worker.
import type { Model } from "../model.js";
import { emitValidators } from "./validators.js";

export interface PendingValidators {
  /** Hands the model over; resolves to the emitted validators.ts. */
  emit(model: Model, runtimeImport: string): Promise<string>;
  /** Nothing to stop any more; kept so callers that cancel on a failed load stay as they are. */
  cancel(): void;
}

/** An emitter of validators.ts; callers may start it before the model exists. */
export function startValidators(): PendingValidators {
  return {
    emit: (model, runtimeImport) => Promise.resolve().then(() => emitValidators(model, runtimeImport)),
    cancel() {},
  };
}
