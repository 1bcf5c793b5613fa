// How a client settles on a server's era: the options, the verdict it reaches, and what a probe's outcome is evidence of.
import { RpcError, isPlainObject } from "../rpc/jsonrpc.js";
import { ConnectionClosedError, RequestTimeoutError } from "../rpc/errors.js";
import { ModernErrorCode } from "../eras/2026-07-28/envelope.js";

/**
 * Which era a client speaks. `"auto"` (default): probe with `server/discover` and speak the newest revision both sides
 * know, falling back to the initialize handshake for a server that answers like a legacy one. `"legacy"`: the
 * handshake only. `{ pin }`: that revision and no other, without probing.
 */
export type EraOption = "auto" | "legacy" | { readonly pin: string };

/**
 * What a client concluded of a server: its era and the revision spoken. The era is a property of the server (per
 * command line on stdio, per origin on HTTP): a host may keep a verdict and pass it back to skip the probe.
 */
export interface EraVerdict {
  readonly era: "modern" | "legacy";
  readonly protocolVersion: string;
}

/** Default bound on the `server/discover` probe, ms: a legacy stdio server may never answer it. */
export const DEFAULT_PROBE_TIMEOUT_MS = 3000;

/** What a failed probe tells: the server is legacy, or modern with another revision, or nothing (the error stands). */
export type ProbeEvidence =
  | { readonly kind: "legacy" }
  | { readonly kind: "modern"; readonly supported: readonly string[] }
  | { readonly kind: "none"; readonly error: unknown };

/**
 * What a probe's failure says of the server. A modern error (-32022 with `data.supported`) means modern; any other
 * JSON-RPC error, a timeout, or an HTTP 4xx without a JSON-RPC body means legacy (legacy servers answer an unknown
 * pre-initialize request in their own ways, or not at all). Refused credentials (401, 403), server errors (5xx), a
 * closed connection and local failures say nothing of the era.
 */
export function probeEvidence(error: unknown): ProbeEvidence {
  if (error instanceof RequestTimeoutError) return { kind: "legacy" };
  if (error instanceof ConnectionClosedError) return { kind: "none", error };
  if (error instanceof RpcError) {
    if (error.code === ModernErrorCode.UnsupportedProtocolVersion) {
      const supported = supportedOf(error.data);
      return supported === undefined ? { kind: "none", error } : { kind: "modern", supported };
    }
    // Other modern errors say the request itself was wrong: falling back would hide that.
    if (error.code === ModernErrorCode.HeaderMismatch || error.code === ModernErrorCode.MissingRequiredClientCapability)
      return { kind: "none", error };
    // Errors made on this side (closed, cancelled, an invalid answer, a lost stream) are not the server's word.
    if (isLocal(error)) return { kind: "none", error };
    return { kind: "legacy" };
  }
  const status = statusOf(error);
  if (status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403)
    return { kind: "legacy" };
  return { kind: "none", error };
}

/** The revisions an UnsupportedProtocolVersion error names in `data.supported`, if it names any. */
export function supportedOf(data: unknown): readonly string[] | undefined {
  if (!isPlainObject(data) || !Array.isArray(data.supported)) return undefined;
  const list = data.supported.filter((v): v is string => typeof v === "string");
  return list.length === data.supported.length ? list : undefined;
}

/** The first of `ours` (latest first) that `theirs` names too. */
export function newestCommon(ours: readonly string[], theirs: readonly string[]): string | undefined {
  return ours.find((version) => theirs.includes(version));
}

/** Whether `error` is the server's -32022 naming the revisions it speaks. */
export function isUnsupportedVersion(error: unknown): error is RpcError {
  return (
    error instanceof RpcError &&
    error.code === ModernErrorCode.UnsupportedProtocolVersion &&
    supportedOf(error.data) !== undefined
  );
}

/** The server's errors arrive as plain RpcErrors; this side's own are subclasses, or a transport's lost-stream answer. */
function isLocal(error: RpcError): boolean {
  if (error.constructor !== RpcError) return true;
  const reason = isPlainObject(error.data) ? error.data.reason : undefined;
  return reason === "stream-lost" || reason === "session-expired";
}

/** The HTTP status of a transport's failure (its `status`), without knowing the transport. */
function statusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null || !("status" in error)) return undefined;
  const status = (error as { status: unknown }).status;
  return typeof status === "number" ? status : undefined;
}
