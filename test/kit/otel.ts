// OpenTelemetry for the tracing tests: an AsyncLocalStorage context manager (Node 20), and a provider exporting to memory.
import { AsyncLocalStorage } from "node:async_hooks";
import * as otel from "@opentelemetry/api";
import type { Context, ContextManager } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";

/** The active context follows async work through AsyncLocalStorage, as @opentelemetry/context-async-hooks does. */
class StorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? otel.ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(context, () => fn.call(thisArg, ...args) as ReturnType<F>);
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== "function") return target;
    const fn = target as unknown as (...args: unknown[]) => unknown;
    return ((...args: unknown[]) => this.with(context, () => fn(...args))) as unknown as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}

export interface Tracing {
  readonly exporter: InMemorySpanExporter;
  /** The spans ended so far. */
  spans(): ReadableSpan[];
  /** The one ended span named `name` (fails when there are none or several). */
  span(name: string): ReadableSpan;
}

let installed: Tracing | undefined;

/**
 * Registers (once per test file's process) the global context manager and a tracer provider that keeps every ended
 * span in memory; `exporter.reset()` between tests.
 */
export function inMemoryTracing(): Tracing {
  if (installed !== undefined) return installed;
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  otel.context.setGlobalContextManager(new StorageContextManager());
  otel.trace.setGlobalTracerProvider(provider);
  installed = {
    exporter,
    spans: () => exporter.getFinishedSpans(),
    span(name) {
      const found = exporter.getFinishedSpans().filter((s) => s.name === name);
      if (found.length !== 1)
        throw new Error(
          `expected one span named ${JSON.stringify(name)}, found ${found.length} among ${exporter
            .getFinishedSpans()
            .map((s) => s.name)
            .join(", ")}`,
        );
      return found[0]!;
    },
  };
  return installed;
}

/** The id of a span's parent (sdk-trace-base 2 keeps it in parentSpanContext). */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}
