// Resource-template matching: the same answers as the backtracking RegExp it replaced, in work linear in the URI.
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { compileUriTemplate, type MatchWork } from "../../runtime/server/uri-template.js";
import { connect, makeServer, type Connected } from "./helpers.js";

const open: Connected[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

/** The matcher as it was: the template compiled to a backtracking RegExp. Kept as the oracle for the new one. */
function regexpMatcher(template: string): (uri: string) => { [name: string]: string } | undefined {
  const expression = /\{([+]?)([A-Za-z0-9_.%]+(?:,[A-Za-z0-9_.%]+)*)\}/g;
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const variables: string[] = [];
  let pattern = "^";
  let last = 0;
  let expressions = 0;
  for (const m of template.matchAll(expression)) {
    expressions++;
    pattern += escape(template.slice(last, m.index));
    const names = m[2].split(",");
    pattern += names.map(() => (m[1] === "+" ? "(.*)" : "([^/?#,]*)")).join(",");
    variables.push(...names);
    last = m.index + m[0].length;
  }
  if (template.split("{").length - 1 !== expressions)
    throw new Error(`Unsupported URI template expression in ${template}`);
  const regexp = new RegExp(pattern + escape(template.slice(last)) + "$");
  return (uri) => {
    const m = regexp.exec(uri);
    if (m === null) return undefined;
    const out: { [name: string]: string } = {};
    variables.forEach((name, i) => {
      let value = m[i + 1];
      try {
        value = decodeURIComponent(value);
      } catch {
        // kept as written
      }
      out[name] = value;
    });
    return out;
  };
}

/** Characters that matter to matching: every stop character, line breaks, percent escapes, and plain text. */
const CHARS = ["a", "b", ".", "/", "?", "#", ",", "\n", "\r", "\u2028", "%", "2", "0", "{", "}", "+", "-"];
const text = (maxLength: number) => fc.array(fc.constantFrom(...CHARS), { maxLength }).map((chars) => chars.join(""));
const NAMES = ["a", "b", "x.y", "a"]; // "a" twice: a repeated name keeps the last value, as before
const expression = fc
  .tuple(fc.boolean(), fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }))
  .map(([reserved, names]) => `{${reserved ? "+" : ""}${names.join(",")}}`);
const template = fc
  .array(fc.oneof(text(3), expression), { maxLength: 6 })
  .map((pieces) => pieces.join(""))
  .filter((t) => {
    try {
      regexpMatcher(t);
      return true;
    } catch {
      return false;
    }
  });

/** A URI the template produces (so most of them match), with values drawn from the same characters. */
const expansion = (t: string) =>
  fc.array(text(5), { minLength: 20, maxLength: 20 }).map((values) =>
    t.replace(/\{\+?[^}]*\}/g, (e) =>
      e
        .split(",")
        .map(() => values.pop()!)
        .join(","),
    ),
  );

describe("URI template matching", () => {
  it("answers exactly as the backtracking RegExp did, on random templates and URIs", () => {
    const cases = template.chain((t) => fc.tuple(fc.constant(t), fc.oneof(text(20), expansion(t))));
    fc.assert(
      fc.property(cases, ([t, uri]) => {
        expect(compileUriTemplate(t).match(uri)).toEqual(regexpMatcher(t)(uri));
      }),
      { seed: 22_002, numRuns: 20_000 },
    );
  });

  it("refuses the template expressions it does not support, as before", () => {
    for (const t of ["x://{?q}", "x://{a", "x://{}", "x://{a b}", "x://{/path}"]) {
      expect(() => regexpMatcher(t)).toThrow();
      expect(() => compileUriTemplate(t)).toThrow(/Unsupported URI template expression/);
    }
  });

  it("lets the first variable take the most where several splits fit, and percent-decodes the values", () => {
    expect(compileUriTemplate("file:///{name}.{ext}").match("file:///a.b.c")).toEqual({ name: "a.b", ext: "c" });
    expect(compileUriTemplate("git://{+repo}/blob/{+path}").match("git://a/blob/b/blob/c")).toEqual({
      repo: "a/blob/b",
      path: "c",
    });
    const pair = compileUriTemplate("x://{a,b}/{+rest}");
    expect(pair.match("x://1,2/%20/x")).toEqual({ a: "1", b: "2", rest: " /x" });
    expect(pair.match("x://%2C,%zz/%")).toEqual({ a: ",", b: "%zz", rest: "%" });
    expect(compileUriTemplate("memo://notes/{id}").match("memo://notes/x/y")).toBeUndefined();
  });

  // Both URIs below took a backtracking RegExp quadratic time (78 KB of dots: about 7 s), failing only at the end.
  const dots = "file:///" + ".".repeat(80_000);
  const blobs = "git://" + "/blob/".repeat(13_000);

  it("answers the quadratic cases of the RegExp: 78 KB of dots, and /blob/ repeated", () => {
    const file = compileUriTemplate("file:///{name}.{ext}");
    expect(file.match(dots + "/")).toBeUndefined();
    expect(file.match(dots)).toEqual({ name: ".".repeat(79_999), ext: "" });
    const git = compileUriTemplate("git://{+repo}/blob/{+path}");
    expect(git.match(blobs + "\n")).toBeUndefined();
    expect(git.match(blobs + "x")).toEqual({ repo: "/blob/".repeat(12_999), path: "x" });
  });

  it("does work linear in the URI's length: at most a few scans per variable, the same per character at 10 KB and 1 MB", () => {
    // Per template, its worst URIs: one that fails only at its last character, one that matches.
    const cases: [string, (size: number) => string[]][] = [
      ["file:///{name}.{ext}", (n) => ["file:///" + ".".repeat(n) + "/", "file:///" + ".".repeat(n)]],
      [
        "git://{+repo}/blob/{+path}",
        (n) => ["git://" + "/blob/".repeat(n / 6) + "\n", "git://" + "/blob/".repeat(n / 6)],
      ],
      [
        "x://{a}.{b}.{c}.{d}/{+e}/{+f}/{g}.{h}",
        (n) => [
          "x://" + ".".repeat(n / 2) + "/".repeat(n / 2) + "a.b/",
          "x://" + ".".repeat(n / 2) + "/".repeat(n / 2) + "/a.b",
        ],
      ],
    ];
    for (const [t, uris] of cases) {
      const matcher = compileUriTemplate(t);
      // Each variable scans the URI a few times at most; nothing multiplies per character.
      const bound = 4 * (matcher.variables.length + 1);
      const perChar = (uri: string): number => {
        const work: MatchWork = { steps: 0 };
        matcher.match(uri, work);
        // Deciding needs a look at every character; the bound is what linear means here.
        expect(work.steps, `${t} on ${uri.length} characters`).toBeGreaterThanOrEqual(uri.length);
        expect(work.steps, `${t} on ${uri.length} characters`).toBeLessThanOrEqual(bound * uri.length);
        return work.steps / uri.length;
      };
      for (const i of [0, 1]) {
        const small = perChar(uris(12_000)[i]);
        const large = perChar(uris(1_200_000)[i]);
        expect(large, `${t}, URI ${i}: work per character, 1 MB against 10 KB`).toBeLessThanOrEqual(1.01 * small);
      }
    }
  });
});

