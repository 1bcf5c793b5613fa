// Types of test/provision.mjs (a plain script, so that npm test can run it before anything is built).
export interface Program {
  /** The executable a test starts, looked up on PATH. */
  command: string;
  /** The Debian package that provides it. */
  debianPackage: string;
  /** Which tests start it, for the message when it is missing. */
  neededBy: string;
}

export interface Host {
  has(command: string): boolean;
  isRoot: boolean;
  isDebian: boolean;
}

export type Plan =
  | { action: "none"; missing: Program[] }
  | { action: "install"; missing: Program[]; commands: string[][] }
  | { action: "stop"; missing: Program[]; command: string; message: string };

export const programs: Program[];
export function findOnPath(command: string, pathValue: string | undefined): boolean;
export function plan(table: Program[], host: Host): Plan;
export function provision(
  table: Program[],
  host: Host,
  run: (argv: string[]) => number,
  log: (line: string) => void,
  options?: { dryRun?: boolean },
): number;
export function currentHost(env?: NodeJS.ProcessEnv): Host;
