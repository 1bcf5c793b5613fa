// The heap a bench measures: used bytes after two full collections (gc exposed at run time, no flag needed).
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");

/** Bytes of heap in use once what can be collected was (twice: finalizers free more on the second pass). */
export function heap() {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
