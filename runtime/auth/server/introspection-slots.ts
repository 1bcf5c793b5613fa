// How many token introspections run at once, and the bounded, time-limited wait for a turn beyond that.

interface Waiter {
  readonly start: () => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

/**
 * Runs work with at most `max` at once. Beyond that, work waits its turn in order: at most `maxWaiting` at a time
 * and for at most `maxWaitMs` each; work that finds the wait full, or waits too long, fails with a plain Error
 * (not the token's fault: the resource server answers 503 with Retry-After).
 */
export class IntrospectionSlots {
  private running = 0;
  /** Insertion-ordered: the first is the longest waiting. */
  private readonly waiting = new Set<Waiter>();

  constructor(
    private readonly max: number,
    private readonly maxWaiting: number,
    private readonly maxWaitMs: number,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.turn();
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private turn(): Promise<void> {
    if (this.running < this.max) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting.size >= this.maxWaiting) {
      return Promise.reject(
        new Error(
          `Token introspection is busy: ${this.running} running and ${this.waiting.size} waiting ` +
            "(maxConcurrentIntrospections, maxQueuedIntrospections)",
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        start: resolve,
        timer: setTimeout(() => {
          this.waiting.delete(waiter);
          reject(new Error(`Token introspection is busy: no turn within ${this.maxWaitMs} ms`));
        }, this.maxWaitMs),
      };
      this.waiting.add(waiter);
    });
  }

  /** A finished run hands its slot straight to the longest waiting, if any. */
  private release(): void {
    const next = this.waiting.values().next();
    if (next.done === true) {
      this.running--;
      return;
    }
    this.waiting.delete(next.value);
    clearTimeout(next.value.timer);
    next.value.start();
  }
}
