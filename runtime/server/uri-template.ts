// Matching resource URIs against RFC 6570 templates ({name} one segment, {+name} any text) in time linear in the URI.

/** A compiled template; `match` returns the variables, or undefined when the URI does not fit. */
export interface UriTemplateMatcher {
  readonly template: string;
  readonly variables: readonly string[];
  match(uri: string): { [name: string]: string } | undefined;
}

/**
 * What one match cost, in characters looked at (each loop over the URI adds its length): the tests hold it to a
 * small multiple of the URI's length without timing anything.
 * @internal
 */
export interface MatchWork {
  steps: number;
}

const EXPRESSION = /\{([+]?)([A-Za-z0-9_.%]+(?:,[A-Za-z0-9_.%]+)*)\}/g;

/** A literal stretch of the template, with its KMP failure table so finding all its occurrences is one pass. */
interface Literal {
  readonly text: string;
  readonly failure: Int32Array;
}

/** One variable and the literal that follows it (empty between adjacent variables or at the end). */
interface Variable {
  readonly name: string;
  /** {+name}: anything but a line break; {name}: anything but `/ ? # ,`. */
  readonly reserved: boolean;
  readonly after: Literal;
}

function literal(text: string): Literal {
  // failure[i]: length of the longest proper prefix of text[0..i] that is also its suffix.
  const failure = new Int32Array(text.length);
  for (let i = 1, k = 0; i < text.length; i++) {
    while (k > 0 && text.charCodeAt(i) !== text.charCodeAt(k)) k = failure[k - 1];
    if (text.charCodeAt(i) === text.charCodeAt(k)) k++;
    failure[i] = k;
  }
  return { text, failure };
}

/** The characters a {name} value stops at. */
function stopsSimple(c: number): boolean {
  return c === 0x2f || c === 0x3f || c === 0x23 || c === 0x2c; // / ? # ,
}

/** The characters a {+name} value stops at: line terminators, which these values never held (`.` in a RegExp). */
function stopsReserved(c: number): boolean {
  return c === 0x0a || c === 0x0d || c === 0x2028 || c === 0x2029;
}

function has(bits: Uint32Array, i: number): boolean {
  return (bits[i >>> 5] & (1 << (i & 31))) !== 0;
}

function set(bits: Uint32Array, i: number): void {
  bits[i >>> 5] |= 1 << (i & 31);
}

/**
 * A template compiled to its literal head and its variables, each followed by a literal. Where several splits fit
 * (`{name}.{ext}` on `a.b.c`), the first variable takes the most it can, then the second, and so on: the split a
 * backtracking RegExp `^head([^/?#,]*)\.([^/?#,]*)$` finds, so answers did not change when the matcher did.
 *
 * The match runs in two passes over the URI, a few scans per variable, so the work is linear in the URI's
 * length for a given template (a backtracking RegExp tries every split, quadratic on a URI of dots):
 * - right to left, for each variable from the last: the positions where it may end so that the rest of the
 *   template matches (`ends[i]`, one bit per position), found from where the next variable may start;
 * - left to right: each variable ends at the furthest such position its characters reach.
 * @internal
 */
export class CompiledUriTemplate implements UriTemplateMatcher {
  readonly variables: readonly string[];
  private readonly head: string;
  private readonly parts: readonly Variable[];

  constructor(readonly template: string) {
    const parts: Variable[] = [];
    let head: string | undefined;
    let last = 0;
    let expressions = 0;
    // Each literal is known once the next expression (or the end) is found: it belongs to the variable before it.
    const pending: { name: string; reserved: boolean }[] = [];
    const close = (text: string): void => {
      if (head === undefined) head = text;
      // Several names in one expression are comma-separated values: a "," literal between them.
      pending.forEach((v, i) => parts.push({ ...v, after: literal(i === pending.length - 1 ? text : ",") }));
      pending.length = 0;
    };
    for (const m of template.matchAll(EXPRESSION)) {
      expressions++;
      close(template.slice(last, m.index));
      const reserved = m[1] === "+";
      for (const name of m[2].split(",")) pending.push({ name, reserved });
      last = m.index! + m[0].length;
    }
    if (template.split("{").length - 1 !== expressions)
      throw new Error(`Unsupported URI template expression in ${template}`);
    close(template.slice(last));
    this.head = head!;
    this.parts = parts;
    this.variables = parts.map((v) => v.name);
  }

