// Newline-delimited JSON over stdio: a line decoder, the server side (own stdin/stdout) and the client side (child process).
import { spawn, type ChildProcess } from "node:child_process";
import { isUtf8 } from "node:buffer";
import type { Readable, Writable } from "node:stream";
import type { JsonRpcMessage } from "../jsonrpc.js";
import { SENT, type SendOptions, type Transport } from "../transport.js";
import { BusyPoller } from "./busy-poll.js";

export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const RESOLVED: Promise<void> = Promise.resolve();

/** A line longer than the limit; it was discarded up to its newline. */
export class FrameTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`Message exceeds the ${limit}-byte line limit and was discarded`);
    this.name = "FrameTooLargeError";
  }
}

/** A line whose bytes are not valid UTF-8. */
export class InvalidUtf8Error extends Error {
  constructor() {
    super("Message is not valid UTF-8");
    this.name = "InvalidUtf8Error";
  }
}

/** Receives decoded lines; named apart from Transport's callbacks so a transport can be its own sink. */
export interface LineSink {
  onLine(value: unknown): void;
  onBadLine(error: Error): void;
}

/**
 * Splits a byte stream at '\n' (dropping a trailing '\r'), decodes each line as UTF-8 JSON.
 * Chunks are kept as a list and joined once per line, so a long line costs one copy. A line over the
 * limit is reported once and skipped without buffering the rest of it; blank lines are ignored.
 */
export class LineDecoder {
  private parts: Buffer[] = [];
  private length = 0;
  private discarding = false;

  constructor(
    private readonly sink: LineSink,
    readonly maxLineBytes: number = DEFAULT_MAX_LINE_BYTES,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    const size = chunk.length;
    while (start < size) {
      const nl = chunk.indexOf(NEWLINE, start);
      if (nl === -1) {
        if (this.discarding) return;
        const rest = size - start;
        if (this.length + rest > this.maxLineBytes) {
          this.overflow();
          return;
        }
        this.parts.push(start === 0 ? chunk : chunk.subarray(start));
        this.length += rest;
        return;
      }
      const segment = nl - start;
      if (this.discarding) {
        this.discarding = false;
      } else if (this.length === 0) {
        if (segment > this.maxLineBytes) this.sink.onBadLine(new FrameTooLargeError(this.maxLineBytes));
        else this.emit(chunk, start, nl);
      } else if (this.length + segment > this.maxLineBytes) {
        this.parts = [];
        this.length = 0;
        this.sink.onBadLine(new FrameTooLargeError(this.maxLineBytes));
      } else {
        this.parts.push(chunk.subarray(start, nl));
        const line = Buffer.concat(this.parts, this.length + segment);
        this.parts = [];
        this.length = 0;
        this.emit(line, 0, line.length);
      }
      start = nl + 1;
    }
  }

  /** Bytes held for an unfinished line. */
  get pending(): number {
    return this.length;
  }

  private overflow(): void {
    this.parts = [];
    this.length = 0;
    this.discarding = true;
    this.sink.onBadLine(new FrameTooLargeError(this.maxLineBytes));
  }

