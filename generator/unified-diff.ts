// Line diffs in unified format (the `diff -u` layout), bounded so a large change prints a summary, not the file.

/** One line of the edit script: kept, removed from the old text, or added by the new one. */
interface Edit {
  op: " " | "-" | "+";
  line: string;
  /** 0-based line numbers in the old and new text before this edit applies. */
  oldIndex: number;
  newIndex: number;
}

export interface UnifiedDiffOptions {
  /** Lines of context around each change; default 3, as `diff -u`. */
  context?: number;
  /** Most body lines (context and changes) printed per diff; the rest is counted. 0 prints every line. Default 40. */
  maxLines?: number;
  /** Most edit steps the line matcher looks for before it treats the changed region as replaced whole. Default 2000. */
  maxEdits?: number;
  /** Line number (0-based) of the texts' first line in their files, when they are a tail of them. Default 0. */
  firstLine?: number;
  /** Labels of the `---` and `+++` lines; both left out when undefined. */
  oldLabel?: string;
  newLabel?: string;
}

export const DEFAULT_DIFF_LINES = 40;

/** Splits text into lines; the newline that ends the last line does not make an empty line of its own. */
function linesOf(text: string): string[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/**
 * Myers' O(ND) shortest edit script between a and b. Past `maxEdits` steps (two unrelated texts) it gives up
 * and returns undefined: the cost grows with the square of the edits, and such a diff is not worth reading.
 */
function shortestEdits(a: string[], b: string[], maxEdits: number): Step[] | undefined {
  const n = a.length;
  const m = b.length;
  const limit = Math.min(n + m, maxEdits);
  const offset = limit + 1;
  const v = new Int32Array(2 * limit + 3);
  // trace[d] holds v[-d..d] after step d, enough to walk back from the end.
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= limit && found < 0; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) found = d;
    }
    trace.push(v.slice(offset - d, offset + d + 1));
  }
  if (found < 0) return undefined;
  const script: Step[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const prev = trace[d - 1]!;
    const at = (k: number): number => prev[k + d - 1]!;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > (down ? prevX : prevX + 1) && y > (down ? prevY + 1 : prevY)) {
      script.push("=");
      x--;
      y--;
    }
    script.push(down ? "+" : "-");
    if (down) y--;
    else x--;
  }
  while (x > 0 && y > 0) {
    script.push("=");
    x--;
    y--;
  }
  return script.reverse();
}

type Step = "=" | "-" | "+";

/**
 * The longest increasing run of `pairs` by their second index (patience sorting): the unique common lines
 * that can all be kept, in order.
 */
function longestIncreasing(pairs: [number, number][]): [number, number][] {
  const tops: number[] = []; // tops[k]: index into pairs of the smallest tail of a run of length k + 1
  const back: number[] = new Array(pairs.length);
  pairs.forEach(([, j], p) => {
    let lo = 0;
    let hi = tops.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pairs[tops[mid]!]![1] < j) lo = mid + 1;
      else hi = mid;
    }
    back[p] = lo > 0 ? tops[lo - 1]! : -1;
    tops[lo] = p;
  });
  const run: [number, number][] = [];
  for (let p = tops.length ? tops[tops.length - 1]! : -1; p >= 0; p = back[p]!) run.push(pairs[p]!);
  return run.reverse();
}

/**
 * Patience diff: lines that occur once in each text anchor the match, and the stretches between anchors go
 * to Myers. Anchoring first keeps Myers' cost to the small gaps, however large the files or the change.
 */
function diffRange(a: string[], b: string[], maxEdits: number): Step[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const out: Step[] = new Array<Step>(head).fill("=");

  const counts = new Map<string, { a: number; b: number; i: number; j: number }>();
  midA.forEach((line, i) => {
    const c = counts.get(line) ?? { a: 0, b: 0, i, j: -1 };
    c.a++;
    counts.set(line, c);
  });
  midB.forEach((line, j) => {
    const c = counts.get(line);
    if (c) {
      c.b++;
      c.j = j;
    }
  });
  const unique: [number, number][] = [];
  for (const c of counts.values()) if (c.a === 1 && c.b === 1) unique.push([c.i, c.j]);
  unique.sort((x, y) => x[0] - y[0]);
  const anchors = longestIncreasing(unique);

  if (anchors.length === 0) {
    out.push(...(shortestEdits(midA, midB, maxEdits) ?? [...midA.map((): Step => "-"), ...midB.map((): Step => "+")]));
  } else {
    let i = 0;
    let j = 0;
    for (const [ai, bj] of [...anchors, [midA.length, midB.length] as [number, number]]) {
      out.push(...diffRange(midA.slice(i, ai), midB.slice(j, bj), maxEdits));
      if (ai < midA.length) out.push("=");
      i = ai + 1;
      j = bj + 1;
    }
  }
  for (let t = 0; t < tail; t++) out.push("=");
  return out;
}

