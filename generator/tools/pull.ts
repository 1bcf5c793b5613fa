// Pulls a live server's catalogue with the standard SDK's client: connect (either era), page through the lists, close.
import type { Client, ClientSession, JsonObject as SdkJsonObject, Transport } from "mcpgen";
import { UsageError } from "../errors.js";
import { canonicalCatalogue, type Catalogue, type JsonObject } from "./catalogue.js";
import { splitCommandLine } from "./command-line.js";

/** How long connecting and listing may take together by default, ms (closing has a grace of its own). */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Pages of one list read at most by default: a server that keeps handing out cursors is cut off. */
export const DEFAULT_MAX_PAGES = 100;
/** How long closing may take before the pull goes on without waiting (a server that does not exit is killed). */
const CLOSE_GRACE_MS = 2_000;

export interface PullOptions {
  /** A command line that starts a stdio server. */
  server?: string;
  /** A Streamable HTTP endpoint. */
  url?: string;
  /** `Name: value` headers for every HTTP request (a bearer token). */
  headers?: readonly string[];
  /** `NAME=value` (or `NAME`, copied from this process) for the stdio server's environment. */
  env?: readonly string[];
  timeoutMs?: number;
  maxPages?: number;
}

/** What the pull talks to, as messages name it. */
export function targetOf(options: PullOptions): string {
  return options.server !== undefined ? `\`${options.server}\`` : `${options.url}`;
}

type Sdk = typeof import("mcpgen");

/**
 * The standard SDK, loaded by its package name as an app loads it, and only when a server is to be reached: the
 * published CLI holds no runtime of its own, and a project that pulls catalogues has `mcpgen` beside `mcpgen-cli`.
 */
async function loadSdk(): Promise<Sdk> {
  try {
    return await import("mcpgen");
  } catch (error) {
    throw new UsageError(
      `connecting to a server needs the mcpgen package (npm install mcpgen): ${(error as Error).message}`,
    );
  }
}

function parseHeaders(lines: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon).trim() : "";
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw new UsageError(`--header ${JSON.stringify(line)}: expected "Name: value"`);
    headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}

function parseEnv(entries: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of entries) {
    const eq = entry.indexOf("=");
    const name = eq < 0 ? entry : entry.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new UsageError(`--env ${JSON.stringify(entry)}: expected NAME=value or NAME`);
    const value = eq < 0 ? process.env[name] : entry.slice(eq + 1);
    if (value === undefined) throw new UsageError(`--env ${name}: not set in this environment`);
    env[name] = value;
  }
  return env;
}