  private emit(buffer: Buffer, start: number, end: number): void {
    // A line of JSON whitespace only carries nothing; a message never starts with it, so this loop stops at once.
    let first = start;
    while (first < end && isSpace(buffer[first])) first++;
    if (first === end) return;
    if (buffer[end - 1] === CARRIAGE_RETURN) end--;
    const text = buffer.toString("utf8", start, end);
    // toString never fails; U+FFFD in the output is the only sign of bad bytes, and it can also be legitimate.
    if (text.includes("\ufffd") && !isUtf8(buffer.subarray(start, end))) {
      this.sink.onBadLine(new InvalidUtf8Error());
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.sink.onBadLine(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    this.sink.onLine(value);
  }
}

function isSpace(byte: number): boolean {
  return byte === SPACE || byte === TAB || byte === CARRIAGE_RETURN;
}

/** Writes one message per line, honouring backpressure with one shared drain wait. */
class LineWriter {
  private drain: Promise<void> | undefined = undefined;

  constructor(private readonly stream: Writable) {}

  write(message: JsonRpcMessage, ondelivered?: () => void): Promise<void> {
    // JSON.stringify escapes newlines inside strings, so one message is always one line.
    const line = JSON.stringify(message) + "\n";
    const flushed = ondelivered === undefined ? this.stream.write(line) : this.stream.write(line, (error) => error == null && ondelivered());
    if (flushed) return this.drain ?? SENT;
    if (this.drain === undefined) {
      const stream = this.stream;
      // A stream destroyed while full never drains: the wait ends with it instead of hanging every later send.
      if (stream.destroyed) return Promise.reject(new Error("The stdio stream is closed"));
      this.drain = new Promise<void>((resolve, reject) => {
        const drained = (): void => {
          stream.off("close", closed);
          this.drain = undefined;
          resolve();
        };
        const closed = (): void => {
          stream.off("drain", drained);
          this.drain = undefined;
          reject(new Error("The stdio stream closed before it drained"));
        };
        stream.once("drain", drained);
        stream.once("close", closed);
      });
    }
    return this.drain;
  }
}

/** Common callbacks and decoding for both stdio ends. */
abstract class StdioEnd implements Transport, LineSink {
  onmessage?: (message: unknown) => void;
  onmalformed?: (error: Error) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  protected readonly decoder: LineDecoder;
  protected closed = false;
  /** Exposed for tests and benchmarks: how often a reply was caught while polling. */
  readonly busyPoll: BusyPoller;

  /** Where messages are written; undefined until the client end has spawned its child. */
  protected writer: LineWriter | undefined = undefined;

  constructor(maxLineBytes: number | undefined, busyPollMicros: number | undefined) {
    this.decoder = new LineDecoder(this, maxLineBytes);
    this.busyPoll = new BusyPoller(busyPollMicros);
  }

  abstract start(): Promise<void>;
  abstract close(): Promise<void>;

  /**
   * A line handed to the pipe counts as delivered: it is lost only if the peer process stops reading (dies), and
   * then nothing can come back for it, since a stdio connection cannot be reopened (a new one is a new process).
   * So a resumable request's final response need not be kept after it was written.
   */
  readonly confirmsDelivery = true;

  send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    if (this.closed || this.writer === undefined) return Promise.reject(new Error(`${this.constructor.name} is closed`));
    const written = this.writer.write(message, options?.ondelivered);
    // Requests and responses are what a peer answers quickly (a response, or the next request); notifications are not.
    if ("id" in message) this.busyPoll.sent();
    return written;
  }

  protected readonly ondata = (chunk: Buffer | string): void => {
    this.busyPoll.arrived();
    this.decoder.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk);
  };

  protected readonly onstreamerror = (error: Error): void => {
    this.onerror?.(error);
  };

  /** @internal LineSink */
  onLine(value: unknown): void {
    const onmessage = this.onmessage;
    if (onmessage === undefined) return;
    try {
      onmessage(value);
    } catch (error) {
      // A throwing callback must not stop the decoder halfway through a chunk.
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** @internal LineSink */
  onBadLine(error: Error): void {
    this.onmalformed?.(error);
  }

  protected markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.busyPoll.stop();
    this.onclose?.();
  }
}

export interface StdioServerTransportOptions {
  stdin?: Readable;
  stdout?: Writable;
  maxLineBytes?: number;
  /** After each send, poll this long for the next message before letting the process sleep (adaptive; 0 disables). Default 100. */
  busyPollMicros?: number;
}

/**
 * The server end: reads this process's stdin, writes its stdout. Nothing else may write to stdout
 * (log to stderr). End of stdin means the client went away: onclose fires.
 */
export class StdioServerTransport extends StdioEnd {
  private readonly stdin: Readable;
  private readonly stdout: Writable;
  private started = false;

  constructor(options: StdioServerTransportOptions = {}) {
    super(options.maxLineBytes, options.busyPollMicros);
    this.stdin = options.stdin ?? process.stdin;
    this.stdout = options.stdout ?? process.stdout;
    this.writer = new LineWriter(this.stdout);
  }

