// Checking the progress an official SDK client reports over stdio, where it may drop what arrives with the response.
import { expect } from "vitest";

/**
 * The SDK clients (1.x and 2.x) run notification handlers a microtask late but settle responses at once, so a
 * progress notification that arrives in the same read as the response is dropped on their side. What one reports
 * must still be the server's sequence from the start, missing at most the values that shared the response's read.
 */
export function expectProgressPrefix(seen: number[], count: number): void {
  // Every value that shares the response's read is lost, not just the last: see PROGRESS_SPACING_MS.
  const all = Array.from({ length: count }, (_, i) => i + 1);
  expect(seen.length).toBeGreaterThanOrEqual(count - 1);
  expect(seen).toEqual(all.slice(0, seen.length));
}

/**
 * Progress spacing in the calls checked with expectProgressPrefix. With values 5-10 ms apart, a client whose
 * event loop stalled that long under a loaded test run read two of them with the response and lost both (seen
 * once in a full run); 50 ms apart, only the last can share the response's read.
 */
export const PROGRESS_SPACING_MS = 50;
