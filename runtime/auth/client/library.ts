// oauth4webapi, loaded on first use (an optional peer dependency), and its failures turned into OAuthError.
import type * as OAuth4WebApi from "oauth4webapi";
import { MissingPeerError, loadPeer } from "../peers.js";
import { OAuthError, type OAuthErrorCode } from "./errors.js";

export type OAuthLibrary = typeof OAuth4WebApi;
export type AuthorizationServer = OAuth4WebApi.AuthorizationServer;
export type LibraryClient = OAuth4WebApi.Client;
export type ClientAuth = OAuth4WebApi.ClientAuth;
export type TokenEndpointResponse = OAuth4WebApi.TokenEndpointResponse;

let loading: Promise<OAuthLibrary> | undefined;

/** The library, imported once; an OAuthError naming the package to install when it is missing. */
export function oauthLibrary(): Promise<OAuthLibrary> {
  loading ??= loadPeer("oauth4webapi", "OAuth clients", () => import("oauth4webapi")).catch((error: unknown) => {
    loading = undefined;
    if (!(error instanceof MissingPeerError)) throw error;
    throw new OAuthError("missing_dependency", `${error.message}@3`);
  });
  return loading;
}

/** The kind of step a library call was part of: decides the code of a failure. */
export type StepKind = "resource-metadata" | "server-metadata" | "registration" | "token" | "callback";

export interface Step {
  kind: StepKind;
  /** Names the step in messages, e.g. "the token endpoint". */
  what: string;
  url?: string;
}

const INVALID: Record<StepKind, OAuthErrorCode> = {
  "resource-metadata": "invalid_resource_metadata",
  "server-metadata": "invalid_authorization_server_metadata",
  registration: "registration_failed",
  token: "invalid_token_response",
  callback: "invalid_callback",
};

/**
 * An OAuthError for a failed library call or fetch. Only the library's own fixed messages and the server's OAuth
 * error code and description (redacted by the caller) are kept: the library attaches parsed response bodies,
 * which can hold tokens, to its errors, so those never travel on as `cause`.
 */
export function translate(lib: OAuthLibrary, error: unknown, step: Step, redact: (text: string) => string): OAuthError {
  if (error instanceof OAuthError) return error;
  const at = step.url === undefined ? {} : { url: step.url };
  if (error instanceof lib.ResponseBodyError) {
    const description = error.error_description === undefined ? "" : ` (${redact(String(error.error_description))})`;
    const code: OAuthErrorCode =
      step.kind === "token"
        ? "token_request_failed"
        : step.kind === "registration"
          ? "registration_failed"
          : "http_error";
    return new OAuthError(
      code,
      `${step.what} refused the request with HTTP ${error.status}: ${redact(error.error)}${description}`,
      { ...at, status: error.status, oauthError: error.error },
    );
  }
  if (error instanceof lib.AuthorizationResponseError) {
    const description = error.error_description === undefined ? "" : ` (${redact(error.error_description)})`;
    return new OAuthError(
      "authorization_denied",
      `the authorization server answered the authorization request with ${redact(error.error)}${description}`,
      { ...at, oauthError: error.error },
    );
  }
  if (error instanceof lib.WWWAuthenticateChallengeError) {
    const code: OAuthErrorCode = step.kind === "token" ? "token_request_failed" : "http_error";
    return new OAuthError(code, `${step.what} answered HTTP ${error.status} with a WWW-Authenticate challenge`, {
      ...at,
      status: error.status,
    });
  }
  if (error instanceof lib.UnsupportedOperationError) {
    return new OAuthError(INVALID[step.kind], `${step.what}: ${error.message}`, at);
  }
  if (error instanceof lib.OperationProcessingError) {
    const status = statusOf(error.cause);
    if (error.code === lib.RESPONSE_IS_NOT_CONFORM && status !== undefined) {
      return new OAuthError(
        step.kind === "token" ? "token_request_failed" : INVALID[step.kind],
        `${step.what} answered with unexpected HTTP status ${status}`,
        { ...at, status },
      );
    }
    if (error.code === lib.JSON_ATTRIBUTE_COMPARISON) {
      const code: OAuthErrorCode = step.kind === "resource-metadata" ? "resource_mismatch" : "issuer_mismatch";
      return new OAuthError(code, `${step.what}: ${error.message}`, at);
    }
    if (error.code === lib.HTTP_REQUEST_FORBIDDEN || error.code === lib.REQUEST_PROTOCOL_FORBIDDEN) {
      return new OAuthError("insecure_url", `${step.what}: ${error.message}`, at);
    }
    const code: OAuthErrorCode =
      error.code === lib.MISSING_SERVER_METADATA || error.code === lib.INVALID_SERVER_METADATA
        ? "invalid_authorization_server_metadata"
        : INVALID[step.kind];
    return new OAuthError(code, `${step.what}: ${error.message}`, at);
  }
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return new OAuthError("http_error", `${step.what} did not answer in time (${error.message})`, at);
  }
  const code: unknown = error instanceof TypeError ? (error as { code?: unknown }).code : undefined;
  if (typeof code === "string" && code.startsWith("ERR_INVALID_ARG")) {
    return new OAuthError("invalid_options", `${step.what}: ${redact((error as TypeError).message)}`, at);
  }
  // A network failure (fetch's TypeError): its cause says why (refused, reset, DNS) and holds no credential.
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error ? (error as { cause?: unknown }).cause : undefined;
  const reason = cause instanceof Error ? `${message}: ${cause.message}` : message;
  return new OAuthError("http_error", `${step.what} could not be reached: ${redact(reason)}`, {
    ...at,
    cause: cause instanceof Error ? new Error(redact(cause.message)) : undefined,
  });
}

function statusOf(value: unknown): number | undefined {
  return typeof value === "object" && value !== null && typeof (value as { status?: unknown }).status === "number"
    ? (value as { status: number }).status
    : undefined;
}
