// ListenSubscriptions (MCP 2026-07-28 client): one listen stream following the app's wants, re-listened without a gap, re-opened with backoff.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  ListenNotHonouredError,
  ListenSubscriptions,
  type ListenFilter,
  type ListenHost,
  type ListenOptions,
} from "../../runtime/eras/2026-07-28/client-subscriptions.js";
import { ConnectionClosedError, RequestCancelledError } from "../../runtime/rpc/errors.js";

/** One listen the fake host was asked for, and the server's side of it. */
interface Call {
  readonly filter: ListenFilter;
  readonly signal: AbortSignal;
  /** The server acknowledges, granting `granted` (default: all asked). */
  ack(granted?: unknown): void;
  /** The server ends the stream gracefully. */
  end(): void;
  /** The stream is lost (or refused). */
  drop(error?: Error): void;
}

/** A host recording every listen; like a real one, an aborted listen rejects. */
function fakeHost() {
  const calls: Call[] = [];
  const warnings: Error[] = [];
  const host: ListenHost = {
    listen(filter, { signal, onAcknowledged }) {
      return new Promise<void>((resolve, reject) => {
        calls.push({
          filter,
          signal,
          ack: (granted = filter) => onAcknowledged(granted as ListenFilter),
          end: () => resolve(),
          drop: (error = new Error("connection reset")) => reject(error),
        });
        signal.addEventListener("abort", () => reject(new Error("aborted by the client")), { once: true });
      });
    },
    warn: (error) => warnings.push(error),
  };
  const live = () => calls.filter((c) => !c.signal.aborted);
  return { host, calls, warnings, live };
}

/** Runs queued microtasks (and timers due now). */
const tick = () => vi.advanceTimersByTimeAsync(0);

/** random 0: every delay is half its base, so the schedule is exact. */
function setup(options: ListenOptions = {}) {
  const fake = fakeHost();
  const subs = new ListenSubscriptions(fake.host, { random: () => 0, ...options });
  return { ...fake, subs };
}

/** Settled state of a promise, without waiting for it. */
function track(promise: Promise<void>) {
  const state: { settled: "pending" | "resolved" | "rejected"; error?: unknown } = { settled: "pending" };
  promise.then(
    () => (state.settled = "resolved"),
    (error: unknown) => {
      state.settled = "rejected";
      state.error = error;
    },
  );
  return state;
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("ListenSubscriptions: what is listened for", () => {
  it("opens no stream while nothing is wanted", async () => {
    const { subs, calls } = setup();
    subs.setListChanged("tools", false);
    await subs.unsubscribe("file:///a");
    await tick();
    expect(calls).toHaveLength(0);
    expect(subs.acknowledged).toBeUndefined();
  });

  it("coalesces the changes of one tick into one listen, URIs sorted and unique", async () => {
    const { subs, calls } = setup();
    subs.setListChanged("tools", true);
    subs.setListChanged("resources", true);
    void subs.subscribe("file:///b");
    void subs.subscribe("file:///a");
    void subs.subscribe("file:///b");
    await tick();
    expect(calls.map((c) => c.filter)).toEqual([
      { toolsListChanged: true, resourcesListChanged: true, resourceSubscriptions: ["file:///a", "file:///b"] },
    ]);
  });

  it.each([
    { name: "URIs in either order", a: ["u:2", "u:1", "u:3"], b: ["u:3", "u:1", "u:2"] },
    { name: "a URI twice", a: ["u:1", "u:1"], b: ["u:1"] },
  ])("equal wants give equal filters: $name", async ({ a, b }) => {
    const filters: ListenFilter[] = [];
    for (const uris of [a, b]) {
      const { subs, calls } = setup();
      for (const uri of uris) void subs.subscribe(uri);
      await tick();
      filters.push(calls[0]!.filter);
    }
    expect(filters[0]).toEqual(filters[1]);
  });

  it("opens the new stream before aborting the old, and aborts the old once the new is acknowledged", async () => {
    const { subs, calls } = setup();
    subs.setListChanged("tools", true);
    await tick();
    calls[0]!.ack();
    expect(subs.acknowledged).toEqual({ toolsListChanged: true });

    subs.setListChanged("prompts", true);
    await tick();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.filter).toEqual({ toolsListChanged: true, promptsListChanged: true });
    expect(calls[0]!.signal.aborted).toBe(false);
    expect(subs.acknowledged).toEqual({ toolsListChanged: true });

    calls[1]!.ack();
    expect(calls[0]!.signal.aborted).toBe(true);
    expect(subs.acknowledged).toEqual({ toolsListChanged: true, promptsListChanged: true });
  });

  it("replaces a stream still unacknowledged, keeping the acknowledged one until the newest is", async () => {
    const { subs, calls } = setup();
    subs.setListChanged("tools", true);
    await tick();
    calls[0]!.ack();
    subs.setListChanged("prompts", true);
    await tick();
    subs.setListChanged("resources", true);
    await tick();
    expect(calls).toHaveLength(3);
    expect(calls[1]!.signal.aborted).toBe(true);
    expect(calls[0]!.signal.aborted).toBe(false);
    calls[2]!.ack();
    expect(calls[0]!.signal.aborted).toBe(true);
  });

  it("going back to the acknowledged filter drops the stream on its way and opens none", async () => {
    const { subs, calls } = setup();
    subs.setListChanged("tools", true);
    await tick();
    calls[0]!.ack();
    subs.setListChanged("prompts", true);
    await tick();
    subs.setListChanged("prompts", false);
    await tick();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.signal.aborted).toBe(true);
    expect(calls[0]!.signal.aborted).toBe(false);
  });

  it("closes the stream when nothing is wanted any more; our abort is no error and brings no re-listen", async () => {
    const { subs, calls, warnings, live } = setup();
    subs.setListChanged("tools", true);
    await tick();
    calls[0]!.ack();
    subs.setListChanged("tools", false);
    await tick();
    expect(calls[0]!.signal.aborted).toBe(true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(1);
    expect(live()).toHaveLength(0);
    expect(warnings).toEqual([]);
    expect(subs.acknowledged).toBeUndefined();
  });
});

