// What a client session knows of each tool's execution.taskSupport, from the tools/list results it received.
import { isPlainObject, isRequestId, type JsonObject } from "../../../rpc/jsonrpc.js";
import { Session, SessionStateKey } from "../../../rpc/session/session.js";

export type ToolTaskSupport = "required" | "optional" | "forbidden";

const TOOLS_LIST = "tools/list";
const TOOLS_LIST_CHANGED = "notifications/tools/list_changed";
/** Tools remembered per session; past it, further tools are not remembered (they are called plainly). */
export const DEFAULT_MAX_TRACKED_TOOLS = 10_000;
/** tools/list pages one discovery walk reads at most. */
export const DEFAULT_MAX_TOOL_LIST_PAGES = 50;

/** The spec's default when a tool says nothing: forbidden. */
function readSupport(tool: JsonObject): ToolTaskSupport {
  const execution = tool.execution;
  const value = isPlainObject(execution) ? execution.taskSupport : undefined;
  return value === "required" || value === "optional" ? value : "forbidden";
}

/**
 * Watches the responses to tools/list the session sent (whoever sent them: the app or a discovery walk) and
 * forgets everything when the server says its tools changed.
 */
export class ToolSupportTracker {
  private readonly support = new Map<string, ToolTaskSupport>();
  /** A whole list was read since the last change: a tool missing from it is unknown to the server. */
  private complete = false;
  private walking: Promise<void> | undefined = undefined;
  maxTools = DEFAULT_MAX_TRACKED_TOOLS;

  constructor(private readonly session: Session) {
    session.use({
      accept: (message) => {
        if (message.method === undefined && isRequestId(message.id) && isPlainObject(message.result)) {
          if (this.session.operations.outbound.get(message.id)?.method === TOOLS_LIST) this.record(message.result);
        }
        return true;
      },
      notification: (method) => {
        if (method !== TOOLS_LIST_CHANGED) return;
        this.support.clear();
        this.complete = false;
      },
    });
  }

  /** The tool's taskSupport as last listed, or undefined when no list seen since the last change named it. */
  get(name: string): ToolTaskSupport | undefined {
    return this.support.get(name);
  }

  /**
   * What the server says of `name`, reading tools/list pages (at most `maxPages`) when no list seen so far named
   * it; undefined when the whole list does not name it either.
   */
  async lookup(name: string, maxPages = DEFAULT_MAX_TOOL_LIST_PAGES): Promise<ToolTaskSupport | undefined> {
    const known = this.support.get(name);
    if (known !== undefined || this.complete) return known;
    // Concurrent calls share one walk.
    this.walking ??= this.walk(maxPages).finally(() => {
      this.walking = undefined;
    });
    await this.walking;
    return this.support.get(name);
  }

  private async walk(maxPages: number): Promise<void> {
    let cursor: string | undefined = undefined;
    for (let page = 0; page < maxPages; page++) {
      const result: JsonObject = await this.session.request(TOOLS_LIST, cursor === undefined ? undefined : { cursor });
      const next = result.nextCursor;
      if (typeof next !== "string") {
        this.complete = true;
        return;
      }
      cursor = next;
    }
  }

  private record(result: JsonObject): void {
    const tools = result.tools;
    if (!Array.isArray(tools)) return;
    for (const tool of tools) {
      if (!isPlainObject(tool) || typeof tool.name !== "string") continue;
      if (this.support.size >= this.maxTools && !this.support.has(tool.name)) continue;
      this.support.set(tool.name, readSupport(tool));
    }
  }
}

/** One tracker per session, installed the first time the requestor looks at a session. */
export const TOOL_SUPPORT = new SessionStateKey<ToolSupportTracker>(
  "tasks.tool-support",
  (session) => new ToolSupportTracker(session),
);
