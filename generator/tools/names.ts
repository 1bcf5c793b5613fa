// Method and type names for the tools of a catalogue: camelCase of the tool name, collisions settled by name order.
import { compareCodeUnits } from "../json.js";

/** `get-structured-content` -> `getStructuredContent`, `HTTP_fetch` -> `httpFetch`, `3d` -> `_3d`. */
export function camelCase(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter((w) => w !== "");
  if (words.length === 0) return "tool";
  const [first, ...rest] = words;
  const head = first === first!.toUpperCase() ? first!.toLowerCase() : first![0]!.toLowerCase() + first!.slice(1);
  const camel = head + rest.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
  return /^[0-9]/.test(camel) ? `_${camel}` : camel;
}

export function pascalCase(name: string): string {
  const camel = camelCase(name);
  return camel.startsWith("_") ? `T${camel}` : camel[0]!.toUpperCase() + camel.slice(1);
}

export interface ToolNaming {
  /** Tool name to method name. */
  methods: Map<string, string>;
  /** One line per collision: which tools wanted the same name and what each got. */
  collisions: string[];
  /** The tools whose method was wanted by another tool too. */
  collided: Set<string>;
}

/**
 * Each tool's method: camelCase of its name. Tools whose names make the same method are taken in code-unit order
 * of their names: the first keeps it, the next get `2`, `3`... (skipping names another tool has), so the result
 * depends only on the set of names.
 */
export function nameMethods(toolNames: readonly string[]): ToolNaming {
  const sorted = [...toolNames].sort(compareCodeUnits);
  const wanted = new Map<string, string[]>();
  for (const name of sorted) {
    const method = camelCase(name);
    wanted.set(method, [...(wanted.get(method) ?? []), name]);
  }
  const taken = new Set(wanted.keys());
  const methods = new Map<string, string>();
  const collisions: string[] = [];
  const collided = new Set<string>();
  for (const [method, names] of wanted) {
    methods.set(names[0]!, method);
    if (names.length === 1) continue;
    for (const name of names) collided.add(name);
    const given = [`${JSON.stringify(names[0])} is ${method}`];
    let n = 2;
    for (const name of names.slice(1)) {
      while (taken.has(`${method}${n}`)) n++;
      const alternative = `${method}${n}`;
      taken.add(alternative);
      methods.set(name, alternative);
      given.push(`${JSON.stringify(name)} is ${alternative}`);
    }
    collisions.push(`tools ${names.map((x) => JSON.stringify(x)).join(", ")} all make ${method}: ${given.join(", ")}`);
  }
  return { methods, collisions, collided };
}
