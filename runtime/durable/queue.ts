// Accounting of a durable operation's unconfirmed queue: bytes queued and confirmed, the messages that ask the
// client to confirm, and what a confirmation frees.

/**
 * What an operation's queue holds that the client has not confirmed, counted without reading the store. Every
 * `askEvery` bytes a message asks the client to confirm what it has (a mark); a confirmation frees the bytes up to
 * the last mark it covers, or everything once it covers the last message queued. The final response is not
 * counted: the limit guards against endless streams of messages, and the final response is always kept.
 */
export class QueueAccount {
  /** Bytes of every message queued so far (the final response aside), and how many of those were confirmed. */
  totalBytes = 0;
  confirmedBytes = 0;
  /** The highest seq the client confirmed, and the seq of the last message queued (the final response aside). */
  confirmedSeq = 0;
  lastQueuedSeq = 0;
  /** Seq of the final response, once there is one. */
  finalSeq = 0;
  /** Messages that asked the client to confirm: their seq and totalBytes after them (confirming one frees those). */
  private marks: { seq: number; bytes: number }[] | undefined = undefined;
  /** totalBytes past which the next message asks for a confirmation. */
  private nextAskAt: number;

  constructor(private readonly askEvery: number) {
    this.nextAskAt = askEvery;
  }

  /** Bytes queued and not confirmed: what a queue limit bounds. */
  get queuedBytes(): number {
    return this.totalBytes - this.confirmedBytes;
  }

  /** Whether the next message should ask the client to confirm what it has. */
  get askDue(): boolean {
    return this.totalBytes >= this.nextAskAt;
  }

  /** A message of `bytes` was queued under `seq`; `ask`: it asks for a confirmation. */
  account(seq: number, bytes: number, ask = false): void {
    this.totalBytes += bytes;
    this.lastQueuedSeq = seq;
    if (ask) {
      (this.marks ??= []).push({ seq, bytes: this.totalBytes });
      this.nextAskAt = this.totalBytes + this.askEvery;
    }
  }

  /**
   * The client has everything up to `seq` (of the `lastSeq` made so far): returns the seq now confirmed, or 0 when
   * that confirms nothing new. The final response stays until the operation is freed.
   */
  confirmed(seq: number, lastSeq: number): number {
    let upTo = Math.min(seq, lastSeq);
    if (this.finalSeq > 0 && upTo >= this.finalSeq) upTo = this.finalSeq - 1;
    if (upTo <= this.confirmedSeq) return 0;
    this.confirmedSeq = upTo;
    if (upTo >= this.lastQueuedSeq) {
      this.confirmedBytes = this.totalBytes;
      this.marks = undefined;
    } else {
      // Only bytes up to a mark are known without sizing each message: a confirmation between marks frees up to the last one.
      const bytes = this.passMarks(upTo);
      if (bytes > this.confirmedBytes) this.confirmedBytes = bytes;
    }
    return upTo;
  }

  /**
   * A replay read the queue after `ack`: what it still holds, `unconfirmedBytes`, is exactly what was not
   * confirmed.
   */
  recount(ack: number, unconfirmedBytes: number): void {
    this.confirmedBytes = this.totalBytes - unconfirmedBytes;
    if (ack > this.confirmedSeq) this.confirmedSeq = ack;
    this.passMarks(ack);
  }

  /** Drops the marks up to `seq`; returns totalBytes at the last of them, or 0 when none was passed. */
  private passMarks(seq: number): number {
    const marks = this.marks;
    if (marks === undefined) return 0;
    let passed = 0;
    while (passed < marks.length && marks[passed].seq <= seq) passed++;
    if (passed === 0) return 0;
    const bytes = marks[passed - 1].bytes;
    marks.splice(0, passed);
    return bytes;
  }
}
