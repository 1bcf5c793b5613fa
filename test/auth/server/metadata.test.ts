// RFC 9728 protected resource metadata: served at both well-known URLs by the node listener and the fetch handler, and how routes behave.
import { describe, expect, it } from "vitest";
import { introspectionVerifier, jwtVerifier, protectResource } from "../../../runtime/auth/server/index.js";
import { createStreamableHttpServer } from "../../../runtime/transports/http/server/server.js";
import { initializeMessage, makeResponder, post, postToHandler } from "../../http/helpers.js";
import { makeServer } from "../../server/helpers.js";
import { parseChallenge, useAuthServers } from "./helpers.js";

const env = useAuthServers((as) => jwtVerifier({ issuer: as.issuer }), {
  requiredScopes: ["mcp:tools"],
  metadata: { resource_name: "Test MCP server" },
});

describe("protected resource metadata, node listener", () => {
  it.each(["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"])(
    "GET %s: the document, without credentials",
    async (path) => {
      const res = await fetch(env.rs.origin + path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(await res.json()).toEqual({
        resource: env.rs.url,
        authorization_servers: [env.as.issuer],
        scopes_supported: ["mcp:tools"],
        bearer_methods_supported: ["header"],
        resource_name: "Test MCP server",
      });
    },
  );

  it("the 401 challenge points at the path-aware document, which a client can fetch", async () => {
    const res = await post(env.rs.url, initializeMessage());
    const url = parseChallenge(res.headers.get("www-authenticate")).resource_metadata!;
    expect(url).toBe(`${env.rs.origin}/.well-known/oauth-protected-resource/mcp`);
    expect(((await (await fetch(url)).json()) as { resource: string }).resource).toBe(env.rs.url);
  });

  it("other methods on a metadata path get 405; other paths still 404 (path is set)", async () => {
    const postIt = await fetch(`${env.rs.origin}/.well-known/oauth-protected-resource/mcp`, {
      method: "POST",
      body: "{}",
    });
    expect(postIt.status).toBe(405);
    expect(postIt.headers.get("allow")).toBe("GET");
    expect((await fetch(`${env.rs.origin}/.well-known/oauth-protected-resource/other`)).status).toBe(404);
  });

  it("the Host check applies to the documents as to the endpoint", async () => {
    const { request } = await import("node:http");
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${env.rs.origin}/.well-known/oauth-protected-resource`,
        { headers: { host: "evil.example" } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(403);
  });
});

describe("protected resource metadata, fetch handler", () => {
  const resource = protectResource({
    resource: "http://127.0.0.1/mcp",
    authorizationServers: ["https://env.as.example"],
    verifier: introspectionVerifier({
      endpoint: "https://env.as.example/introspect",
      clientId: "env.rs",
      clientSecret: "x",
    }),
    server: makeServer(),
  });
  const mcp = createStreamableHttpServer({ path: "/mcp", onSession: makeResponder().attach, ...resource.http });
  const get = (path: string) => mcp.fetch(new Request(`http://127.0.0.1${path}`, { headers: { host: "127.0.0.1" } }));

  it.each(["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"])(
    "GET %s",
    async (path) => {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        resource: "http://127.0.0.1/mcp",
        authorization_servers: ["https://env.as.example"],
        bearer_methods_supported: ["header"],
      });
    },
  );

  it("the endpoint answers 401 with the challenge", async () => {
    const res = await postToHandler((r) => mcp.fetch(r), initializeMessage());
    expect(res.status).toBe(401);
    expect(parseChallenge(res.headers.get("www-authenticate"))).toEqual({
      resource_metadata: "http://127.0.0.1/.well-known/oauth-protected-resource/mcp",
    });
  });
});

describe("resource URLs", () => {
  const make = (resource: string) =>
    protectResource({
      resource,
      authorizationServers: ["https://env.as.example"],
      verifier: jwtVerifier({ issuer: "https://env.as.example" }),
    });

  it("a resource at the origin has one document, at the root well-known URL; the URL is canonical", () => {
    const r = make("HTTPS://MCP.Example.com:443/");
    expect(r.metadata.resource).toBe("https://mcp.example.com");
    expect(r.metadataUrl).toBe("https://mcp.example.com/.well-known/oauth-protected-resource");
    expect(r.http.routes.map((route) => route.path)).toEqual(["/.well-known/oauth-protected-resource"]);
  });

  it.each([
    ["http://mcp.example.com/mcp", /https/],
    ["https://mcp.example.com/mcp#frag", /fragment/],
    ["https://mcp.example.com/mcp?tenant=1", /query/],
    ["mcp.example.com/mcp", /absolute URL/],
  ])("refuses %s", (resource, message) => {
    expect(() => make(resource)).toThrow(message);
  });

  it("http is fine on loopback; the metadata needs an authorization server", () => {
    expect(make("http://localhost:8080/mcp").metadata.resource).toBe("http://localhost:8080/mcp");
    expect(() =>
      protectResource({
        resource: "https://a.example/mcp",
        authorizationServers: [],
        verifier: jwtVerifier({ issuer: "https://env.as.example" }),
      }),
    ).toThrow(/at least one/);
  });

  it("a route on the endpoint's path, or two on one path, is a configuration error", () => {
    const onSession = makeResponder().attach;
    const route = { path: "/mcp", serve: () => ({ body: "" }) };
    expect(() => createStreamableHttpServer({ path: "/mcp", onSession, routes: [route] })).toThrow(/taken/);
    expect(() =>
      createStreamableHttpServer({
        onSession,
        routes: [
          { ...route, path: "/x" },
          { ...route, path: "/x" },
        ],
      }),
    ).toThrow(/taken/);
    expect(() => createStreamableHttpServer({ onSession, routes: [{ ...route, path: "x" }] })).toThrow(
      /starting with \//,
    );
  });
});
