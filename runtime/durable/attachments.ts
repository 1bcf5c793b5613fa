// Sessions attached to durable operations: which session follows which operation, ended when its connection closes.
import { SessionStateKey, type Session } from "../rpc/session/session.js";

/**
 * The attachments of one engine's operations, kept on each session (typed session state). A session attaches to
 * an operation by its key, at most once (a new attachment ends the previous one); its connection's close ends
 * every attachment it holds, so an operation hears that nobody follows it any more.
 */
export class Attachments {
  private readonly slot: SessionStateKey<Map<string, () => void>>;

  constructor(name: string) {
    this.slot = new SessionStateKey(name, () => new Map());
  }

  /** Whether `install` ran on the session. */
  installed(session: Session): boolean {
    return session.peekState(this.slot) !== undefined;
  }

  /** Track the session's attachments; its close ends them all. */
  install(session: Session): void {
    if (this.installed(session)) return;
    const held = session.state(this.slot);
    session.use({
      closed: () => {
        const ends = [...held.values()];
        held.clear();
        for (const end of ends) end();
      },
    });
  }

  /**
   * Attach the session to operation `key`; `end` runs when its connection closes, unless released first. A
   * previous attachment of the session to the same key ends now when `replace` is set, else is forgotten.
   */
  attach(session: Session, key: string, end: () => void, replace = false): void {
    const held = session.state(this.slot);
    const previous = held.get(key);
    held.set(key, end);
    if (replace && previous !== undefined && previous !== end) previous();
  }

  /** The attachment ended otherwise (the operation was freed, the follow ended): forget it if still current. */
  release(session: Session, key: string, end: () => void): void {
    const held = session.peekState(this.slot);
    if (held !== undefined && held.get(key) === end) held.delete(key);
  }
}
