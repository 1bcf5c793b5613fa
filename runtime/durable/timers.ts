// Expiry and keep-alive timers of durable operations: one restartable deadline each, never keeping the process up.

/**
 * A deadline an operation can restart (a resume, a status check or a join moves it) or clear (it ended). Its timer
 * is unref'd: a process with nothing else to do exits rather than wait for an abandoned operation to expire.
 */
export class Deadline {
  private timer: ReturnType<typeof setTimeout> | undefined = undefined;

  /** Whether a deadline is set and has not passed. */
  get armed(): boolean {
    return this.timer !== undefined;
  }

  /** `fire` runs `ms` from now, unless cleared or armed again first (which replaces it). */
  arm(ms: number, fire: () => void): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      fire();
    }, ms);
    this.timer.unref?.();
  }

  clear(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
