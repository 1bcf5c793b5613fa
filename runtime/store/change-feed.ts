// Changes a server announces (a list changed, a resource updated) shared between the nodes that serve one endpoint.

/** One change, as every node hears it. */
export type ServerChange =
  | { readonly kind: "listChanged"; readonly category: "tools" | "prompts" | "resources" }
  | { readonly kind: "resourceUpdated"; readonly uri: string };

/**
 * Where a server publishes its changes and hears the other nodes' (`RedisOperationStore.changeFeed()`), so a
 * `subscriptions/listen` stream on one node is told of a change raised on another. A node does not hear its own.
 */
export interface ChangeFeed {
  publish(change: ServerChange): void;
  /** Returns the function that stops listening. */
  subscribe(listener: (change: ServerChange) => void): () => void;
}

/** @internal Whether a value heard on a feed is a change this runtime knows. */
export function isServerChange(value: unknown): value is ServerChange {
  if (typeof value !== "object" || value === null) return false;
  const change = value as { kind?: unknown; category?: unknown; uri?: unknown };
  if (change.kind === "resourceUpdated") return typeof change.uri === "string";
  return (
    change.kind === "listChanged" &&
    (change.category === "tools" || change.category === "prompts" || change.category === "resources")
  );
}