describe("maxUriLength", () => {
  /** A server with a fixed resource and a template, and a client connected to it. */
  // resources/subscribe is a request of the handshake era.
  async function served(maxUriLength?: number): Promise<Connected> {
    const server = makeServer({ subscriptions: true, ...(maxUriLength === undefined ? {} : { maxUriLength }) });
    server.resource("memo://hello", { name: "hello" }, () => "hello");
    server.resourceTemplate("file:///{name}.{ext}", { name: "file" }, (_uri, { ext }) => `ext ${ext}`);
    const c = await connect(server, { era: "legacy" });
    open.push(c);
    return c;
  }
  const refused = (maxUriLength: number) => ({
    code: -32602,
    message: expect.stringContaining(`more than this server takes (maxUriLength ${maxUriLength})`),
    data: { maxUriLength },
  });

  it("refuses a resources/read URI over 8192 characters with -32602, and the session goes on", async () => {
    const { client } = await served();
    const atLimit = "file:///" + "a".repeat(8192 - "file:///".length - 2) + ".x";
    expect(await client.readResource({ uri: atLimit })).toEqual({ contents: [{ uri: atLimit, text: "ext x" }] });
    await expect(client.readResource({ uri: atLimit + "y" })).rejects.toMatchObject(refused(8192));
    const dots = "file:///" + ".".repeat(80_000) + "/";
    await expect(client.readResource({ uri: dots })).rejects.toMatchObject(refused(8192));
    expect(await client.readResource({ uri: "memo://hello" })).toEqual({
      contents: [{ uri: "memo://hello", text: "hello" }],
    });
  });

  it("refuses an over-long URI in resources/subscribe and unsubscribe the same way", async () => {
    const { client } = await served(100);
    const long = "memo://" + "x".repeat(94);
    await expect(client.subscribe({ uri: long })).rejects.toMatchObject(refused(100));
    await expect(client.unsubscribe({ uri: long })).rejects.toMatchObject(refused(100));
    expect(await client.subscribe({ uri: long.slice(0, 100) })).toEqual({});
    expect(await client.unsubscribe({ uri: long.slice(0, 100) })).toEqual({});
  });

  it("is configurable: a larger cap serves a long URI, Infinity none at all", async () => {
    const { client } = await served(100_000);
    const uri = "file:///" + ".".repeat(80_000);
    expect(await client.readResource({ uri })).toEqual({ contents: [{ uri, text: "ext " }] });
    const uncapped = await served(Infinity);
    const huge = "file:///" + "a".repeat(1 << 20) + ".md";
    expect(await uncapped.client.readResource({ uri: huge })).toEqual({ contents: [{ uri: huge, text: "ext md" }] });
  });

  it("is validated where the server is made", () => {
    for (const bad of [-1, 1.5, Number.NaN]) {
      expect(() => makeServer({ maxUriLength: bad })).toThrow(/maxUriLength must be a whole number/);
    }
  });
});
