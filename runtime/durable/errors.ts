// The errors every durable-operation protocol shares (one code for "failed on the server side").
import { RpcError } from "../rpc/jsonrpc.js";

/** Code of a durable operation that failed on the server side (queue limit, node lost, expiry, shutdown). */
export const DURABLE_FAILED_CODE = -32010;

/** An operation whose node stopped renewing its lease: whoever asks is told, instead of waiting forever. */
export function nodeLostError(what: string): RpcError {
  return new RpcError(DURABLE_FAILED_CODE, `${what} failed: the node running it stopped`);
}
