// The Standard Schema v1 and Standard JSON Schema v1 interfaces (standardschema.dev), copied as the spec invites so no schema library is a dependency.

/** A schema of any library that implements Standard Schema v1 (zod 4, Valibot, ArkType...). */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": StandardSchemaProps<Input, Output>;
}

export interface StandardSchemaProps<Input = unknown, Output = Input> {
  readonly version: 1;
  readonly vendor: string;
  /** Validates an unknown value: the output value (defaults, transforms applied) or the issues. */
  readonly validate: (
    value: unknown,
    options?: StandardSchemaOptions | undefined,
  ) => StandardResult<Output> | Promise<StandardResult<Output>>;
  /** Carries the types only; never present at runtime. */
  readonly types?: StandardTypes<Input, Output> | undefined;
}

export interface StandardSchemaOptions {
  readonly libraryOptions?: Record<string, unknown> | undefined;
}

export type StandardResult<Output> = StandardSuccess<Output> | StandardFailure;

export interface StandardSuccess<Output> {
  readonly value: Output;
  readonly issues?: undefined;
}

export interface StandardFailure {
  readonly issues: ReadonlyArray<StandardIssue>;
}

export interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | StandardPathSegment> | undefined;
}

export interface StandardPathSegment {
  readonly key: PropertyKey;
}

export interface StandardTypes<Input = unknown, Output = Input> {
  readonly input: Input;
  readonly output: Output;
}

/** A schema that can describe itself as JSON Schema (Standard JSON Schema v1); recent zod 4 releases implement it. */
export interface StandardJsonSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": StandardJsonSchemaProps<Input, Output>;
}

export interface StandardJsonSchemaProps<Input = unknown, Output = Input> {
  readonly version: 1;
  readonly vendor: string;
  readonly types?: StandardTypes<Input, Output> | undefined;
  readonly jsonSchema: StandardJsonSchemaConverter;
}

export interface StandardJsonSchemaConverter {
  /** The JSON Schema of the values the schema accepts. May throw when the schema has no JSON Schema form. */
  readonly input: (options: StandardJsonSchemaOptions) => Record<string, unknown>;
  /** The JSON Schema of the values validation gives back (defaults and transforms applied). */
  readonly output: (options: StandardJsonSchemaOptions) => Record<string, unknown>;
}

export interface StandardJsonSchemaOptions {
  /** "draft-2020-12" and "draft-07" are widely supported; a library throws for a target it does not support. */
  readonly target: "draft-2020-12" | "draft-07" | "openapi-3.0" | ({} & string);
  readonly libraryOptions?: Record<string, unknown> | undefined;
}

/** The type a Standard Schema accepts (what a client sends, what a handler returns). */
export type StandardInput<S extends StandardSchemaV1> = NonNullable<S["~standard"]["types"]>["input"];

/** The type a Standard Schema's validation gives back (what a handler receives). */
export type StandardOutput<S extends StandardSchemaV1> = NonNullable<S["~standard"]["types"]>["output"];
