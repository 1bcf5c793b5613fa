// Lifecycle: initialize handshake, version negotiation, capability checks without wire traffic, ping.
import { describe, expect, it } from "vitest";
import { ErrorCode, type JsonObject } from "../../runtime/rpc/jsonrpc.js";
import {
  CapabilityError,
  ConnectionClosedError,
  ProtocolVersionError,
  RequestCancelledError,
} from "../../runtime/rpc/errors.js";
import {
  SUPPORTED_PROTOCOL_VERSIONS,
  ServerSession,
  hasCapability,
  negotiateProtocolVersion,
  requiredClientCapability,
  requiredServerCapability,
  type ServerSessionOptions,
} from "../../runtime/mcp/lifecycle.js";
import { ClientSession, type ClientSessionOptions } from "../../runtime/mcp/client-session.js";
import { createInMemoryPair } from "../../runtime/transports/in-memory.js";
import * as generated from "../../generated/dispatch.js";
import { clientToServer, serverToClient, tap } from "./helpers.js";
import { settle } from "../kit/timing.js";
import { serverSession, clientSession } from "./helpers.js";

const clientInfo = { name: "test-client", version: "1.0.0" };
const serverInfo = { name: "test-server", version: "2.0.0" };

async function handshake(server: Partial<ServerSessionOptions> = {}, client: Partial<ClientSessionOptions> = {}) {
  const [clientEnd, serverEnd] = createInMemoryPair();
  const clientWire = tap(clientEnd);
  const serverWire = tap(serverEnd);
  const s = serverSession({ serverInfo, ...server });
  const c = clientSession({ clientInfo, ...client });
  let initialized = 0;
  s.oninitialized = () => initialized++;
  await s.connect(serverEnd);
  await c.connect(clientEnd);
  await settle();
  return { s, c, clientWire, serverWire, initialized: () => initialized };
}

describe("initialize", () => {
  it("negotiates the latest version and exchanges capabilities, info and instructions", async () => {
    const { s, c, clientWire, initialized } = await handshake(
      { capabilities: { tools: { listChanged: true } }, instructions: "be nice" },
      { capabilities: { sampling: {} } },
    );
    expect(c.protocolVersion).toBe("2025-11-25");
    expect(s.protocolVersion).toBe("2025-11-25");
    expect(c.serverCapabilities).toEqual({ tools: { listChanged: true } });
    expect(c.serverInfo).toEqual(serverInfo);
    expect(c.instructions).toBe("be nice");
    expect(s.clientCapabilities).toEqual({ sampling: {} });
    expect(s.clientInfo).toEqual(clientInfo);
    expect(clientWire.map((m) => ("method" in m.message ? m.message.method : "?"))).toEqual([
      "initialize",
      "notifications/initialized",
    ]);
    expect((clientWire[0].message as { params: JsonObject }).params).toEqual({
      protocolVersion: "2025-11-25",
      capabilities: { sampling: {} },
      clientInfo,
    });
    expect(initialized()).toBe(1);
    expect(s.initialized).toBe(true);
  });

  it("the server answers an older supported version with that version", async () => {
    const { s, c } = await handshake({}, { supportedProtocolVersions: ["2024-11-05"] });
    expect(s.protocolVersion).toBe("2024-11-05");
    expect(c.protocolVersion).toBe("2024-11-05");
  });

  it("the server answers an unknown version with its latest; a client that cannot speak it fails and closes", async () => {
    const [clientEnd, serverEnd] = createInMemoryPair();
    const clientWire = tap(clientEnd);
    const s = new ServerSession({ inbound: clientToServer, serverInfo });
    const c = new ClientSession({ inbound: serverToClient, clientInfo, supportedProtocolVersions: ["1999-01-01"] });
    let serverClosed = false;
    s.onclose = () => (serverClosed = true);
    await s.connect(serverEnd);
    const error = await c.connect(clientEnd).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolVersionError);
    expect((error as ProtocolVersionError).version).toBe(SUPPORTED_PROTOCOL_VERSIONS[0]);
    expect(c.isOpen).toBe(false);
    await settle();
    expect(serverClosed).toBe(true);
    // No notifications/initialized after a failed negotiation.
    expect(clientWire.map((m) => ("method" in m.message ? m.message.method : "?"))).toEqual(["initialize"]);
  });

  it("a user handler for notifications/initialized does not displace the session's tracking; initialize cannot be overridden", async () => {
    const [clientEnd, serverEnd] = createInMemoryPair();
    const s = new ServerSession({ inbound: clientToServer, serverInfo });
    let userSaw = 0;
    let hook = 0;
    s.onNotification("notifications/initialized", () => void userSaw++);
    s.oninitialized = () => void hook++;
    expect(() => s.onRequest("initialize", () => ({}))).toThrow(/answers initialize itself/);
    const c = new ClientSession({ inbound: serverToClient, clientInfo });
    await s.connect(serverEnd);
    await c.connect(clientEnd);
    await settle();
    expect([userSaw, hook, s.initialized]).toEqual([1, 1, true]);
  });

  it("a second initialize is refused", async () => {
    const { c } = await handshake();
    const error = await c
      .request("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCode.InvalidRequest });
  });

  it("initialize is never cancelled on the wire, even when its signal aborts", async () => {
    const [clientEnd, rawServer] = createInMemoryPair();
    const seen: string[] = [];
    rawServer.onmessage = (m) => seen.push((m as { method: string }).method); // never answers
    await rawServer.start();
    const c = new ClientSession({ inbound: serverToClient, clientInfo });
    const controller = new AbortController();
    const connecting = c.connect(clientEnd, { signal: controller.signal });
    await settle();
    controller.abort("give up");
    await expect(connecting).rejects.toBeInstanceOf(RequestCancelledError);
    await settle();
    expect(seen).toEqual(["initialize"]);
  });
});

