// Errors the generator reports to the user: each names the file and where in it (JSON pointer or line:column).

export class SchemaError extends Error {
  readonly file: string;
  readonly where: string | undefined;
  constructor(file: string, message: string, where?: string) {
    super(message);
    this.name = "SchemaError";
    this.file = file;
    this.where = where;
  }
  /** One line for the terminal: `file#/pointer: message` or `file:line:col: message`. */
  format(): string {
    if (this.where === undefined) return `${this.file}: ${this.message}`;
    return this.where.startsWith("/") || this.where === ""
      ? `${this.file}#${this.where}: ${this.message}`
      : `${this.file}:${this.where}: ${this.message}`;
  }
}

/** Every problem one pass found (each bad sidecar entry, not just the first), one line each. */
export class SchemaErrors extends SchemaError {
  readonly errors: readonly SchemaError[];
  constructor(errors: readonly SchemaError[]) {
    const first = errors[0]!;
    super(first.file, errors.length === 1 ? first.message : `${errors.length} problems`, first.where);
    this.name = "SchemaErrors";
    this.errors = errors;
  }
  override format(): string {
    return this.errors.map((e) => e.format()).join("\n");
  }
}

/** Bad input that is not a file's content (an option, a command line, a server that cannot be reached): exit code 2. */
export class UsageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "UsageError";
  }
}