function transportFor(sdk: Sdk, options: PullOptions): Transport {
  if ((options.server === undefined) === (options.url === undefined))
    throw new UsageError("give exactly one of --server <command line> and --url <endpoint>");
  if (options.server !== undefined) {
    if (options.headers?.length) throw new UsageError("--header applies to --url only");
    const [command, ...args] = splitCommandLine(options.server);
    // stderr is kept (its last lines explain a server that exits) but not shown: a pull's output is the catalogue.
    return new sdk.StdioClientTransport({
      command: command!,
      args,
      env: parseEnv(options.env ?? []),
      stderr: "ignore",
    });
  }
  if (options.env?.length) throw new UsageError("--env applies to --server only");
  let url: URL;
  try {
    url = new URL(options.url!);
  } catch {
    throw new UsageError(`--url ${JSON.stringify(options.url)}: not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UsageError(`--url ${options.url}: only http: and https: endpoints`);
  return new sdk.StreamableHttpClientTransport({
    url,
    headers: parseHeaders(options.headers ?? []),
    // One catalogue is read and the session ends: no standalone stream to wait on.
    standaloneStream: "manual",
  });
}

class Deadline extends Error {}

/** What went wrong, in a sentence that names the step and the server; the original is the cause. */
function explain(sdk: Sdk, error: unknown, step: string, target: string, timeoutMs: number): UsageError {
  const e = error as NodeJS.ErrnoException & { status?: number };
  let what: string;
  if (error instanceof Deadline)
    what = `timed out after ${timeoutMs} ms while ${step} (raise --timeout-ms if the server is slow to start)`;
  else if (typeof e.syscall === "string" && e.syscall.startsWith("spawn"))
    what = `cannot start it: ${e.code === "ENOENT" ? `${e.path ?? "the program"} not found` : e.message}`;
  else if (error instanceof sdk.ProcessExitedError) what = `the server process ended while ${step}: ${error.message}`;
  else if (error instanceof sdk.HttpStatusError) {
    const auth =
      error.status === 401 || error.status === 403
        ? ` (authorization refused: pass a token with --header "Authorization: Bearer <token>")`
        : "";
    what = `HTTP ${error.status} while ${step}${auth}${error.body ? `: ${error.body.slice(0, 200)}` : ""}`;
  } else if (error instanceof sdk.RpcError)
    what = `the server answered error ${error.code} while ${step}: ${error.message}`;
  else {
    const cause = (e as { cause?: NodeJS.ErrnoException }).cause;
    const code = e.code ?? cause?.code;
    what =
      code === "ECONNREFUSED"
        ? `connection refused while ${step}`
        : `${step} failed: ${error instanceof Error ? error.message : String(error)}`;
  }
  return new UsageError(`${target}: ${what}`, { cause: error });
}

/** Every item of a paginated list, following nextCursor; a repeated cursor or too many pages is an error. */
async function allPages(
  list: (cursor: string | undefined) => Promise<{ items: unknown[]; nextCursor?: unknown }>,
  what: string,
  maxPages: number,
  onPage: (page: number) => void,
): Promise<JsonObject[]> {
  const items: JsonObject[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    if (page > maxPages) throw new UsageError(`${what}: more than ${maxPages} pages (raise --max-pages)`);
    onPage(page);
    const result = await list(cursor);
    for (const item of result.items) items.push(item as JsonObject);
    if (result.nextCursor === undefined || result.nextCursor === null) return items;
    if (typeof result.nextCursor !== "string") throw new UsageError(`${what}: nextCursor is not a string`);
    if (seen.has(result.nextCursor))
      throw new UsageError(`${what}: the server handed out cursor ${JSON.stringify(result.nextCursor)} twice`);
    seen.add(result.nextCursor);
    cursor = result.nextCursor;
  }
}

function duplicates(list: JsonObject[], key: string, what: string): void {
  const seen = new Set<unknown>();
  for (const item of list) {
    if (seen.has(item[key])) throw new UsageError(`the server lists ${what} ${JSON.stringify(item[key])} twice`);
    seen.add(item[key]);
  }
}

/** Connects, reads tools (and prompts and resource templates where the server has them), and closes. */
export async function pullCatalogue(options: PullOptions): Promise<Catalogue> {
  const sdk = await loadSdk();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  const target = targetOf(options);
  const transport = transportFor(sdk, options);
  let step = "connecting";
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Deadline()), timeoutMs);
  });
  // Raced by every step; this handler only keeps a deadline that fires between steps from going unhandled.
  expired.catch(() => undefined);
  const abort = new AbortController();
  const bounded = <T>(work: Promise<T>): Promise<T> => Promise.race([work, expired]);
  let client: (Client & { readonly peer: ClientSession }) | undefined;
  try {
    client = await bounded(
      sdk.Client.connect(transport, {
        clientInfo: { name: "mcpgen-tools-pull", version: "1" },
        defaultTimeout: timeoutMs,
        // A legacy stdio server may never answer the era probe: it gets a tenth of the budget, at most the default.
        probeTimeoutMs: Math.max(1, Math.min(3_000, Math.floor(timeoutMs / 10))),
      }),
    );
    const session = client.peer;
    const capabilities = session.serverCapabilities ?? {};
    const request = { signal: abort.signal, timeout: timeoutMs };
    const c = client;
    const page = (what: string) => (n: number) => {
      step = `listing ${what}${n > 1 ? ` (page ${n})` : ""}`;
    };
    const cursorParams = (cursor: string | undefined): SdkJsonObject | undefined =>
      cursor === undefined ? undefined : { cursor };
    const tools =
      capabilities["tools"] === undefined
        ? []
        : await bounded(
            allPages(
              async (cursor) => {
                const r = await c.listTools(cursorParams(cursor), request);
                return { items: r.tools, nextCursor: r.nextCursor };
              },
              "tools/list",
              maxPages,
              page("tools"),
            ),
          );
    const prompts =
      capabilities["prompts"] === undefined
        ? []
        : await bounded(
            allPages(
              async (cursor) => {
                const r = await c.listPrompts(cursorParams(cursor), request);
                return { items: r.prompts, nextCursor: r.nextCursor };
              },
              "prompts/list",
              maxPages,
              page("prompts"),
            ),
          );
    const resourceTemplates =
      capabilities["resources"] === undefined
        ? []
        : await bounded(
            allPages(
              async (cursor) => {
                const r = await c.listResourceTemplates(cursorParams(cursor), request);
                return { items: r.resourceTemplates, nextCursor: r.nextCursor };
              },
              "resources/templates/list",
              maxPages,
              page("resource templates"),
            ),
          );
    duplicates(tools, "name", "tool");
    duplicates(prompts, "name", "prompt");
    duplicates(resourceTemplates, "uriTemplate", "resource template");
    const info = session.serverInfo;
    return canonicalCatalogue({
      server: { name: info?.name ?? "", version: info?.version ?? "" },
      protocolVersion: session.protocolVersion ?? "",
      tools: tools.map(plain),
      prompts: prompts.map(plain),
      resourceTemplates: resourceTemplates.map(plain),
    });
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`${target}: ${error.message}`);
    throw explain(sdk, error, step, target, timeoutMs);
  } finally {
    clearTimeout(timer);
    abort.abort();
    const closing = client !== undefined ? client.peer.close() : transport.close();
    await Promise.race([
      closing.catch(() => undefined),
      new Promise((done) => setTimeout(done, CLOSE_GRACE_MS).unref()),
    ]);
  }
}

/** A wire value as plain JSON (what the transport parsed already is; this drops undefined members and prototypes). */
function plain(value: unknown): JsonObject {
  return JSON.parse(JSON.stringify(value)) as JsonObject;
}
