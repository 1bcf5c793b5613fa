// InMemoryTransport: asynchronous in-order delivery, delivery confirmation (ondelivered), and what a close loses.
import { describe, expect, it } from "vitest";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import { settle } from "../kit/timing.js";

const ping = (id: number) => ({ jsonrpc: "2.0" as const, id, method: "ping" });

describe("InMemoryTransport", () => {
  it("delivers on a microtask, in order, and confirms delivery after the peer's onmessage ran", async () => {
    const [a, b] = createInMemoryPair();
    const events: string[] = [];
    b.onmessage = (m) => events.push(`got ${(m as { id: number }).id}`);
    await a.start();
    await b.start();
    expect(a.confirmsDelivery).toBe(true);
    // Not awaited: awaiting a send would itself let the delivery microtask run.
    void a.send(ping(1));
    void a.send(ping(2), { ondelivered: () => events.push("delivered 2") });
    void a.send(ping(3));
    expect(events).toEqual([]);
    await Promise.resolve();
    expect(events).toEqual(["got 1", "got 2", "delivered 2", "got 3"]);
  });

  it("never confirms a message the close dropped before the peer received it", async () => {
    const [a, b] = createInMemoryPair();
    const events: string[] = [];
    b.onmessage = (m) => events.push(`got ${(m as { id: number }).id}`);
    await a.start();
    await b.start();
    void a.send(ping(1), { ondelivered: () => events.push("delivered 1") });
    void b.close(); // the receiving end goes away before its queue is drained
    await settle();
    expect(events).toEqual([]);
  });
});
