// The contract between generated dispatch tables and the schema-agnostic session: one entry per method.

/** One problem found by a detailed validator, located by JSON pointer. */
export interface ValidationIssue {
  pointer: string;
  message: string;
}

/**
 * What an explainer returns: the issues, or a promise of them when the detailed validators live in a module
 * loaded on demand (the generated tables do that, so bundles leave the validators out of their entry chunk).
 */
export type Explanation = ValidationIssue[] | PromiseLike<ValidationIssue[]>;

export interface MethodSpec {
  readonly kind: "request" | "notification";
  /** Name of the params type in the generated types. */
  readonly paramsType: string;
  /** Name of the result type; requests only. */
  readonly resultType?: string;
  /** Fast guard over the `params` member of the message (undefined when the message has none). */
  readonly isParams: (params: unknown) => boolean;
  /** Detailed errors for params that failed `isParams`; empty when they are valid. */
  readonly explainParams: (params: unknown) => Explanation;
  /** Fast guard over a response's `result`; requests only. */
  readonly isResult?: (result: unknown) => boolean;
  readonly explainResult?: (result: unknown) => Explanation;
  /**
   * The receiver's capability this method needs, as a dotted path into the capabilities it advertised ("tools",
   * "resources.subscribe"); absent when it needs none. The sender refuses the method locally without it.
   */
  readonly capability?: string;
  /**
   * Requests that can be task-augmented: the guard over the answer to one sent with a `task` in its params (the
   * schema's CreateTaskResult), since the receiver then answers with the task it created.
   */
  readonly isTaskResult?: (result: unknown) => boolean;
  readonly explainTaskResult?: (result: unknown) => Explanation;
  /** The receiver's capability that allows task augmentation of this request, as a dotted path. */
  readonly taskCapability?: string;
}

/** Method name to its spec, for one direction of traffic. */
export type DispatchTable = { readonly [method: string]: MethodSpec };
