// Client session extensions: what they advertise, the hooks they install, and the reconnection settings they share.
import { describe, expect, it } from "vitest";
import type { ClientExtension } from "../../runtime/mcp/client-extension.js";
import { resumableClient } from "../../runtime/eras/2025-11-25/resumable/client.js";
import { RESUMABLE_CAPABILITY } from "../../runtime/eras/2025-11-25/resumable/protocol.js";
import { InMemoryLink } from "../../runtime/transports/in-memory.js";
import { clientSession, connectedPair, serverSession } from "../kit/mcp-sessions.js";
import { until } from "../kit/timing.js";

const clientInfo = { name: "extended", version: "1" };

describe("client extensions", () => {
  it.each([
    { name: "no extension", extensions: [], advertised: {} },
    { name: "resumableClient()", extensions: [resumableClient()], advertised: { [RESUMABLE_CAPABILITY]: {} } },
  ])("the capabilities the client advertises come from its extensions: $name", async ({ extensions, advertised }) => {
    const { server } = await connectedPair({ client: { clientInfo, capabilities: { roots: {} }, extensions } });
    expect(server.clientCapabilities).toEqual({ roots: {}, ...advertised });
  });

  it("an extension is installed with the session's hooks and sees what arrives", async () => {
    const seen: string[] = [];
    const recorder: ClientExtension = {
      capabilities: { "io.example/recorder": {} },
      install: (host) => {
        expect(host.isOpen).toBe(false);
        return { notification: (method) => void seen.push(method) };
      },
    };
    const { client, server } = await connectedPair({ client: { clientInfo, extensions: [recorder] } });
    expect(server.clientCapabilities).toEqual({ "io.example/recorder": {} });
    expect(client.recovery).toBeDefined();
    await server.notify("notifications/tools/list_changed");
    await until(() => seen.length > 0);
    expect(seen).toEqual(["notifications/tools/list_changed"]);
  });
});

describe("reconnection settings", () => {
  it.each([
    { name: "reconnectOptions", options: { reconnectOptions: { maxAttempts: 2, retryDelayMs: 1 } }, attempts: 2 },
    {
      name: "an extension's settings",
      options: { extensions: [resumableClient({ maxAttempts: 3, retryDelayMs: 1 })] },
      attempts: 3,
    },
    {
      name: "reconnectOptions over an extension's",
      options: {
        reconnectOptions: { maxAttempts: 1, retryDelayMs: 1 },
        extensions: [resumableClient({ maxAttempts: 4, retryDelayMs: 1 })],
      },
      attempts: 1,
    },
  ])("$name: after maxAttempts failed reconnects in a row the session closes", async ({ options, attempts }) => {
    const link = new InMemoryLink();
    await serverSession().connect(link.server);
    let tried = 0;
    let closed = 0;
    const client = clientSession({
      clientInfo,
      ...options,
      reconnect: async () => {
        tried++;
        throw new Error("network unreachable");
      },
    });
    client.onclose = () => void closed++;
    await client.connect(link.client);
    link.cut();
    await until(() => closed > 0);
    expect({ tried, closed, open: client.isOpen }).toEqual({ tried: attempts, closed: 1, open: false });
    await expect(client.whenConnected()).rejects.toThrow();
  });

  it("a client without reconnect or extensions has no recovery and closes with its transport", async () => {
    const { client, clientEnd } = await connectedPair({ client: { clientInfo } });
    expect(client.recovery).toBeUndefined();
    const closed = new Promise<void>((resolve) => (client.onclose = resolve));
    await clientEnd.close();
    await closed;
    await expect(client.whenConnected()).rejects.toThrow();
  });
});
