// Newline-delimited JSON over stdio: a line decoder, the server side (own stdin/stdout) and the client side (child process).
import { spawn, type ChildProcess } from "node:child_process";
import { isUtf8 } from "node:buffer";
import { Transform, type Readable, type Writable } from "node:stream";
import type { JsonRpcMessage } from "../../rpc/jsonrpc.js";
import { ProcessExitedError } from "../../rpc/errors.js";
import { limitOption } from "../../rpc/limits.js";
import { SENT, type SendOptions, type Transport } from "../../rpc/transport.js";
import { BusyPoller } from "./busy-poll.js";

export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024;
export const DEFAULT_STDERR_TAIL_LINES = 20;
export const DEFAULT_STDERR_TAIL_BYTES = 4096;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
/** How much of a bad line an error quotes: enough to recognise a stray log line, never the whole of a huge one. */
const EXCERPT_CHARS = 120;
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

/** A line that is not JSON (often a log line written to stdout by mistake); quotes the start of it. */
export class InvalidJsonLineError extends SyntaxError {
  /** The first characters of the line. */
  readonly excerpt: string;
  constructor(line: string, reason: string) {
    const excerpt = line.length > EXCERPT_CHARS ? line.slice(0, EXCERPT_CHARS) : line;
    super(`Line is not JSON (${reason}): ${JSON.stringify(excerpt)}${excerpt.length < line.length ? "..." : ""}`);
    this.name = "InvalidJsonLineError";
    this.excerpt = excerpt;
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
 * @internal
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
      this.sink.onBadLine(new InvalidJsonLineError(text, error instanceof Error ? error.message : String(error)));
      return;
    }
    this.sink.onLine(value);
  }
}

function isSpace(byte: number): boolean {
  return byte === SPACE || byte === TAB || byte === CARRIAGE_RETURN;
}

/**
 * The last lines of a byte stream, bounded by count and by bytes (a longer line keeps its start): what a child
 * wrote to stderr before it died, for the error that reports it. Holds copies, never the chunks it was fed.
 * @internal
 */
export class LineTail {
  private readonly kept: { text: string; bytes: number }[] = [];
  private keptBytes = 0;
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private cut = false;

  constructor(
    readonly maxLines: number = DEFAULT_STDERR_TAIL_LINES,
    readonly maxBytes: number = DEFAULT_STDERR_TAIL_BYTES,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      this.append(chunk, start, nl === -1 ? chunk.length : nl);
      if (nl === -1) return;
      this.endLine();
      start = nl + 1;
    }
  }

  /** The kept lines, oldest first, with an unfinished last line if there is one. */
  lines(): string[] {
    const kept = this.kept;
    const last = this.partialBytes === 0 ? "" : this.text();
    if (last.trim() === "") return kept.map((line) => line.text);
    // The unfinished line counts against the same bounds as the others.
    let first = 0;
    let bytes = this.keptBytes + this.partialBytes;
    while (first < kept.length && (kept.length - first + 1 > this.maxLines || bytes > this.maxBytes))
      bytes -= kept[first++].bytes;
    const lines = kept.slice(first).map((line) => line.text);
    lines.push(last);
    return lines;
  }

  private append(chunk: Buffer, start: number, end: number): void {
    const room = this.maxBytes - this.partialBytes;
    const take = Math.min(room, end - start);
    if (take < end - start) this.cut = true;
    if (take <= 0) return;
    this.partial.push(Buffer.from(chunk.subarray(start, start + take)));
    this.partialBytes += take;
  }

  private text(): string {
    let text = Buffer.concat(this.partial, this.partialBytes).toString("utf8");
    if (text.endsWith("\r")) text = text.slice(0, -1);
    return this.cut ? `${text}...` : text;
  }

  private endLine(): void {
    const bytes = this.partialBytes;
    const text = bytes === 0 ? "" : this.text();
    this.partial = [];
    this.partialBytes = 0;
    this.cut = false;
    if (text.trim() === "") return;
    const kept = this.kept;
    kept.push({ text, bytes });
    this.keptBytes += bytes;
    while (kept.length > this.maxLines || this.keptBytes > this.maxBytes) this.keptBytes -= kept.shift()!.bytes;
  }
}

/** Writes one message per line, honouring backpressure with one shared drain wait. */
class LineWriter {
  private drain: Promise<void> | undefined = undefined;

  constructor(private readonly stream: Writable) {}

  write(message: JsonRpcMessage, ondelivered?: () => void): Promise<void> {
    // JSON.stringify escapes newlines inside strings, so one message is always one line.
    const line = JSON.stringify(message) + "\n";
    const flushed =
      ondelivered === undefined
        ? this.stream.write(line)
        : this.stream.write(line, (error) => error == null && ondelivered());
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
  /** @internal */
  protected readonly decoder: LineDecoder;
  protected closed = false;
  /** @internal Exposed for tests and benchmarks: how often a reply was caught while polling. */
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
    if (this.closed || this.writer === undefined)
      return Promise.reject(new Error(`${this.constructor.name} is closed`));
    const written = this.writer.write(message, options?.ondelivered);
    // Requests and responses are what a peer answers quickly (a response, or the next request); notifications are not.
    if ("id" in message) this.busyPoll.sent();
    return written;
  }