describe("capabilities", () => {
  it("the client refuses a method the server did not advertise, without wire traffic", async () => {
    const { c, clientWire } = await handshake({ capabilities: { prompts: {} } });
    const before = clientWire.length;
    const error = await c.request("tools/call", { name: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CapabilityError);
    expect((error as CapabilityError).capability).toBe("tools");
    await expect(c.request("resources/subscribe", { uri: "x" })).rejects.toBeInstanceOf(CapabilityError);
    await settle();
    expect(clientWire.length).toBe(before);
  });

  it("the client sends advertised methods, and checks sub-capabilities like resources.subscribe", async () => {
    const { s, c } = await handshake({ capabilities: { tools: {}, resources: { subscribe: false } } });
    s.onRequest("tools/call", () => ({ content: [] }));
    expect(await c.request("tools/call", { name: "x" })).toEqual({ content: [] });
    await expect(c.request("resources/subscribe", { uri: "x" })).rejects.toBeInstanceOf(CapabilityError);
  });

  it("the server refuses sampling when the client lacks it, and sends it when present", async () => {
    const without = await handshake();
    const before = without.serverWire.length;
    await expect(without.s.request("sampling/createMessage", { messages: [] })).rejects.toBeInstanceOf(CapabilityError);
    expect(without.serverWire.length).toBe(before);

    const withSampling = await handshake({}, { capabilities: { sampling: {} } });
    withSampling.c.onRequest("sampling/createMessage", () => ({ role: "assistant" }));
    expect(await withSampling.s.request("sampling/createMessage", { messages: [] })).toEqual({ role: "assistant" });
  });

  it("maps methods to capabilities", () => {
    const c2s = generated.clientToServer;
    const s2c = generated.serverToClient;
    expect(requiredServerCapability("tools/list", c2s)).toBe("tools");
    expect(requiredServerCapability("resources/templates/list", c2s)).toBe("resources");
    expect(requiredServerCapability("resources/unsubscribe", c2s)).toBe("resources.subscribe");
    expect(requiredServerCapability("prompts/get", c2s)).toBe("prompts");
    expect(requiredServerCapability("logging/setLevel", c2s)).toBe("logging");
    expect(requiredServerCapability("completion/complete", c2s)).toBe("completions");
    expect(requiredServerCapability("ping", c2s)).toBeUndefined();
    expect(requiredClientCapability("elicitation/create", s2c)).toBe("elicitation");
    expect(requiredClientCapability("roots/list", s2c)).toBe("roots");
    expect(requiredClientCapability("constructor", s2c)).toBeUndefined();
    expect(hasCapability({ resources: { subscribe: true } }, "resources.subscribe")).toBe(true);
    expect(hasCapability({ resources: {} }, "resources.subscribe")).toBe(false);
    expect(hasCapability({ logging: {} }, "logging")).toBe(true);
    expect(hasCapability(undefined, "logging")).toBe(false);
    expect(negotiateProtocolVersion("2025-03-26")).toBe("2025-03-26");
    expect(negotiateProtocolVersion("2030-01-01")).toBe("2025-11-25");
    expect(negotiateProtocolVersion(42)).toBe("2025-11-25");
  });
});

describe("ping and close", () => {
  it("both sides answer ping automatically", async () => {
    const { s, c } = await handshake();
    expect(await c.request("ping", undefined)).toEqual({});
    expect(await s.request("ping", undefined)).toEqual({});
  });

  it("closing the client rejects the server's pending requests to it", async () => {
    const { s, c } = await handshake({}, { capabilities: { roots: {} } });
    c.onRequest("roots/list", () => new Promise<JsonObject>(() => {}));
    const pending = s.request("roots/list", undefined);
    await settle();
    await c.close();
    await expect(pending).rejects.toBeInstanceOf(ConnectionClosedError);
  });
});
