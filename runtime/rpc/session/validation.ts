// Turning what a peer sent that does not fit (params, results, handler failures) into JSON-RPC errors and issues.
import { ErrorCode, type JsonRpcErrorObject } from "../jsonrpc.js";
import type { Explanation, ValidationIssue } from "../dispatch.js";

/** The error a request gets when its handler threw something other than an RpcError. */
export function internalError(error: unknown): JsonRpcErrorObject {
  const message = error instanceof Error ? error.message : String(error);
  return { code: ErrorCode.InternalError, message: message === "" ? "Internal error" : message };
}

/** The text of a cancellation reason, when it has one. */
export function reasonText(reason: unknown): string | undefined {
  if (typeof reason === "string") return reason;
  if (reason instanceof Error) return reason.message;
  return undefined;
}

/**
 * Hands the issues to `use`: in the same turn when the explainer answered synchronously, else once they have
 * loaded. If the validators cannot be loaded, `use` still runs, with one issue at the root saying why, so the
 * peer gets its error either way; `onerror` receives what `use` throws after an asynchronous load.
 */
export function withIssues(
  explanation: Explanation,
  use: (issues: ValidationIssue[]) => void,
  onerror: (error: unknown) => void,
): void {
  if (Array.isArray(explanation)) {
    use(explanation);
    return;
  }
  Promise.resolve(explanation)
    .then(
      (issues) => issues,
      (error: unknown): ValidationIssue[] => [
        {
          pointer: "",
          message: `does not match the schema (details unavailable: ${error instanceof Error ? error.message : String(error)})`,
        },
      ],
    )
    .then(use)
    .then(undefined, onerror);
}