  // Uint8Array (what Node's Buffer is) keeps Buffer, a Node-only global, out of the declarations.
  protected readonly ondata = (chunk: Uint8Array | string): void => {
    this.busyPoll.arrived();
    this.decoder.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : (chunk as Buffer));
  };

  protected readonly onstreamerror = (error: Error): void => {
    this.onerror?.(error);
  };

  /** LineSink: called by the decoder. */
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

  /** LineSink: called by the decoder. */
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
    ? [
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PROCESSOR_ARCHITECTURE",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "USERNAME",
        "USERPROFILE",
        "PROGRAMFILES",
      ]
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
  /**
   * The child's stderr: "inherit" (default) passes it on to this process's stderr, "pipe" exposes it as
   * `transport.stderr`, "ignore" drops it. In every mode its last lines are also kept for ProcessExitedError.
   */
  stderr?: "inherit" | "pipe" | "ignore";
  /**
   * How many of the child's last stderr lines ProcessExitedError carries; default 20. 0 keeps none and hands the
   * `stderr` mode to the child as is (the child then writes to an inherited stderr directly, e.g. a terminal).
   */
  stderrTailLines?: number;
  /** Bound on the bytes of those lines together (a longer line keeps its start); default 4096. */
  stderrTailBytes?: number;
  maxLineBytes?: number;
  /** After each send, poll this long for the reply before letting the process sleep (adaptive; 0 disables). Default 100. */
  busyPollMicros?: number;
  /** After close() ends stdin, how long to wait before SIGTERM, then as long again before SIGKILL; default 2000 ms. */
  closeTimeoutMs?: number;
}

/**
 * The client end: spawns the server and speaks over its stdin/stdout. onclose fires when the child exits; when it
 * exits on its own, `closeError` (a ProcessExitedError) says how, and pending calls reject with it.
 */
export class StdioClientTransport extends StdioEnd {
  private child: ChildProcess | undefined = undefined;
  private exited: Promise<void> | undefined = undefined;
  private closing = false;
  private piped: Readable | null = null;
  private readonly tail: LineTail | undefined;
  private exitError: ProcessExitedError | undefined = undefined;

  constructor(private readonly options: StdioClientTransportOptions) {
    super(options.maxLineBytes, options.busyPollMicros);
    const lines = limitOption("stderrTailLines", options.stderrTailLines, DEFAULT_STDERR_TAIL_LINES);
    const bytes = limitOption("stderrTailBytes", options.stderrTailBytes, DEFAULT_STDERR_TAIL_BYTES);
    this.tail = lines > 0 && bytes > 0 ? new LineTail(lines, bytes) : undefined;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The same command line again, as a transport not yet started (a new process once started). */
  respawn(): StdioClientTransport {
    return new StdioClientTransport(this.options);
  }

  /** The child's stderr when options.stderr is "pipe". */
  get stderr(): Readable | null {
    return this.piped;
  }

  /** The last lines the child wrote to stderr (empty when stderrTailLines is 0). */
  get stderrTail(): string[] {
    return this.tail?.lines() ?? [];
  }

  /** Set when the child exited before close() was called. */
  get closeError(): ProcessExitedError | undefined {
    return this.exitError;
  }

  /** LineSink: a line that is not a message is usually the server logging to stdout; the app hears of it. */
  override onBadLine(error: Error): void {
    super.onBadLine(error);
    this.onerror?.(error);
  }

  start(): Promise<void> {
    if (this.child !== undefined) return Promise.reject(new Error("StdioClientTransport already started"));
    const options = this.options;
    const mode = options.stderr ?? "inherit";
    const tail = this.tail;
    const child = spawn(options.command, options.args ?? [], {
      env: { ...defaultChildEnvironment(), ...options.env },
      cwd: options.cwd,
      // Keeping a tail means reading stderr here, then passing it on as the mode says.
      stdio: ["pipe", "pipe", tail === undefined ? mode : "pipe"],
      shell: false,
      windowsHide: true,
    });
    this.child = child;
    this.writer = new LineWriter(child.stdin!);
    this.exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
    child.stdout!.on("data", this.ondata);
    child.stdin!.on("error", this.onstreamerror);
    child.stdout!.on("error", this.onstreamerror);
    if (tail === undefined) this.piped = child.stderr;
    else this.piped = keepTail(child.stderr!, tail, mode, this.onstreamerror);
    // "close" comes after stdout and stderr are drained: every message is delivered and the tail is complete.
    child.once("close", (code: number | null, signal: NodeJS.Signals | null) => {
      if (!this.closing) this.exitError = new ProcessExitedError(code, signal, this.stderrTail);
      this.markClosed();
    });
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
    this.closing = true;
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

/**
 * Feeds a child's stderr to `tail` while passing it on as `mode` says: to this process's stderr (with backpressure,
 * as an inherited descriptor would have), to the returned stream for the app to read ("pipe"), or nowhere.
 */
function keepTail(
  stderr: Readable,
  tail: LineTail,
  mode: "inherit" | "pipe" | "ignore",
  onerror: (error: Error) => void,
): Readable | null {
  stderr.on("error", onerror);
  if (mode === "pipe") {
    // Recorded as the app reads, so an app that never reads still blocks the child as the raw pipe would.
    const passed = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        tail.push(chunk);
        done(null, chunk);
      },
    });
    stderr.pipe(passed);
    return passed;
  }
  if (mode === "ignore") {
    stderr.on("data", (chunk: Buffer) => tail.push(chunk));
    return null;
  }
  const out = process.stderr;
  stderr.on("data", (chunk: Buffer) => {
    tail.push(chunk);
    if (!out.write(chunk)) {
      stderr.pause();
      out.once("drain", () => stderr.resume());
    }
  });
  return null;
}
