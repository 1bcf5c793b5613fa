// The contract between generated dispatch tables and the schema-agnostic session: one entry per method.

/** One problem found by a detailed validator, located by JSON pointer. */
export interface ValidationIssue {
  pointer: string;
  message: string;
}

export interface MethodSpec {
  readonly kind: "request" | "notification";
  /** Name of the params type in the generated types. */
  readonly paramsType: string;
  /** Name of the result type; requests only. */
  readonly resultType?: string;
  /** Fast guard over the `params` member of the message (undefined when the message has none). */
  readonly isParams: (params: unknown) => boolean;
  /** Detailed errors for params that failed `isParams`; empty when they are valid. */
  readonly explainParams: (params: unknown) => ValidationIssue[];
  /** Fast guard over a response's `result`; requests only. */
  readonly isResult?: (result: unknown) => boolean;
  readonly explainResult?: (result: unknown) => ValidationIssue[];
}

/** Method name to its spec, for one direction of traffic. */
export type DispatchTable = { readonly [method: string]: MethodSpec };
