// The end-to-end auth tests' pieces: our OAuth client with the harness's user, our protected server trusting oidc-provider, and a sweep for leaked tokens.
import { vi } from "vitest";
import {
  InMemoryOAuthStore,
  OAuthClient,
  type OAuthAuthorizer,
  type OAuthClientOptions,
  type StoredTokens,
  type TokenVerifier,
} from "../../../runtime/auth/index.js";
import type { Approval, AuthorizationServer } from "../oidc/helpers.js";
import { connectWith } from "../client/helpers.js";
import { startProtectedServer, type ProtectedServer } from "../server/helpers.js";

/** A loopback redirect URI nothing listens on: the harness stops at the redirect and hands its URL back. */
export const REDIRECT_URI = "http://127.0.0.1:8977/callback";

/**
 * Every token value seen in a test file, and every text our code wrote there (errors, onerror output, console),
 * so the file's last test can look for the one in the other.
 */
export class Sweep {
  readonly tokens = new Set<string>();
  /** Every token presented to a recording verifier, in order. */
  readonly presented: string[] = [];
  readonly texts: string[] = [];
  private readonly seen = new Set<unknown>();
  private readonly lists: Error[][] = [];

  /** A list others append errors to (an onerror sink); read by {@link leaks}. */
  watch(list: Error[]): Error[] {
    this.lists.push(list);
    return list;
  }

  /** Records an error thrown or reported: its name, message, stack and every cause, as text. */
  error(error: unknown): void {
    for (
      let e = error, depth = 0;
      e !== undefined && e !== null && depth < 8 && !this.seen.has(e);
      e = (e as { cause?: unknown }).cause, depth++
    ) {
      this.seen.add(e);
      if (e instanceof Error) this.texts.push(`${e.name}: ${e.message}\n${e.stack ?? ""}\n${safeJson(e)}`);
      else this.texts.push(typeof e === "string" ? e : safeJson(e));
    }
  }

  /** Records what a failing promise rejected with, and hands it back for assertions. */
  async rejection(promise: Promise<unknown>): Promise<unknown> {
    const error = await promise.then(
      () => {
        throw new Error("expected a rejection");
      },
      (e: unknown) => e,
    );
    this.error(error);
    return error;
  }

  /** Records everything written through console while the file runs; returns the restorer. */
  captureConsole(): () => void {
    const spies = (["log", "info", "warn", "error", "debug"] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        this.texts.push(
          args
            .map((a) => (typeof a === "string" ? a : a instanceof Error ? `${a.message}\n${a.stack}` : safeJson(a)))
            .join(" "),
        );
      }),
    );
    return () => spies.forEach((spy) => spy.mockRestore());
  }

  /** A verifier that remembers every token presented to it before the real check. */
  recording(verifier: TokenVerifier): TokenVerifier {
    return {
      verify: (token, context) => {
        this.tokens.add(token);
        this.presented.push(token);
        return verifier.verify(token, context);
      },
    };
  }

  /** The captured texts that contain a recorded token (with the token cut short, so the answer leaks nothing). */
  leaks(): string[] {
    this.lists.forEach((list) => list.forEach((e) => this.error(e)));
    const found: string[] = [];
    for (const token of this.tokens)
      for (const text of this.texts)
        if (text.includes(token)) found.push(`${token.slice(0, 6)}... in ${text.slice(0, 200)}`);
    return found;
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A store that records every access and refresh token the client keeps. */
export class RecordingStore extends InMemoryOAuthStore {
  constructor(private readonly sweep: Sweep) {
    super();
  }
  override setTokens(serverUrl: string, tokens: StoredTokens | undefined): void | Promise<void> {
    if (tokens !== undefined) {
      this.sweep.tokens.add(tokens.access_token);
      if (tokens.refresh_token !== undefined) this.sweep.tokens.add(tokens.refresh_token);
    }
    return super.setTokens(serverUrl, tokens);
  }
}

export interface UserClient {
  oauth: OAuthClient;
  store: RecordingStore;
  /** Every authorization URL the client sent the user to. */
  authorizations: URL[];
  /** The user's answer to each authorization, in order; the last one is repeated (default: sign in as alice, grant all). */
  approvals: Approval[];
}

/** Our OAuthClient, its user played by the harness: each trip to the authorization server follows the next approval. */
export function userClient(
  as: Pick<AuthorizationServer, "approve">,
  sweep: Sweep,
  approvals: Approval[] = [{}],
  options: OAuthClientOptions = {},
): UserClient {
  const store = new RecordingStore(sweep);
  const authorizations: URL[] = [];
  const queue = [...approvals];
  const oauth: OAuthClient = new OAuthClient(
    {
      clientMetadata: { client_name: "mcpgen-e2e", redirect_uris: [REDIRECT_URI] },
      store,
      redirectToAuthorization: async (url) => {
        authorizations.push(url);
        const approval = queue.length > 1 ? queue.shift()! : queue[0]!;
        await oauth.finishAuthorization(await as.approve(url, approval));
      },
    },
    options,
  );
  return { oauth, store, authorizations, approvals: queue };
}

/** Our MCP client over Streamable HTTP with the authorizer; its onerror output goes to the sweep. */
export async function connectClient(
  url: string,
  authorization: OAuthAuthorizer,
  sweep: Sweep,
): Promise<Awaited<ReturnType<typeof connectWith>>> {
  return connectWith(url, authorization, sweep.watch([]));
}

/** Our protected server (tools whoami and admin, the latter needing mcp:admin) with every request needing mcp:tools. */
export async function protectedServer(issuer: string, verifier: TokenVerifier, sweep: Sweep): Promise<ProtectedServer> {
  const server = await startProtectedServer(issuer, sweep.recording(verifier), {
    requiredScopes: ["mcp:tools"],
    scopesSupported: ["mcp:tools", "mcp:admin"],
  });
  sweep.watch(server.errors);
  return server;
}

/** The text of a tool result's first content item. */
export function textOf(result: { content?: unknown }): string {
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  return first?.type === "text" ? (first.text ?? "") : "";
}