/** The edit script of two texts, with the line numbers each step stands at. */
function edits(oldLines: string[], newLines: string[], maxEdits: number): Edit[] {
  const out: Edit[] = [];
  let i = 0;
  let j = 0;
  for (const step of diffRange(oldLines, newLines, maxEdits)) {
    if (step === "=") out.push({ op: " ", line: oldLines[i]!, oldIndex: i++, newIndex: j++ });
    else if (step === "-") out.push({ op: "-", line: oldLines[i]!, oldIndex: i++, newIndex: j });
    else out.push({ op: "+", line: newLines[j]!, oldIndex: i, newIndex: j++ });
  }
  return out;
}

const CLIP = 160;

/** A long line cut to a window that starts a little before `column` (where it differs from its counterpart). */
function clip(line: string, column = 0): string {
  if (line.length <= CLIP) return line;
  const start = Math.max(0, Math.min(column - 40, line.length - CLIP));
  return `${start > 0 ? "…" : ""}${line.slice(start, start + CLIP)}${start + CLIP < line.length ? "…" : ""} (${line.length} chars)`;
}

function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** `@@ -start,count +start,count @@`, where an empty side names the line before it, as diff -u does. */
function hunkHeader(oldStart: number, oldCount: number, newStart: number, newCount: number): string {
  const side = (start: number, count: number) =>
    count === 1 ? `${start + 1}` : `${count === 0 ? start : start + 1},${count}`;
  return `@@ -${side(oldStart, oldCount)} +${side(newStart, newCount)} @@`;
}

/** A unified diff from `oldText` to `newText`, at most `maxLines` body lines, with a count of what was left out. */
export function unifiedDiff(oldText: string, newText: string, options: UnifiedDiffOptions = {}): string {
  if (oldText === newText) return "";
  const lf = (t: string) => t.replace(/\r\n/g, "\n");
  const labels = [
    ...(options.oldLabel === undefined ? [] : [`--- ${options.oldLabel}`]),
    ...(options.newLabel === undefined ? [] : [`+++ ${options.newLabel}`]),
  ];
  // Same lines, different bytes: a checkout that turned LF into CRLF would otherwise show every line changed.
  if (lf(oldText) === lf(newText))
    return [...labels, "(only the line endings differ: CRLF on one side, LF on the other)"].join("\n");
  const context = options.context ?? 3;
  const maxLines = options.maxLines ?? DEFAULT_DIFF_LINES;
  const oldLines = linesOf(oldText);
  const newLines = linesOf(newText);
  const script = edits(oldLines, newLines, options.maxEdits ?? 2000);
  const changes = script.flatMap((e, i) => (e.op === " " ? [] : [i]));
  const out: string[] = [...labels];
  if (changes.length === 0) {
    out.push("(only the newline at the end of the file differs)");
    return out.join("\n");
  }

  // Group changes whose context windows touch into hunks.
  const hunks: [number, number][] = [];
  for (const i of changes) {
    const last = hunks.at(-1);
    if (last && i - last[1] <= 2 * context) last[1] = i;
    else hunks.push([i, i]);
  }
  // Pair the n-th removed line of a run of changes with its n-th added line, to clip both around where they differ.
  const partner: (string | undefined)[] = new Array(script.length);
  for (let i = 0; i < script.length;) {
    if (script[i]!.op === " ") {
      i++;
      continue;
    }
    const minus: number[] = [];
    const plus: number[] = [];
    for (; i < script.length && script[i]!.op !== " "; i++) (script[i]!.op === "-" ? minus : plus).push(i);
    for (let p = 0; p < Math.min(minus.length, plus.length); p++) {
      partner[minus[p]!] = script[plus[p]!]!.line;
      partner[plus[p]!] = script[minus[p]!]!.line;
    }
  }
  let printed = 0;
  let hidden = 0;
  let hiddenHunks = 0;
  for (const [first, last] of hunks) {
    const from = Math.max(0, first - context);
    const to = Math.min(script.length - 1, last + context);
    if (maxLines > 0 && printed >= maxLines) {
      for (let i = from; i <= to; i++) if (script[i]!.op !== " ") hidden++;
      hiddenHunks++;
      continue;
    }
    let oldCount = 0;
    let newCount = 0;
    for (let i = from; i <= to; i++) {
      if (script[i]!.op !== "+") oldCount++;
      if (script[i]!.op !== "-") newCount++;
    }
    const offset = options.firstLine ?? 0;
    out.push(hunkHeader(offset + script[from]!.oldIndex, oldCount, offset + script[from]!.newIndex, newCount));
    for (let i = from; i <= to; i++) {
      const e = script[i]!;
      if (maxLines > 0 && printed >= maxLines) {
        if (e.op !== " ") hidden++;
        continue;
      }
      const other = partner[i];
      out.push(`${e.op}${clip(e.line, other === undefined ? 0 : firstDifference(e.line, other))}`);
      printed++;
    }
  }
  if (hidden > 0)
    out.push(
      `... ${hidden} more changed line${hidden === 1 ? "" : "s"}${hiddenHunks > 0 ? ` (${hiddenHunks} more hunk${hiddenHunks === 1 ? "" : "s"})` : ""} not shown`,
    );
  return out.join("\n");
}
