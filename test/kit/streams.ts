// Reading a child's output in tests: waiting for text to appear, and collecting JSON lines as they arrive.
import type { Readable } from "node:stream";

/**
 * Collects a stream's text; the function returned waits for the next match of a pattern after the previous
 * match (20 s hang guard, failing with everything read so far).
 */
export function follow(stream: NodeJS.ReadableStream): (pattern: RegExp) => Promise<string> {
  let text = "";
  let from = 0;
  const waiters: (() => void)[] = [];
  stream.on("data", (chunk: Buffer) => {
    text += chunk.toString();
    waiters.splice(0).forEach((w) => w());
  });
  return (pattern) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern} in:\n${text}`)), 20_000);
      const check = (): void => {
        const rest = text.slice(from);
        const m = pattern.exec(rest);
        if (m) {
          from += m.index + m[0].length;
          clearTimeout(timer);
          resolve(m[0]);
        } else waiters.push(check);
      };
      check();
    });
}

/** Every JSON line written to `stdout`, parsed, as it arrives. */
export function collectLines(stdout: Readable): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  let buffered = "";
  stdout.on("data", (c: Buffer) => {
    buffered += c.toString("utf8");
    let nl: number;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      lines.push(JSON.parse(buffered.slice(0, nl)));
      buffered = buffered.slice(nl + 1);
    }
  });
  return lines;
}
