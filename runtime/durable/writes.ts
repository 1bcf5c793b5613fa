// Write ordering for durable operations: each operation's store calls land in the order they were made.
import type { OperationStore } from "../store/types.js";

/**
 * Serializes store work per operation on a store that does not keep call order by itself; a store that does
 * (`ordered`, one pipelined connection) or answers synchronously costs no promise chain. Failures go to `report`
 * and do not stop later work.
 */
export class WriteOrder<K extends object> {
  private readonly chains = new Map<K, Promise<unknown>>();

  constructor(
    private readonly store: OperationStore,
    private readonly report: (error: unknown) => void,
  ) {}

  /** Run `work` after the operation's earlier store work; its value (or promise) is returned. */
  chain<T>(owner: K, work: () => T | Promise<T>): T | Promise<T> {
    const previous = this.store.ordered === true ? undefined : this.chains.get(owner);
    if (previous === undefined) {
      let value: T | Promise<T>;
      try {
        value = work();
      } catch (error) {
        this.report(error);
        return Promise.reject(error);
      }
      if (!(value instanceof Promise)) return value;
      if (this.store.ordered === true) {
        value.catch(this.report);
        return value;
      }
      this.track(owner, value);
      return value;
    }
    const next = previous.then(work);
    this.track(owner, next);
    return next;
  }

  /** Fire and forget, in no particular order with other work (records that no later write depends on). */
  write(work: () => unknown): void {
    try {
      const value = work();
      if (value instanceof Promise) value.catch(this.report);
    } catch (error) {
      this.report(error);
    }
  }

  /** Remembers the latest store work of an operation (errors reported) until it settles. */
  private track(owner: K, work: Promise<unknown>): void {
    const tracked = work.catch(this.report).finally(() => {
      if (this.chains.get(owner) === tracked) this.chains.delete(owner);
    });
    this.chains.set(owner, tracked);
  }
}
