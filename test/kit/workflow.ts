// The steps of a GitHub Actions workflow file, read well enough to run its `run:` steps outside GitHub.
/*
 * Reads the subset of YAML that workflow files in this repository's docs are written in: block mappings, the
 * `steps:` list of each job, `run:` on one line or as a `|` block, and a step's `env:` mapping of plain scalars.
 * Anything else inside a step (with:, if:, id:) is kept as text. A file outside that subset throws, naming the line,
 * rather than being read wrong.
 */

export interface WorkflowStep {
  readonly job: string;
  readonly name?: string;
  readonly id?: string;
  readonly uses?: string;
  /** The shell script, as GitHub hands it to `bash -e`. */
  readonly run?: string;
  readonly env: Readonly<Record<string, string>>;
}

const indentOf = (line: string): number => line.length - line.trimStart().length;

/** A scalar as written: quotes removed from a quoted one. */
function scalar(text: string): string {
  const t = text.trim();
  if ((t.startsWith('"') && t.endsWith('"')) || (t.startsWith("'") && t.endsWith("'"))) return t.slice(1, -1);
  return t;
}

/** Every step of every job, in file order. */
export function workflowSteps(text: string): WorkflowStep[] {
  const lines = text.split("\n");
  const steps: WorkflowStep[] = [];
  let job: string | undefined;
  let jobIndent = -1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    if (/^jobs:\s*$/.test(line)) {
      jobIndent = -2;
      continue;
    }
    if (jobIndent === -2 || (jobIndent >= 0 && indentOf(line) === jobIndent)) {
      const name = /^(\s*)([\w-]+):\s*$/.exec(line);
      if (name) {
        jobIndent = name[1]!.length;
        job = name[2]!;
        continue;
      }
    }
    const item = /^(\s*)- (.*)$/.exec(line);
    if (job === undefined || item === null) continue;
    // A step: its first key on the dash's line, the rest indented to where that key starts.
    const keyIndent = item[1]!.length + 2;
    const fields: Record<string, string> = {};
    const env: Record<string, string> = {};
    let body = [`${" ".repeat(keyIndent)}${item[2]!}`];
    for (let j = i + 1; j < lines.length && (lines[j]!.trim() === "" || indentOf(lines[j]!) >= keyIndent); j++) {
      body.push(lines[j]!);
      i = j;
    }
    body = body.filter((l) => l.trim() !== "");
    for (let k = 0; k < body.length; k++) {
      const field = /^(\s*)([\w-]+):\s?(.*)$/.exec(body[k]!);
      if (field === null || field[1]!.length !== keyIndent) {
        throw new Error(`workflow line "${body[k]!.trim()}": not a key of the step`);
      }
      const [, , key, value] = field;
      const nested: string[] = [];
      while (k + 1 < body.length && indentOf(body[k + 1]!) > keyIndent) nested.push(body[++k]!);
      if (key === "run" && value!.trim() === "|") {
        const cut = Math.min(...nested.map(indentOf));
        fields.run = nested.map((l) => l.slice(cut)).join("\n") + "\n";
      } else if (key === "env") {
        for (const entry of nested) {
          const pair = /^\s*([\w-]+):\s*(.*)$/.exec(entry);
          if (pair === null) throw new Error(`workflow line "${entry.trim()}": not an env entry`);
          env[pair[1]!] = scalar(pair[2]!);
        }
      } else if (nested.length === 0) {
        fields[key!] = scalar(value!);
      }
    }
    steps.push({ job, name: fields.name, id: fields.id, uses: fields.uses, run: fields.run, env });
  }
  return steps;
}

/** The `${{ expression }}` a value holds, when the whole value is one; undefined for a plain value. */
export function expressionOf(value: string): string | undefined {
  return /^\$\{\{\s*(.+?)\s*\}\}$/.exec(value.trim())?.[1];
}