describe("ListenSubscriptions: re-listening", () => {
  it("re-opens a stream the server ended gracefully, after the initial delay, without a warning", async () => {
    const { subs, calls, warnings } = setup();
    subs.setListChanged("tools", true);
    await tick();
    calls[0]!.ack();
    calls[0]!.end();
    await tick();
    expect(subs.acknowledged).toBeUndefined();
    await vi.advanceTimersByTimeAsync(249);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.filter).toEqual({ toolsListChanged: true });
    expect(warnings).toEqual([]);
  });

  it("re-opens a lost stream with growing, capped delays, and starts over after an acknowledgment", async () => {
    const { subs, calls, warnings } = setup({ initialDelayMs: 500, maxDelayMs: 3000, factor: 2 });
    subs.setListChanged("tools", true);
    await tick();
    calls[0]!.ack();
    const delays: number[] = [];
    const dropAndMeasure = async () => {
      const before = calls.length;
      calls.at(-1)!.drop();
      await tick();
      let waited = 0;
      while (calls.length === before) {
        await vi.advanceTimersByTimeAsync(1);
        waited++;
      }
      delays.push(waited);
    };
    for (let i = 0; i < 5; i++) await dropAndMeasure();
    calls.at(-1)!.ack();
    await dropAndMeasure();
    // Half of 500, 1000, 2000, 3000 (capped), 3000; then 500 again once acknowledged.
    expect(delays).toEqual([250, 500, 1000, 1500, 1500, 250]);
    expect(warnings).toHaveLength(6);
    expect(warnings[0]!.message).toMatch(/subscriptions\/listen was lost: connection reset; listening again in 250 ms/);
    expect(warnings[1]!.message).toMatch(/was refused or failed/);
    expect(calls.every((c) => c.filter.toolsListChanged === true)).toBe(true);
  });

  it.each([
    { random: 0, expected: 250 },
    { random: 0.5, expected: 375 },
    { random: 0.999, expected: 500 },
  ])("jitters the delay down to 50-100% (random $random: $expected ms)", async ({ random, expected }) => {
    const { subs, calls } = setup({ random: () => random });
    subs.setListChanged("tools", true);
    await tick();
    calls[0]!.drop();
    await vi.advanceTimersByTimeAsync(expected - 1);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
  });

  it("keeps serving the old stream when its replacement is refused, and retries the replacement", async () => {
    const { subs, calls, warnings } = setup();
    subs.setListChanged("tools", true);
    await tick();
    calls[0]!.ack();
    subs.setListChanged("prompts", true);
    await tick();
    calls[1]!.drop(new Error("refused"));
    await tick();
    expect(calls[0]!.signal.aborted).toBe(false);
    expect(subs.acknowledged).toEqual({ toolsListChanged: true });
    expect(warnings.map((w) => w.message)).toEqual([
      "subscriptions/listen was refused or failed: refused; listening again in 250 ms",
    ]);
    await vi.advanceTimersByTimeAsync(250);
    expect(calls).toHaveLength(3);
    expect(calls[2]!.filter).toEqual({ toolsListChanged: true, promptsListChanged: true });
    calls[2]!.ack();
    expect(calls[0]!.signal.aborted).toBe(true);
  });

  it("a change during the backoff waits for it, and the re-listen asks for the wants as they are then", async () => {
    const { subs, calls } = setup();
    subs.setListChanged("tools", true);
    await tick();
    calls[0]!.drop();
    await tick();
    subs.setListChanged("prompts", true);
    await tick();
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(250);
    expect(calls.map((c) => c.filter)).toEqual([
      { toolsListChanged: true },
      { toolsListChanged: true, promptsListChanged: true },
    ]);
  });

  it("treats a host that throws as a failed listen", async () => {
    const { host, calls, warnings } = fakeHost();
    let throws = true;
    const throwing: ListenHost = {
      listen: (filter, options) => {
        if (throws) {
          throws = false;
          throw new Error("not connected");
        }
        return host.listen(filter, options);
      },
      warn: host.warn,
    };
    const subs = new ListenSubscriptions(throwing, { random: () => 0 });
    subs.setListChanged("tools", true);
    await tick();
    expect(warnings[0]!.message).toContain("not connected");
    await vi.advanceTimersByTimeAsync(250);
    expect(calls).toHaveLength(1);
  });
});