  match(uri: string, work?: MatchWork): { [name: string]: string } | undefined {
    const raw = this.split(uri, work ?? { steps: 0 });
    if (raw === undefined) return undefined;
    const out: { [name: string]: string } = {};
    for (let i = 0; i < raw.length; i++) {
      let value = raw[i];
      try {
        value = decodeURIComponent(value);
      } catch {
        // Not percent-encoded validly: keep it as written.
      }
      out[this.parts[i].name] = value;
    }
    return out;
  }

  /** The variables' raw values in template order, or undefined when the URI does not fit. */
  private split(uri: string, work: MatchWork): string[] | undefined {
    const parts = this.parts;
    const k = parts.length;
    const n = uri.length;
    if (k === 0) return uri === this.head ? [] : undefined;
    const tail = parts[k - 1].after.text;
    // Every value lies within [lo, hi]: after the head, before the last literal.
    const lo = this.head.length;
    const hi = n - tail.length;
    if (hi < lo || !uri.startsWith(this.head) || !uri.endsWith(tail)) return undefined;

    // Right to left. ends[i]: where variable i may end with the rest matching; starts: where it may begin.
    const words = (n >>> 5) + 1;
    const ends: Uint32Array[] = new Array<Uint32Array>(k);
    const lastEnd = new Int32Array(k);
    let starts = new Uint32Array(words);
    let lastStart = -1;
    for (let i = k - 1; i >= 0; i--) {
      const end = new Uint32Array(words);
      let top = -1;
      if (i === k - 1) {
        set(end, hi);
        top = hi;
      } else {
        // Variable i ends where its literal occurs and the next variable may start right after it.
        const { text, failure } = parts[i].after;
        const len = text.length;
        if (len === 0) {
          end.set(starts);
          top = lastStart;
        } else {
          // KMP over [lo, lastStart): every occurrence ending at a possible start of the next variable.
          for (let j = lo, m = 0; j < lastStart; j++) {
            const c = uri.charCodeAt(j);
            while (m > 0 && c !== text.charCodeAt(m)) m = failure[m - 1];
            if (c === text.charCodeAt(m)) m++;
            if (m === len) {
              m = failure[m - 1];
              if (has(starts, j + 1)) {
                set(end, j + 1 - len);
                top = j + 1 - len;
              }
            }
          }
          work.steps += Math.max(0, lastStart - lo);
        }
      }
      if (top < lo) return undefined;
      ends[i] = end;
      lastEnd[i] = top;
      // Variable i may start at x when an end lies at or after x with no stop character between.
      const stops = parts[i].reserved ? stopsReserved : stopsSimple;
      starts = new Uint32Array(words);
      lastStart = -1;
      let reach = false;
      for (let x = top; x >= lo; x--) {
        if (x < top && stops(uri.charCodeAt(x))) reach = false;
        if (has(end, x)) reach = true;
        if (reach) {
          set(starts, x);
          if (lastStart < 0) lastStart = x;
        }
      }
      work.steps += top - lo + 1;
      if (lastStart < 0) return undefined;
    }
    if (!has(starts, lo)) return undefined;

    // Left to right: each variable runs as far as its characters allow, then back to the last end that fits.
    const values: string[] = new Array<string>(k);
    let x = lo;
    for (let i = 0; i < k; i++) {
      const stops = parts[i].reserved ? stopsReserved : stopsSimple;
      const end = ends[i];
      const limit = lastEnd[i];
      let reachable = x;
      while (reachable < limit && !stops(uri.charCodeAt(reachable))) reachable++;
      let q = reachable;
      while (!has(end, q)) q--;
      work.steps += 2 * reachable - x - q + 1;
      values[i] = uri.slice(x, q);
      x = q + parts[i].after.text.length;
    }
    return values;
  }
}

/** @internal */
export function compileUriTemplate(template: string): CompiledUriTemplate {
  return new CompiledUriTemplate(template);
}
