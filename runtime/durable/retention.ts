// Retention of delivered results: each kept for a fixed time after delivery, at most a bounded number at once.
/**
 * Delivered final responses are kept a while (the delivery may have been lost, and nothing in the protocol says it
 * arrived), then dropped. The delay is the same for all, so deadlines come in order: one list and one timer serve
 * every kept operation. An entry stands for its operation only while `retainedUntil` still equals its deadline
 * (a later delivery re-enters it; `forget` clears it).
 */
export interface Retainable {
  retainedUntil: number;
}

export class Retention<T extends Retainable> {
  private list: ({ item: T; until: number } | undefined)[] = [];
  private head = 0;
  private sweeper: ReturnType<typeof setTimeout> | undefined = undefined;

  constructor(
    private readonly keepMs: number,
    private readonly max: number,
    /** Called for an item whose time ran out or that the bound pushed out. */
    private readonly drop: (item: T) => void,
  ) {}

  /** Keep `item` keepMs from now; past `max` items the oldest go at once. */
  keep(item: T): void {
    const until = (item.retainedUntil = Date.now() + this.keepMs);
    this.list.push({ item, until });
    // Over the bound, the oldest go now (the list may also hold stale entries: they count, and go too).
    while (this.list.length - this.head > this.max) this.dropOldest();
    if (this.sweeper === undefined) this.schedule();
  }

  /** The item is no longer kept (resumed again, or freed). */
  forget(item: T): void {
    item.retainedUntil = Infinity;
  }

  /** Stop the timer and forget every entry (shutdown). */
  clear(): void {
    if (this.sweeper !== undefined) clearTimeout(this.sweeper);
    this.sweeper = undefined;
    this.list = [];
    this.head = 0;
  }

  private dropOldest(): void {
    const entry = this.list[this.head];
    this.list[this.head++] = undefined;
    if (entry !== undefined && entry.item.retainedUntil === entry.until) this.drop(entry.item);
    if (this.head > 1024 && this.head * 2 > this.list.length) {
      this.list.splice(0, this.head);
      this.head = 0;
    }
  }

  private schedule(): void {
    const first = this.list[this.head];
    if (first === undefined) {
      this.list.length = 0;
      this.head = 0;
      this.sweeper = undefined;
      return;
    }
    this.sweeper = setTimeout(
      () => {
        const now = Date.now();
        while (this.head < this.list.length && this.list[this.head]!.until <= now) this.dropOldest();
        this.schedule();
      },
      Math.max(0, first.until - Date.now()),
    );
    this.sweeper.unref?.();
  }
}