describe("ListenSubscriptions: acknowledgments", () => {
  it("warns once per change when the server grants less than asked", async () => {
    const { subs, calls, warnings } = setup();
    subs.setListChanged("tools", true);
    void subs.subscribe("file:///a");
    await tick();
    calls[0]!.ack({ toolsListChanged: true });
    expect(subs.acknowledged).toEqual({ toolsListChanged: true });
    expect(warnings).toHaveLength(1);
    const warning = warnings[0]!;
    expect(warning).toBeInstanceOf(ListenNotHonouredError);
    expect((warning as ListenNotHonouredError).missing).toEqual(["resourceSubscriptions (file:///a)"]);

    // The same filter, listened again after a loss and granted the same: no second warning.
    calls[0]!.drop();
    await vi.advanceTimersByTimeAsync(250);
    calls[1]!.ack({ toolsListChanged: true });
    expect(warnings.filter((w) => w instanceof ListenNotHonouredError)).toHaveLength(1);

    // A change, granted partly again: a warning of its own.
    void subs.subscribe("file:///b");
    await tick();
    calls[2]!.ack({ toolsListChanged: true, resourceSubscriptions: ["file:///a"] });
    const partial = warnings.filter((w): w is ListenNotHonouredError => w instanceof ListenNotHonouredError);
    expect(partial).toHaveLength(2);
    expect(partial[1]!.missing).toEqual(["resourceSubscriptions (file:///b)"]);
  });

  it.each([
    { name: "not an object", ack: "everything", granted: {} },
    { name: "non-true flags", ack: { toolsListChanged: "yes", promptsListChanged: 1 }, granted: {} },
    {
      name: "non-string URIs",
      ack: { toolsListChanged: true, resourceSubscriptions: ["u:1", 7, null, "u:1"] },
      granted: { toolsListChanged: true, resourceSubscriptions: ["u:1"] },
    },
  ])("reads the acknowledgment with guards: $name", async ({ ack, granted }) => {
    const { subs, calls } = setup();
    subs.setListChanged("tools", true);
    void subs.subscribe("u:1");
    await tick();
    calls[0]!.ack(ack);
    expect(subs.acknowledged).toEqual(granted);
  });

  it("ignores a second acknowledgment of the same stream", async () => {
    const { subs, calls, warnings } = setup();
    subs.setListChanged("tools", true);
    await tick();
    calls[0]!.ack();
    calls[0]!.ack({});
    expect(subs.acknowledged).toEqual({ toolsListChanged: true });
    expect(warnings).toEqual([]);
  });
});

