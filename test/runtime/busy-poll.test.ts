// BusyPoller: polls after a send only with two or more cores, counts replies caught while polling, backs off after an expired window.
import { describe, expect, it } from "vitest";
import { BusyPoller } from "../../runtime/transports/stdio/busy-poll.js";
import { sleep } from "../kit/timing.js";

// Past a window of `micros` microseconds, with a few milliseconds to spare.
const afterMicros = (micros: number) => sleep(Math.ceil(micros / 1000) + 5);

describe("BusyPoller", () => {
  it("is off on one core and when the window is 0", async () => {
    for (const poller of [new BusyPoller(100, 1), new BusyPoller(0, 8)]) {
      expect(poller.enabled).toBe(false);
      poller.sent();
      poller.arrived();
      await afterMicros(200);
      expect([poller.hits, poller.misses]).toEqual([0, 0]);
    }
  });

  it("counts a reply that arrives inside the window as a hit, and keeps polling while the loop has nothing else to do", async () => {
    const poller = new BusyPoller(50_000, 2);
    let ticks = 0;
    poller.sent();
    // While the poller holds an immediate, the loop does not block: a chain of immediates of ours keeps running too.
    await new Promise<void>((resolve) => {
      const step = () => (++ticks < 20 ? setImmediate(step) : resolve());
      setImmediate(step);
    });
    poller.arrived();
    poller.arrived();
    await afterMicros(1_000);
    expect([poller.hits, poller.misses]).toEqual([1, 0]);
  });

  it("restarts the window on each arrival, so a message right behind the first is caught too", async () => {
    // Wide margins (a 200 ms window, checks 80 ms from its edges) so a loaded machine's late timers cannot flip it.
    const poller = new BusyPoller(200_000, 2);
    poller.sent();
    await sleep(100);
    poller.arrived(); // the window now ends 200 ms from here, not 200 ms from the send
    await sleep(120); // past the first window's end
    expect(poller.active).toBe(true);
    await sleep(300);
    expect(poller.active).toBe(false);
    // One window, something caught in it: one hit, and its expiry afterwards is not a miss.
    expect([poller.hits, poller.misses]).toEqual([1, 0]);
  });

  it("backs off after windows expire without a reply, and tries again after 32 sends", async () => {
    const poller = new BusyPoller(1_000, 2);
    for (let i = 1; i <= 4; i++) {
      poller.sent();
      await afterMicros(1_000);
      expect([poller.hits, poller.misses]).toEqual([0, i]);
    }
    // Backed off: these sends do not poll, so an arrival is not a hit and nothing expires.
    for (let i = 0; i < 31; i++) poller.sent();
    poller.arrived();
    await afterMicros(1_000);
    expect([poller.hits, poller.misses]).toEqual([0, 4]);
    poller.sent(); // the 32nd
    poller.arrived();
    await afterMicros(1_000);
    expect([poller.hits, poller.misses]).toEqual([1, 4]);
  });

  it("stops polling once stopped", async () => {
    const poller = new BusyPoller(1_000_000, 2);
    poller.sent();
    poller.stop();
    expect(poller.enabled).toBe(false);
    await afterMicros(1_000);
    poller.sent();
    poller.arrived();
    expect([poller.hits, poller.misses]).toEqual([0, 0]);
  });
});
