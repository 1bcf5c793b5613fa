// One HTTP request of a client session: the session's headers, the authorizer's credentials, retries after a challenge.
import { limitOption } from "../../../rpc/limits.js";
import { fetchRequester, type WireRequest, type WireRequester, type WireResponse } from "./fetch-requester.js";
import { HttpStatusError } from "./errors.js";
import {
  DEFAULT_AUTHORIZATION_RETRIES,
  type HttpAuthChallenge,
  type HttpAuthCredentials,
  type StreamableHttpClientOptions,
} from "./options.js";
import { platformRequester } from "./node-requester.js";
import { LAST_EVENT_ID_HEADER, PROTOCOL_VERSION_HEADER, SESSION_HEADER, mediaTypeOf } from "../wire.js";

/** What every request of the session carries as headers. */
export interface SessionState {
  readonly sessionId: string | undefined;
  readonly protocolVersion: string | undefined;
}

/** The requests of one client transport, over node:http or the given fetch. */
export class SessionRequests {
  private readonly http: WireRequester;
  private readonly authRetries: number;

  constructor(
    private readonly url: URL,
    private readonly options: StreamableHttpClientOptions,
    private readonly session: SessionState,
  ) {
    this.http = options.fetch
      ? fetchRequester(options.fetch)
      : platformRequester({ idleSocketTimeoutMs: options.idleSocketTimeoutMs });
    this.authRetries = limitOption(
      "authorization.maxRetries",
      options.authorization?.maxRetries,
      DEFAULT_AUTHORIZATION_RETRIES,
      100,
    );
  }

  /** Releases the pooled connections. */
  close(): void {
    this.http.close();
  }

  private async headers(): Promise<Record<string, string>> {
    const extra =
      typeof this.options.headers === "function" ? await this.options.headers() : (this.options.headers ?? {});
    const out: Record<string, string> = { ...extra };
    if (this.session.sessionId !== undefined) out[SESSION_HEADER] = this.session.sessionId;
    if (this.session.protocolVersion !== undefined) out[PROTOCOL_VERSION_HEADER] = this.session.protocolVersion;
    return out;
  }

  async get(lastEventId: string | undefined, signal: AbortSignal): Promise<WireResponse> {
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (lastEventId !== undefined) headers[LAST_EVENT_ID_HEADER] = lastEventId;
    return this.send({ method: "GET", headers, signal });
  }

  /**
   * One request with the session's headers and the authorizer's credentials; a 401 or 403 goes to the authorizer,
   * which may have it sent again (at most `maxRetries` times). Any other answer, or the last one, is returned.
   * Every response is shown to the authorizer's `observe` first, when it has one.
   */
  async send(request: WireRequest): Promise<WireResponse> {
    const authorizer = this.options.authorization;
    for (let attempt = 1; ; attempt++) {
      const headers = { ...(await this.headers()), ...request.headers };
      const credentials =
        authorizer === undefined ? undefined : await authorizer.authorization(this.url, { method: request.method });
      const { authorization, extra } = credentialsOf(credentials);
      if (authorization !== undefined) replaceHeader(headers, "authorization", authorization);
      if (extra !== undefined) for (const [name, value] of Object.entries(extra)) replaceHeader(headers, name, value);
      const response = await this.http.send(this.url, { ...request, headers });
      if (authorizer?.observe !== undefined) {
        try {
          await authorizer.observe({ status: response.status, headers: response.headers(), url: this.url });
        } catch (error) {
          await response.discard();
          throw error;
        }
      }
      if (
        authorizer === undefined ||
        (response.status !== 401 && response.status !== 403) ||
        attempt > this.authRetries
      )
        return response;
      const challenge: HttpAuthChallenge = {
        status: response.status,
        headers: response.headers(),
        url: this.url,
        method: request.method,
        authorization,
        ...(extra === undefined ? {} : { credentialHeaders: extra }),
        attempt,
      };
      let retry: boolean;
      try {
        retry = await authorizer.challenge(challenge);
      } catch (error) {
        await response.discard();
        throw error;
      }
      if (!retry) return response;
      await response.discard();
    }
  }
}

/** The Authorization value and the extra headers of what an authorizer returned; a malformed answer is a TypeError. */
function credentialsOf(credentials: string | HttpAuthCredentials | undefined): {
  authorization: string | undefined;
  extra: Readonly<Record<string, string>> | undefined;
} {
  if (credentials === undefined || typeof credentials === "string")
    return { authorization: credentials, extra: undefined };
  if (typeof credentials !== "object" || credentials === null || typeof credentials.authorization !== "string")
    throw new TypeError("authorization() must return a string, { authorization: string, headers? } or undefined");
  const extra = credentials.headers;
  if (extra === undefined) return { authorization: credentials.authorization, extra: undefined };
  if (typeof extra !== "object" || extra === null || Object.values(extra).some((v) => typeof v !== "string"))
    throw new TypeError("the headers of authorization()'s credentials must map names to string values");
  return { authorization: credentials.authorization, extra };
}

/** Sets `name` to `value`, dropping any header of the same name in another case. */
function replaceHeader(headers: Record<string, string>, name: string, value: string): void {
  const lower = name.toLowerCase();
  for (const existing of Object.keys(headers)) if (existing.toLowerCase() === lower) delete headers[existing];
  headers[lower === "authorization" ? "authorization" : name] = value;
}

/** The HttpStatusError for a response the transport cannot use, with its body (when readable) and headers. */
export async function statusError(response: WireResponse): Promise<HttpStatusError> {
  const text = await response.text().catch(() => "");
  return new HttpStatusError(response.status, text, undefined, response.headers());
}

export function mediaType(response: WireResponse): string {
  return mediaTypeOf(response.header("content-type") ?? "");
}