describe("ListenSubscriptions: subscribe and unsubscribe", () => {
  it("subscribe resolves once a listen including the URI is acknowledged, at once when one already is", async () => {
    const { subs, calls } = setup();
    const first = track(subs.subscribe("file:///a"));
    await tick();
    expect(first.settled).toBe("pending");
    calls[0]!.ack();
    await tick();
    expect(first.settled).toBe("resolved");
    const again = track(subs.subscribe("file:///a"));
    await tick();
    expect(again.settled).toBe("resolved");
    expect(calls).toHaveLength(1);
  });

  it("subscribe waits for the re-listen after a loss", async () => {
    const { subs, calls } = setup();
    void subs.subscribe("file:///a");
    await tick();
    calls[0]!.ack();
    calls[0]!.drop();
    await tick();
    const late = track(subs.subscribe("file:///a"));
    await vi.advanceTimersByTimeAsync(250);
    expect(late.settled).toBe("pending");
    calls[1]!.ack();
    await tick();
    expect(late.settled).toBe("resolved");
  });

  it("unsubscribe resolves once the listen without the URI is acknowledged", async () => {
    const { subs, calls } = setup();
    void subs.subscribe("file:///a");
    void subs.subscribe("file:///b");
    await tick();
    calls[0]!.ack();
    const gone = track(subs.unsubscribe("file:///a"));
    await tick();
    expect(calls[1]!.filter).toEqual({ resourceSubscriptions: ["file:///b"] });
    expect(gone.settled).toBe("pending");
    calls[1]!.ack();
    await tick();
    expect(gone.settled).toBe("resolved");
    expect(calls[0]!.signal.aborted).toBe(true);
  });

  it.each([
    { name: "the last URI (the stream closes)", subscribed: true },
    { name: "a URI never subscribed", subscribed: false },
  ])("unsubscribe resolves at once when nothing is wanted any more: $name", async ({ subscribed }) => {
    const { subs, calls, live } = setup();
    if (subscribed) {
      void subs.subscribe("file:///a");
      await tick();
      calls[0]!.ack();
    }
    const gone = track(subs.unsubscribe("file:///a"));
    await tick();
    expect(gone.settled).toBe("resolved");
    expect(live()).toHaveLength(0);
  });

  it("a subscribe undone before its acknowledgment rejects; an unsubscribe undone resolves", async () => {
    const { subs, calls } = setup();
    subs.setListChanged("tools", true);
    const sub = track(subs.subscribe("file:///a"));
    void subs.unsubscribe("file:///a");
    await tick();
    expect(sub.settled).toBe("rejected");
    expect(sub.error).toBeInstanceOf(RequestCancelledError);
    expect(calls.map((c) => c.filter)).toEqual([{ toolsListChanged: true }]);

    calls[0]!.ack();
    void subs.subscribe("file:///b");
    await tick();
    calls[1]!.ack();
    const unsub = track(subs.unsubscribe("file:///b"));
    void subs.subscribe("file:///b");
    await tick();
    expect(unsub.settled).toBe("resolved");
    expect(calls).toHaveLength(2);
  });

  it("refuses a subscription over maxResourceSubscriptions (one already held does not count again)", async () => {
    const { subs, calls } = setup({ maxResourceSubscriptions: 2 });
    void subs.subscribe("u:1");
    void subs.subscribe("u:2");
    const again = track(subs.subscribe("u:2"));
    const over = track(subs.subscribe("u:3"));
    await tick();
    expect(over.settled).toBe("rejected");
    expect(over.error).toBeInstanceOf(RangeError);
    expect(calls[0]!.filter).toEqual({ resourceSubscriptions: ["u:1", "u:2"] });
    calls[0]!.ack();
    await tick();
    expect(again.settled).toBe("resolved");
  });
});

describe("ListenSubscriptions: close", () => {
  it("aborts every stream, rejects pending subscribes, listens no more", async () => {
    const { subs, calls, warnings } = setup();
    void subs.subscribe("file:///a");
    await tick();
    calls[0]!.ack();
    const pending = track(subs.subscribe("file:///b"));
    await tick();
    const unsub = track(subs.unsubscribe("file:///a"));
    subs.close();
    await tick();
    expect(calls.every((c) => c.signal.aborted)).toBe(true);
    expect(pending.settled).toBe("rejected");
    expect(pending.error).toBeInstanceOf(ConnectionClosedError);
    expect(unsub.settled).toBe("resolved");
    expect(subs.acknowledged).toBeUndefined();

    const after = track(subs.subscribe("file:///c"));
    subs.setListChanged("tools", true);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(after.settled).toBe("rejected");
    expect(calls).toHaveLength(2);
    expect(warnings).toEqual([]);
  });

  it("cancels a re-listen waiting out its backoff", async () => {
    const { subs, calls } = setup();
    subs.setListChanged("tools", true);
    await tick();
    calls[0]!.drop();
    await tick();
    subs.close();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("ListenSubscriptions: options", () => {
  it.each([
    { options: { initialDelayMs: 0 }, message: /initialDelayMs/ },
    { options: { initialDelayMs: 1.5 }, message: /initialDelayMs/ },
    { options: { maxDelayMs: -1 }, message: /maxDelayMs/ },
    { options: { initialDelayMs: 1000, maxDelayMs: 999 }, message: /maxDelayMs must not be below/ },
    { options: { factor: 0.5 }, message: /factor/ },
    { options: { factor: Number.NaN }, message: /factor/ },
    { options: { maxResourceSubscriptions: -1 }, message: /maxResourceSubscriptions/ },
    { options: { maxResourceSubscriptions: 2.5 }, message: /maxResourceSubscriptions/ },
  ])("refuses $options", ({ options, message }) => {
    expect(() => new ListenSubscriptions(fakeHost().host, options)).toThrow(message);
  });

  it("accepts a fractional factor", async () => {
    const { subs, calls } = setup({ initialDelayMs: 1000, factor: 1.5 });
    subs.setListChanged("tools", true);
    await tick();
    calls[0]!.drop();
    await vi.advanceTimersByTimeAsync(500);
    calls[1]!.drop();
    await vi.advanceTimersByTimeAsync(749);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(3);
  });
});
