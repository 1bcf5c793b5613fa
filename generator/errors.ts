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
