// SEP-2352: registrations and tokens belong to the issuer that made them; when a server's metadata moves to another authorization server, the client registers there anew.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileOAuthStore, InMemoryOAuthStore, type OAuthStore } from "../../../runtime/auth/index.js";
import { startAuthorizationServer, type AuthorizationServer } from "../oidc/helpers.js";
import { closeAfterEach } from "../../kit/cleanup.js";
import { tempDir } from "../../kit/paths.js";
import { connectWith } from "./helpers.js";
import { startResource } from "./oidc-resource.js";
import { jsonOf, recordingFetch, userClient, type Exchange } from "./oidc-helpers.js";

let a: AuthorizationServer;
let b: AuthorizationServer;
beforeAll(async () => {
  [a, b] = await Promise.all([startAuthorizationServer(), startAuthorizationServer()]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
});

const cleanup = closeAfterEach();

const STORES: [string, () => OAuthStore][] = [
  ["InMemoryOAuthStore", () => new InMemoryOAuthStore()],
  ["FileOAuthStore", () => new FileOAuthStore(join(tempDir("issuer-change"), "oauth.json"))],
];

describe.each(STORES)("with a %s", (_name, makeStore) => {
  it("a resource whose metadata switches from A to B: the client registers at B and never shows B anything of A's", async () => {
    let current = a.issuer;
    // The resource trusts only the issuer its metadata names now: A's tokens stop working when it moves to B.
    const rs = await startResource({ authorizationServers: () => [current] });
    cleanup(() => rs.stop());
    const log: Exchange[] = [];
    const store = makeStore();
    // The user is sent to whichever server the client chose; the harness plays the user at that one.
    const approvals: URL[] = [];
    const { oauth } = userClient(
      {
        approve: (url, approval) => {
          approvals.push(new URL(url));
          return (new URL(url).origin === new URL(b.issuer).origin ? b : a).approve(url, approval);
        },
      },
      { store, fetch: recordingFetch(log) },
    );

    const client = await connectWith(rs.url, oauth);
    cleanup(() => client.peer.close());
    expect(await jsonOf(await client.callTool({ name: "whoami", arguments: {} }))).toMatchObject({ iss: a.issuer });
    const atA = (await store.getClient(a.issuer))!;
    expect(atA.client_id).toBeTruthy();
    expect((await store.getTokens(rs.url))!.issuer).toBe(a.issuer);

    current = b.issuer;
    expect(await jsonOf(await client.callTool({ name: "whoami", arguments: {} }))).toMatchObject({ iss: b.issuer });

    // A registration at B, a client of its own there, A's kept for A.
    const atB = (await store.getClient(b.issuer))!;
    expect(atB.client_id).toBeTruthy();
    expect(atB.client_id).not.toBe(atA.client_id);
    expect((await store.getClient(a.issuer))!.client_id).toBe(atA.client_id);
    expect((await b.events()).filter((e) => e.event === "registration").map((e) => e.clientId)).toContain(
      atB.client_id,
    );
    // Nothing that reached B carried A's client id or any of A's tokens, and B saw nothing of A's client.
    const stored = (await store.getTokens(rs.url))!;
    expect(stored.issuer).toBe(b.issuer);
    const fromA = log.filter((e) => e.url === `${a.issuer}/token` && e.status === 200);
    const aTokens = fromA.flatMap((e) => {
      const body = JSON.parse(e.responseBody) as { access_token: string; refresh_token?: string };
      return [body.access_token, body.refresh_token ?? []].flat();
    });
    expect(aTokens.length).toBeGreaterThan(0);
    const toB = log.filter((e) => new URL(e.url).origin === new URL(b.issuer).origin);
    expect(toB.some((e) => e.method === "POST" && e.url.endsWith("/reg"))).toBe(true);
    for (const exchange of toB) {
      const sent = `${exchange.url} ${JSON.stringify(exchange.headers)} ${exchange.body}`;
      expect(sent).not.toContain(atA.client_id);
      for (const token of aTokens) expect(sent).not.toContain(token);
    }
    const toBUser = approvals.filter((url) => url.origin === new URL(b.issuer).origin);
    expect(toBUser.map((url) => url.searchParams.get("client_id"))).toEqual([atB.client_id]);
    expect((await b.events()).some((e) => e.clientId === atA.client_id)).toBe(false);
  });
});
