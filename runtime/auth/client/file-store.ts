// An OAuthStore in one JSON file for command-line clients: readable by its owner only, replaced atomically on every change.
import { nodeBuiltin } from "../../node-builtin.js";
import { OAuthError } from "./errors.js";
import {
  prunePending,
  type OAuthClientInformation,
  type OAuthStore,
  type PendingAuthorization,
  type StoredTokens,
} from "./store.js";

interface StoreFile {
  tokens: Record<string, StoredTokens>;
  clients: Record<string, OAuthClientInformation>;
  pending: Record<string, PendingAuthorization>;
}

/**
 * Keeps tokens, registrations and pending authorizations in `path` (created with mode 0600, its directory 0700
 * when missing). Every change writes a new file beside it and renames it over the old one, so a crash never leaves
 * half a file and concurrent readers see the old or the new state. Changes from one process are applied in order;
 * two processes sharing a file may overwrite each other's last change (each re-reads before it writes).
 * Node only (uses node:fs).
 */
export class FileOAuthStore implements OAuthStore {
  readonly path: string;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(path: string) {
    if (typeof path !== "string" || path === "")
      throw new OAuthError("invalid_options", "FileOAuthStore needs a file path");
    this.path = path;
  }

  async getTokens(serverUrl: string): Promise<StoredTokens | undefined> {
    return own((await this.read()).tokens, serverUrl);
  }
  setTokens(serverUrl: string, tokens: StoredTokens | undefined): Promise<void> {
    return this.update((file) => assign(file.tokens, serverUrl, tokens));
  }
  async getClient(issuer: string): Promise<OAuthClientInformation | undefined> {
    return own((await this.read()).clients, issuer);
  }
  setClient(issuer: string, client: OAuthClientInformation | undefined): Promise<void> {
    return this.update((file) => assign(file.clients, issuer, client));
  }
  async getPending(state: string): Promise<PendingAuthorization | undefined> {
    const pending = own((await this.read()).pending, state);
    return pending !== undefined && pending.expires_at > Date.now() ? pending : undefined;
  }
  setPending(state: string, pending: PendingAuthorization | undefined): Promise<void> {
    return this.update((file) => {
      assign(file.pending, state, pending);
      prunePending(file.pending);
    });
  }

  private fs(): NonNullable<ReturnType<typeof nodeBuiltin<"node:fs">>> {
    const fs = nodeBuiltin("node:fs");
    if (fs === undefined)
      throw new OAuthError(
        "invalid_options",
        "FileOAuthStore needs Node's fs module; use another OAuthStore on this platform",
      );
    return fs;
  }

  private async read(): Promise<StoreFile> {
    let text: string;
    try {
      text = await this.fs().promises.readFile(this.path, "utf8");
    } catch (error) {
      if ((error as { code?: unknown }).code === "ENOENT") return { tokens: {}, clients: {}, pending: {} };
      throw error;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new OAuthError(
        "invalid_options",
        `the OAuth store file ${this.path} is not JSON; move it away to start afresh`,
      );
    }
    const sections = ["tokens", "clients", "pending"] as const;
    if (!isRecord(value) || !sections.every((name) => value[name] === undefined || isRecord(value[name]))) {
      throw new OAuthError(
        "invalid_options",
        `the OAuth store file ${this.path} does not hold tokens, clients and pending objects`,
      );
    }
    return {
      tokens: { ...(value.tokens as object) },
      clients: { ...(value.clients as object) },
      pending: { ...(value.pending as object) },
    } as StoreFile;
  }

  private update(change: (file: StoreFile) => void): Promise<void> {
    const run = this.queue.then(async () => {
      const file = await this.read();
      change(file);
      await this.write(file);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async write(file: StoreFile): Promise<void> {
    const fs = this.fs().promises;
    const path = nodeBuiltin("node:path")!;
    await fs.mkdir(path.dirname(this.path), { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${process.pid}.${Date.now().toString(36)}${Math.random().toString(36).slice(2)}.tmp`;
    try {
      await fs.writeFile(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600, flag: "wx" });
      await fs.rename(temporary, this.path);
    } catch (error) {
      await fs.rm(temporary, { force: true }).catch(() => undefined);
      throw error;
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function own<V>(record: Record<string, V>, key: string): V | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function assign<V>(record: Record<string, V>, key: string, value: V | undefined): void {
  if (value === undefined) delete record[key];
  else record[key] = value;
}
