// Request ids that MCP forbids (null, fractions, objects...) and blank lines, on every transport that reaches a Session directly.
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { isMessage as generatedGuard } from "../../generated/dispatch.js";
import { ErrorCode, isJsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";
import { Session } from "../../runtime/rpc/session/session.js";
import { StdioServerTransport } from "../../runtime/transports/stdio/stdio.js";
import { sleep, until } from "../kit/timing.js";
import { rawPeer, session as plainSession } from "./helpers.js";
import { collectLines } from "../kit/streams.js";

/** A served Session on one end, raw lines or objects written at it on the other, every reply collected. */
interface Rig {
  write(line: string): void;
  replies: unknown[];
  served: () => number;
}

async function stdioRig(isMessage: (value: unknown) => boolean): Promise<Rig> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const replies = collectLines(stdout);
  const session = plainSession("server", { isMessage });
  let served = 0;
  session.onRequest("ping", () => (served++, {}));
  await session.connect(new StdioServerTransport({ stdin, stdout }));
  return { write: (line) => stdin.write(line + "\n"), replies, served: () => served };
}

async function inMemoryRig(isMessage: (value: unknown) => boolean): Promise<Rig> {
  const { server, raw, received } = await rawPeer({ isMessage });
  let served = 0;
  server.onRequest("ping", () => (served++, {}));
  return { write: (line) => void raw.send(JSON.parse(line)), replies: received, served: () => served };
}

const guards = [
  ["the generated envelope guard", generatedGuard],
  ["the hand-written envelope guard", isJsonRpcMessage],
] as const;
const rigs = [
  ["stdio", stdioRig],
  ["in-memory", inMemoryRig],
] as const;
const cases = guards.flatMap(([guard, isMessage]) =>
  rigs.map(([transport, rig]) => [`${transport}, ${guard}`, rig, isMessage] as const),
);

const badIds: unknown[] = [null, 1.5, true, { n: 1 }, [1]];
const invalidId = {
  jsonrpc: "2.0",
  error: { code: ErrorCode.InvalidRequest, message: "Invalid Request: id must be a string or an integer" },
};

describe("request ids must be strings or integers", () => {
  it.each(cases)(
    "%s: answers -32600 without an id, runs no handler, and keeps serving",
    async (_name, rig, isMessage) => {
      const { write, replies, served } = await rig(isMessage);
      for (const id of badIds) write(JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }));
      write(JSON.stringify({ jsonrpc: "2.0", id: "after", method: "ping" }));
      await until(() => replies.length === badIds.length + 1);
      expect(replies.slice(0, badIds.length)).toEqual(badIds.map(() => invalidId));
      expect(replies[badIds.length]).toEqual({ jsonrpc: "2.0", id: "after", result: {} });
      expect(served()).toBe(1);
    },
  );
});

describe("stdio lines of whitespace only", () => {
  it.each(guards)("are ignored with %s, and whitespace around a message does not stop it", async (_name, isMessage) => {
    const { write, replies } = await stdioRig(isMessage);
    for (const blank of [" ", "\t", "  \t  ", " \r", "\r", ""]) write(blank);
    write(' \t{"jsonrpc":"2.0","id":1,"method":"ping"}  ');
    write('{"jsonrpc":"2.0","id":2,"method":"ping"}');
    await until(() => replies.length >= 2);
    await sleep(20);
    expect(replies).toEqual([
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", id: 2, result: {} },
    ]);
  });
});
