// Promises that resolve once a manager holds nothing (for tests and graceful shutdown): one piece for every manager.
export class IdleWaiters {
  private waiters: (() => void)[] = [];

  /** Resolves at once when `empty`, else at the next `settle(true)`. */
  wait(empty: boolean): Promise<void> {
    if (empty) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Call after something was freed; wakes every waiter when nothing is held any more. */
  settle(empty: boolean): void {
    if (!empty || this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
