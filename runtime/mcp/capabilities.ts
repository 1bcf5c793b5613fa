// Reading a peer's advertised capabilities: one rule for every layer that checks one.
import type { JsonObject } from "../rpc/jsonrpc.js";

/** Whether a dotted capability path is advertised (present and not false/null). */
export function hasCapability(capabilities: JsonObject | undefined, path: string): boolean {
  let node: unknown = capabilities;
  // Walked by index, not split: this runs for every outbound request, and most paths have a single segment.
  for (let start = 0; ;) {
    const dot = path.indexOf(".", start);
    const key = dot < 0 ? (start === 0 ? path : path.slice(start)) : path.slice(start, dot);
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return false;
    node = (node as JsonObject)[key];
    if (dot < 0) break;
    start = dot + 1;
  }
  return node !== undefined && node !== null && node !== false;
}
