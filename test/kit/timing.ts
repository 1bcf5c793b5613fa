// Waiting in tests: a plain delay, one turn of the event loop, and polling until a condition holds.

/** Resolves after `ms` milliseconds (for letting time pass, never for asserting how long something took). */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves after queued microtasks and the callbacks already waiting for the next immediate have run. */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Resolves once `predicate` holds, checking it now and then every few milliseconds on timers (so I/O and
 * timers of the code under test run in between). `timeoutMs` is only a hang guard: past it the wait rejects
 * with `message`, so a condition that never holds fails the test instead of stalling it.
 */
export async function until(
  predicate: () => boolean,
  timeoutMs = 10_000,
  message = "condition not met in time",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`${message} (waited ${timeoutMs} ms)`);
    await sleep(2);
  }
}

/** `until` for a condition that must be asked asynchronously (a request to a server): asked again every few ms. */
export async function eventually(predicate: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms`);
    await sleep(5);
  }
}

/** A promise a test opens when it wants: what a handler waits on to be held at a known point. */
export interface Gate {
  promise: Promise<void>;
  open: () => void;
}

export function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}
