// The per-request sequence stamp: written into a copy of each message, read back by the client.
import { describe, expect, it } from "vitest";
import {
  readSeqStamp,
  SEQ_META_KEY,
  stampMessage,
  stampOwned,
} from "../../runtime/eras/2025-11-25/resumable/protocol.js";
import type { JsonObject, JsonRpcMessage } from "../../runtime/rpc/jsonrpc.js";

describe("sequence stamps", () => {
  it("stamps a result in a copy, keeping the handler's own _meta entries and leaving its objects untouched", () => {
    const result = {
      content: [{ type: "text", text: "ok" }],
      structuredContent: { n: 1 },
      _meta: { "app/trace": "t1" },
    };
    const original = structuredClone(result);
    const stamped = stampMessage({ jsonrpc: "2.0", id: 7, result } as unknown as JsonRpcMessage, {
      requestId: 7,
      seq: 3,
    }) as unknown as JsonObject;
    expect(stamped).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: {
        content: result.content,
        structuredContent: { n: 1 },
        _meta: { "app/trace": "t1", [SEQ_META_KEY]: { requestId: 7, seq: 3 } },
      },
    });
    expect(result).toEqual(original);
    expect(readSeqStamp(stamped)).toEqual({ requestId: 7, seq: 3 });
  });

  it("stamps notification and request params, with or without params of their own", () => {
    const progress = stampMessage(
      {
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: { progressToken: 0, progress: 1 },
      } as unknown as JsonRpcMessage,
      { requestId: "r", seq: 1 },
    ) as unknown as JsonObject;
    expect(progress).toEqual({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: 0, progress: 1, _meta: { [SEQ_META_KEY]: { requestId: "r", seq: 1 } } },
    });
    const ping = stampMessage({ jsonrpc: "2.0", id: "s1", method: "ping" } as unknown as JsonRpcMessage, {
      requestId: 0,
      seq: 2,
    }) as unknown as JsonObject;
    expect(ping).toEqual({
      jsonrpc: "2.0",
      id: "s1",
      method: "ping",
      params: { _meta: { [SEQ_META_KEY]: { requestId: 0, seq: 2 } } },
    });
    expect(readSeqStamp(ping)).toEqual({ requestId: 0, seq: 2 });
  });

  it("stamps a message the runtime made for this send in place, keeping any _meta entries it had", () => {
    const params = { progressToken: 0, progress: 1 };
    const message = { jsonrpc: "2.0", method: "notifications/progress", params } as unknown as JsonRpcMessage;
    expect(stampOwned(message, { requestId: 4, seq: 2 })).toBe(message);
    expect((message as unknown as JsonObject).params).toBe(params);
    expect(params).toEqual({ progressToken: 0, progress: 1, _meta: { [SEQ_META_KEY]: { requestId: 4, seq: 2 } } });
    const withMeta = {
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "info", data: 1, _meta: { "app/k": 1 } },
    };
    stampOwned(withMeta as unknown as JsonRpcMessage, { requestId: 4, seq: 3 });
    expect(withMeta.params._meta).toEqual({ "app/k": 1, [SEQ_META_KEY]: { requestId: 4, seq: 3 } });
    expect(readSeqStamp(withMeta as unknown as JsonObject)).toEqual({ requestId: 4, seq: 3 });
  });

  it("leaves an error response as it is (errors carry no _meta)", () => {
    const error = { jsonrpc: "2.0", id: 1, error: { code: -32603, message: "boom" } } as unknown as JsonRpcMessage;
    expect(stampMessage(error, { requestId: 1, seq: 5 })).toBe(error);
    expect(readSeqStamp(error as unknown as JsonObject)).toBeUndefined();
  });
});
