// unifiedDiff: hunks in `diff -u` form that turn the old text into the new, bounded output, long lines clipped where they differ.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { unifiedDiff } from "../../generator/unified-diff.js";

/** Applies a diff made with maxLines 0 to `old`, checking each hunk header against the lines it covers. */
function apply(old: string, diff: string): string {
  const lines = old.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const out: string[] = [];
  let at = 0;
  const body = diff.split("\n");
  for (let k = 0; k < body.length;) {
    const h = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$/.exec(body[k]!);
    if (!h) throw new Error(`not a hunk header: ${body[k]}`);
    const oldCount = h[2] === undefined ? 1 : Number(h[2]);
    const newCount = h[4] === undefined ? 1 : Number(h[4]);
    const start = oldCount === 0 ? Number(h[1]) : Number(h[1]) - 1;
    while (at < start) out.push(lines[at++]!);
    let seenOld = 0;
    let seenNew = 0;
    for (k++; k < body.length && !body[k]!.startsWith("@@"); k++) {
      const [op, text] = [body[k]![0], body[k]!.slice(1)];
      if (op === " " || op === "-") {
        expect(lines[at], `line ${at + 1}`).toBe(text);
        at++;
        seenOld++;
      }
      if (op === " " || op === "+") {
        out.push(text);
        seenNew++;
      }
    }
    expect([seenOld, seenNew]).toEqual([oldCount, newCount]);
  }
  while (at < lines.length) out.push(lines[at++]!);
  return out.map((l) => `${l}\n`).join("");
}

const text = (...lines: string[]) => lines.map((l) => `${l}\n`).join("");

describe("unifiedDiff", () => {
  it("is empty for equal texts", () => {
    expect(unifiedDiff("a\nb\n", "a\nb\n")).toBe("");
  });

  it.each([
    {
      name: "a line changed in the middle",
      old: text("1", "2", "3", "4", "5", "6", "7", "8"),
      new: text("1", "2", "3", "4x", "5", "6", "7", "8"),
      diff: "@@ -1,7 +1,7 @@\n 1\n 2\n 3\n-4\n+4x\n 5\n 6\n 7",
    },
    {
      name: "a line added at the top",
      old: text("a", "b"),
      new: text("new", "a", "b"),
      diff: "@@ -1,2 +1,3 @@\n+new\n a\n b",
    },
    {
      name: "a line removed at the end",
      old: text("a", "b", "c"),
      new: text("a", "b"),
      diff: "@@ -1,3 +1,2 @@\n a\n b\n-c",
    },
    { name: "into an empty text", old: "", new: text("a"), diff: "@@ -0,0 +1 @@\n+a" },
    { name: "to an empty text", old: text("a", "b"), new: "", diff: "@@ -1,2 +0,0 @@\n-a\n-b" },
  ])("$name", ({ old, new: next, diff }) => {
    expect(unifiedDiff(old, next)).toBe(diff);
    expect(apply(old, diff)).toBe(next);
  });

  it("makes one hunk of changes whose context touches, and two of changes far apart", () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i}`);
    const near = lines.map((l, i) => (i === 10 || i === 15 ? `${l}!` : l));
    expect(unifiedDiff(text(...lines), text(...near)).match(/^@@/gm)).toHaveLength(1);
    const far = lines.map((l, i) => (i === 5 || i === 20 ? `${l}!` : l));
    expect(unifiedDiff(text(...lines), text(...far))).toMatch(/^@@ -3,7 \+3,7 @@\n[\s\S]*\n@@ -18,7 \+18,7 @@\n/);
  });

  it("says so when only the final newline or the line endings differ", () => {
    expect(unifiedDiff("a\nb", "a\nb\n")).toBe("(only the newline at the end of the file differs)");
    expect(unifiedDiff("a\r\nb\r\n", "a\nb\n")).toBe(
      "(only the line endings differ: CRLF on one side, LF on the other)",
    );
  });

  it("labels the two sides when asked", () => {
    expect(unifiedDiff("a\n", "b\n", { oldLabel: "x (on disk)", newLabel: "x (generated now)" })).toBe(
      "--- x (on disk)\n+++ x (generated now)\n@@ -1 +1 @@\n-a\n+b",
    );
  });

  it("prints at most maxLines body lines and counts the changed lines and hunks left out", () => {
    const lines = Array.from({ length: 200 }, (_, i) => `line ${i}`);
    const changed = lines.map((l, i) => (i % 20 === 0 ? `${l}!` : l));
    const diff = unifiedDiff(text(...lines), text(...changed), { maxLines: 12 });
    const body = diff.split("\n").filter((l) => /^[-+ ]/.test(l));
    expect(body).toHaveLength(12);
    const shown = body.filter((l) => /^[-+]/.test(l)).length;
    const [, rest, hunks] = /^\.\.\. (\d+) more changed lines \((\d+) more hunks\) not shown$/m.exec(diff)!;
    expect(shown + Number(rest)).toBe(20);
    expect(Number(hunks)).toBe(10 - diff.match(/^@@/gm)!.length);
  });

  it("clips a long changed line to a window around its first difference", () => {
    const long = "x".repeat(5000);
    const diff = unifiedDiff(text(`${long}A${long}`), text(`${long}B${long}`));
    const [minus, plus] = diff.split("\n").slice(1);
    expect(minus!.length).toBeLessThan(200);
    expect(minus).toMatch(/^-….*A.*… \(10001 chars\)$/);
    expect(plus).toMatch(/^\+….*B.*… \(10001 chars\)$/);
  });

  it("stays correct when a change is past maxEdits, matching on the lines unique to both sides", () => {
    // Every other line changed in a 20,000-line file: far past maxEdits, anchored on the unique lines.
    const lines = Array.from({ length: 20_000 }, (_, i) => (i % 2 ? `unique ${i}` : `repeated`));
    const changed = lines.map((l, i) => (i % 2 ? l : "changed"));
    const diff = unifiedDiff(text(...lines), text(...changed), { maxLines: 0, maxEdits: 100 });
    expect(apply(text(...lines), diff)).toBe(text(...changed));
    expect(diff.split("\n").filter((l) => /^[-+]/.test(l))).toHaveLength(20_000);
  });

  it("turns any text into any other (random edits)", () => {
    const line = fc.constantFrom("a", "b", "c", "d", "{", "}", "");
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 40 }),
        fc.array(line, { maxLength: 40 }),
        fc.integer({ min: 1, max: 8 }),
        (a, b, maxEdits) => {
          const old = text(...a);
          const next = text(...b);
          const diff = unifiedDiff(old, next, { maxLines: 0, maxEdits });
          expect(old === next ? next : apply(old, diff)).toBe(next);
        },
      ),
      { numRuns: 300 },
    );
  });
});