  start(): Promise<void> {
    if (this.started) return Promise.reject(new Error("StdioServerTransport already started"));
    this.started = true;
    this.stdin.on("data", this.ondata);
    this.stdin.on("end", this.onend);
    this.stdin.on("error", this.onstreamerror);
    this.stdout.on("error", this.onstreamerror);
    return RESOLVED;
  }

  close(): Promise<void> {
    if (!this.closed) this.onend();
    return RESOLVED;
  }

  private readonly onend = (): void => {
    this.detach();
    this.markClosed();
  };

  private detach(): void {
    this.stdin.off("data", this.ondata);
    this.stdin.off("end", this.onend);
    this.stdin.off("error", this.onstreamerror);
    this.stdout.off("error", this.onstreamerror);
    // A paused stdin no longer holds the event loop open, so the process can exit on its own.
    this.stdin.pause();
  }
}

/** Variables passed to the child by default; anything else must be given explicitly. */
export const DEFAULT_INHERITED_ENV_VARS: readonly string[] =
  process.platform === "win32"
    ? ["APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE", "PROGRAMFILES"]
    : ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR"];

/** The clean environment a child starts with: the safe variables above, minus exported shell functions. */
export function defaultChildEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of DEFAULT_INHERITED_ENV_VARS) {
    const value = process.env[name];
    if (value !== undefined && !value.startsWith("()")) env[name] = value;
  }
  return env;
}

export interface StdioClientTransportOptions {
  command: string;
  args?: readonly string[];
  /** Added to the clean default environment (which does not include the parent's other variables). */
  env?: Record<string, string>;
  cwd?: string;
  /** The child's stderr: inherited by default; "pipe" exposes it as `transport.stderr`. */
  stderr?: "inherit" | "pipe" | "ignore";
  maxLineBytes?: number;
  /** After each send, poll this long for the reply before letting the process sleep (adaptive; 0 disables). Default 100. */
  busyPollMicros?: number;
  /** After close() ends stdin, how long to wait before SIGTERM, then as long again before SIGKILL; default 2000 ms. */
  closeTimeoutMs?: number;
}

/** The client end: spawns the server and speaks over its stdin/stdout. onclose fires when the child exits. */
export class StdioClientTransport extends StdioEnd {
  private child: ChildProcess | undefined = undefined;
  private exited: Promise<void> | undefined = undefined;

  constructor(private readonly options: StdioClientTransportOptions) {
    super(options.maxLineBytes, options.busyPollMicros);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The child's stderr when options.stderr is "pipe". */
  get stderr(): Readable | null {
    return this.child?.stderr ?? null;
  }

  start(): Promise<void> {
    if (this.child !== undefined) return Promise.reject(new Error("StdioClientTransport already started"));
    const options = this.options;
    const child = spawn(options.command, options.args ?? [], {
      env: { ...defaultChildEnvironment(), ...options.env },
      cwd: options.cwd,
      stdio: ["pipe", "pipe", options.stderr ?? "inherit"],
      shell: false,
      windowsHide: true,
    });
    this.child = child;
    this.writer = new LineWriter(child.stdin!);
    this.exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
    child.stdout!.on("data", this.ondata);
    child.stdin!.on("error", this.onstreamerror);
    child.stdout!.on("error", this.onstreamerror);
    // "close" comes after stdout is drained, so every message the child wrote is delivered before onclose.
    child.once("close", () => this.markClosed());
    return new Promise<void>((resolve, reject) => {
      child.once("spawn", () => {
        child.off("error", reject);
        child.on("error", this.onstreamerror);
        resolve();
      });
      child.once("error", reject);
    });
  }

  /** End the child's stdin and wait for it to exit, escalating to SIGTERM then SIGKILL if it lingers. */
  async close(): Promise<void> {
    const child = this.child;
    if (child === undefined || this.exited === undefined) {
      this.markClosed();
      return;
    }
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin!.end();
      const grace = this.options.closeTimeoutMs ?? 2000;
      const term = setTimeout(() => {
        child.kill("SIGTERM");
        const kill = setTimeout(() => child.kill("SIGKILL"), grace);
        kill.unref();
        void this.exited!.then(() => clearTimeout(kill));
      }, grace);
      term.unref();
      await this.exited;
      clearTimeout(term);
    } else {
      await this.exited;
    }
    this.markClosed();
  }
}
