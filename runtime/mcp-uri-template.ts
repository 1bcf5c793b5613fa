// Matching resource URIs against RFC 6570 templates: simple {name} (one segment) and reserved {+name} (any text).

/** A compiled template; `match` returns the variables, or undefined when the URI does not fit. */
export interface UriTemplateMatcher {
  readonly template: string;
  readonly variables: readonly string[];
  match(uri: string): { [name: string]: string } | undefined;
}

const EXPRESSION = /\{([+]?)([A-Za-z0-9_.%]+(?:,[A-Za-z0-9_.%]+)*)\}/g;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** @internal */
export function compileUriTemplate(template: string): UriTemplateMatcher {
  const variables: string[] = [];
  let pattern = "^";
  let last = 0;
  let expressions = 0;
  for (const m of template.matchAll(EXPRESSION)) {
    expressions++;
    pattern += escapeRegExp(template.slice(last, m.index));
    const reserved = m[1] === "+";
    const names = m[2].split(",");
    // Several names in one simple expression are comma-separated values.
    pattern += names.map(() => (reserved ? "(.*)" : "([^/?#,]*)")).join(",");
    variables.push(...names);
    last = m.index! + m[0].length;
  }
  if (template.split("{").length - 1 !== expressions)
    throw new Error(`Unsupported URI template expression in ${template}`);
  pattern += escapeRegExp(template.slice(last)) + "$";
  const regexp = new RegExp(pattern);
  return {
    template,
    variables,
    match(uri: string) {
      const m = regexp.exec(uri);
      if (m === null) return undefined;
      const out: { [name: string]: string } = {};
      for (let i = 0; i < variables.length; i++) {
        const raw = m[i + 1];
        let value = raw;
        try {
          value = decodeURIComponent(raw);
        } catch {
          // Not percent-encoded validly: keep it as written.
        }
        out[variables[i]] = value;
      }
      return out;
    },
  };
}
