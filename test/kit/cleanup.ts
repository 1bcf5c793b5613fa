// Teardown after each test: what a test opens it registers here, and it is closed even when the test fails.
import { afterEach } from "vitest";

/**
 * Registers an afterEach hook in the calling file and returns the function that adds to it. Closers run last
 * registered first (a client before the server it talks to), then `finally` (for what the file keeps in its own
 * variables); one that fails does not stop the rest, because tearing down what a test already closed or killed
 * may fail and that is not the test's result.
 */
export function closeAfterEach(finally_?: () => unknown): (close: () => unknown) => void {
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    if (finally_ !== undefined) closers.unshift(finally_);
    for (const close of closers.splice(0).reverse()) {
      try {
        await close();
      } catch {
        // already closed, or killed on purpose
      }
    }
  });
  return (close) => void closers.push(close);
}
