// Splits the --server command line into words as a POSIX shell quotes them, without running a shell.
import { UsageError } from "../errors.js";

/**
 * Words of `line`: blanks separate them, single quotes keep everything literally, double quotes keep blanks and
 * let a backslash escape `"`, `\`, `$` and a backquote, and a backslash outside quotes escapes the next character.
 * Nothing is expanded (no variables, globs or pipes): the first word is the program, started directly.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === " " || c === "\t" || c === "\n") {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      continue;
    }
    inWord = true;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new UsageError(`--server: unterminated single quote in ${JSON.stringify(line)}`);
      word += line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === "\\" && j + 1 < line.length && '"\\$`'.includes(line[j + 1]!)) j++;
        word += line[j];
      }
      if (j >= line.length) throw new UsageError(`--server: unterminated double quote in ${JSON.stringify(line)}`);
      i = j;
    } else if (c === "\\") {
      if (i + 1 < line.length) word += line[++i];
    } else {
      word += c;
    }
  }
  if (inWord) words.push(word);
  if (words.length === 0) throw new UsageError("--server: the command line is empty");
  return words;
}
