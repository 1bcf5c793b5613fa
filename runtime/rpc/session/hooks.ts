// The extensions registered on a session (Session.use) and the calls into their hooks, each guarded against throws.
import type { JsonObject, JsonRpcResponse, RpcError } from "../jsonrpc.js";
import type { InboundInfo } from "../transport.js";
import type { InboundOperation } from "../operations.js";
import type { SessionExtension } from "./extension.js";

export class ExtensionHooks {
  private all: readonly SessionExtension[] = [];
  /** Only the hooks on the per-request path get their own lists: most sessions have none of them. */
  private startHooks: readonly SessionExtension[] = [];
  private acceptHooks: readonly SessionExtension[] = [];
  private outboundHooks: readonly SessionExtension[] = [];
  private admitHooks: readonly SessionExtension[] = [];
  private respondHooks: readonly SessionExtension[] = [];

  constructor(private readonly reportError: (error: unknown) => void) {}

  /** Register an extension; returns the function that removes it. */
  add(extension: SessionExtension): () => void {
    this.all = [...this.all, extension];
    this.index();
    return () => {
      this.all = this.all.filter((e) => e !== extension);
      this.index();
    };
  }

  private index(): void {
    const all = this.all;
    this.startHooks = all.filter((e) => e.requestStarted !== undefined);
    this.acceptHooks = all.filter((e) => e.accept !== undefined);
    this.outboundHooks = all.filter((e) => e.checkOutbound !== undefined);
    this.admitHooks = all.filter((e) => e.admit !== undefined);
    this.respondHooks = all.filter((e) => e.respond !== undefined);
  }

  /** The first extension's refusal of an inbound request, if any. */
  admit(method: string, params: JsonObject | undefined, info: InboundInfo | undefined): RpcError | undefined {
    const hooks = this.admitHooks;
    for (let i = 0; i < hooks.length; i++) {
      try {
        const refusal = hooks[i].admit!(method, params, info);
        if (refusal !== undefined) return refusal;
      } catch (error) {
        this.reportError(error);
      }
    }
    return undefined;
  }

  /** Whether any extension rewrites responses (most sessions: none, and the hot path skips the call). */
  get rewritesResponses(): boolean {
    return this.respondHooks.length > 0;
  }

  respond(operation: InboundOperation, message: JsonRpcResponse): JsonRpcResponse {
    const hooks = this.respondHooks;
    let out = message;
    for (let i = 0; i < hooks.length; i++) {
      try {
        out = hooks[i].respond!(operation, out);
      } catch (error) {
        this.reportError(error);
      }
    }
    return out;
  }

  /** Whether any extension looks at inbound messages before they are handled. */
  get filtersInbound(): boolean {
    return this.acceptHooks.length > 0;
  }

  accept(message: JsonObject): boolean {
    const hooks = this.acceptHooks;
    for (let i = 0; i < hooks.length; i++) {
      try {
        if (!hooks[i].accept!(message)) return false;
      } catch (error) {
        this.reportError(error);
      }
    }
    return true;
  }

  /** The extensions' refusal to send `method`, if any. */
  checkOutbound(method: string): Error | undefined {
    const hooks = this.outboundHooks;
    for (let i = 0; i < hooks.length; i++) {
      const refusal = hooks[i].checkOutbound!(method);
      if (refusal !== undefined) return refusal;
    }
    return undefined;
  }

  mayReuseId(method: string, existing: InboundOperation): boolean {
    for (const extension of this.all) if (extension.mayReuseId?.(method, existing) === true) return true;
    return false;
  }

  requestStarted(operation: InboundOperation, params: JsonObject | undefined): void {
    const hooks = this.startHooks;
    for (let i = 0; i < hooks.length; i++) {
      try {
        hooks[i].requestStarted!(operation, params);
      } catch (error) {
        this.reportError(error);
      }
    }
  }

  notification(method: string, params: JsonObject | undefined): void {
    for (const extension of this.all) {
      if (extension.notification === undefined) continue;
      try {
        extension.notification(method, params);
      } catch (error) {
        this.reportError(error);
      }
    }
  }

  sessionExpired(error: Error): void {
    for (const extension of this.all) {
      if (extension.sessionExpired === undefined) continue;
      try {
        extension.sessionExpired(error);
      } catch (e) {
        this.reportError(e);
      }
    }
  }

  /** The connection closed; true when an extension took over recovery (never when our side closed it). */
  closed(byApp: boolean): boolean {
    let recovering = false;
    for (const extension of this.all) {
      if (extension.closed === undefined) continue;
      try {
        if (extension.closed(byApp) === true && !byApp) recovering = true;
      } catch (error) {
        this.reportError(error);
      }
    }
    return recovering;
  }
}
