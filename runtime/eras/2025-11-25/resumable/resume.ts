// requests/resume of a request this node runs: take it over from its current attachment, replay what the client
// has not confirmed, then deliver live; and the reply channel (HTTP) an attachment rides on.
import type { JsonObject, JsonRpcMessage } from "../../../rpc/jsonrpc.js";
import type { ReplyChannel } from "../../../rpc/transport.js";
import { RequestCancelledError } from "../../../rpc/errors.js";
import type { HandlerContext } from "../../../rpc/handler-context.js";
import type { ServerSession } from "../../../mcp/lifecycle.js";
import { isResponse, outcome } from "../../../durable/messages.js";
import { whenReady } from "../../../store/types.js";
import type { Attachment, ResumableRequest } from "./request.js";
import type { ResumableRequests } from "./server.js";

/** A resume overtaken by a later one gets no answer: the later one carries the request. */
export function superseded(context: HandlerContext): JsonObject {
  context.state = "cancelled";
  context.reply?.release?.();
  return {};
}

/** A later attachment replaces the current one; the earlier resume gets no answer (it is superseded). */
export function takeOver(request: ResumableRequest): void {
  const previous = request.attachment;
  if (previous === undefined) return;
  request.attachment = undefined;
  request.linkDown = false;
  request.input.unregister(previous.session);
  if (previous.resume !== undefined) {
    request.endResume(previous);
  } else {
    const inbound = previous.session.operations.inbound;
    if (inbound.get(request.requestId) === request.context) inbound.delete(request.requestId);
  }
}

/**
 * Follows the connection of a reply channel (HTTP) under an attachment: while it is gone the request waits for
 * the client as a detached one does (maxWait runs) but stays attached, so a client that comes back on that
 * channel (GET with Last-Event-ID) goes on reading it, and an expiry can end the reply there.
 */
export function watchLink(
  manager: ResumableRequests,
  request: ResumableRequest,
  attachment: Attachment,
  reply: ReplyChannel,
): void {
  const changed = (connected: boolean): void => {
    if (request.freed || request.attachment !== attachment || request.final !== undefined) return;
    request.linkDown = !connected;
    if (connected) manager.clearExpiry(request);
    else manager.armExpiry(request);
  };
  reply.watchConnection?.(changed);
  if (!reply.connected) changed(false);
}

/**
 * Attach the request to this resume: it takes over from the current attachment, the messages after `ack` are
 * replayed in order (after earlier appends have landed), and live delivery goes on through the new attachment.
 * Answered by the final response, or with `{}` when a later attachment supersedes it.
 */
export function attachResume(
  manager: ResumableRequests,
  session: ServerSession,
  request: ResumableRequest,
  ack: number,
  resumeOp: HandlerContext,
): Promise<JsonObject> {
  takeOver(request);
  manager.clearExpiry(request);
  // Accepted: the transport now routes the id's messages to this resume, and the session knows it by the id.
  const reply = resumeOp.reply;
  reply?.takeOver?.();
  const inbound = session.operations.inbound;
  if (inbound.get(request.requestId) !== resumeOp) inbound.set(request.requestId, resumeOp);
  let settle!: (message: JsonRpcMessage) => void;
  const answered = new Promise<JsonObject>((resolve, reject) => {
    settle = (message) => {
      if (!isResponse(message)) return;
      try {
        resolve(outcome(message));
      } catch (error) {
        reject(error);
      }
    };
  });
  const attachment: Attachment = { session, resume: { context: resumeOp, settle }, held: [] };
  request.attachment = attachment;
  if (reply !== undefined) watchLink(manager, request, attachment, reply);
  resumeOp.signal.addEventListener(
    "abort",
    () => {
      if (request.attachment !== attachment) return;
      if (resumeOp.signal.reason instanceof RequestCancelledError) manager.cancel(request, resumeOp.signal.reason);
      else request.detach();
    },
    { once: true },
  );
  request.input.register(session);
  const store = manager.store;
  const key = request.key;
  return Promise.resolve(
    request.log.chain(() =>
      whenReady(store.confirm(key, ack), () =>
        whenReady(store.readAfter(key, ack), (queued) => {
          if (request.attachment === attachment) replay(manager, request, attachment, ack, queued);
        }),
      ),
    ),
  ).then(() => answered);
}

/** Sends the queue read after `ack`, then what arrived live meanwhile, then the final response if there is one. */
function replay(
  manager: ResumableRequests,
  request: ResumableRequest,
  attachment: Attachment,
  ack: number,
  queued: { seq: number; message: JsonRpcMessage }[],
): void {
  const session = attachment.session;
  // Unanswered server-to-client requests go again even when confirmed: the answer may be what got lost.
  for (const pending of request.input.values()) {
    if (pending.seq <= ack) session.transmit(pending.message, request.requestId).catch(() => undefined);
  }
  let sent = 0;
  let last = ack;
  let finalSeq = 0;
  let unconfirmed = 0;
  for (const item of queued) {
    last = item.seq;
    if (item.message === request.final || isResponse(item.message)) {
      finalSeq = item.seq;
      continue;
    }
    // What is still queued is exactly what was not confirmed (the final response aside, as in send).
    unconfirmed += JSON.stringify(item.message).length;
    session.transmit(item.message, request.requestId).catch(() => undefined);
    sent++;
  }
  manager.stats.replayed += sent;
  if (last > request.sentSeq) request.sentSeq = last;
  request.recount(ack, unconfirmed);
  const held = attachment.held ?? [];
  attachment.held = undefined;
  let finalDone = false;
  for (const item of held) {
    if (item.seq <= last) continue;
    if (item.message === request.final) finalDone = true;
    request.deliver(item.message, item.seq);
  }
  if (request.final !== undefined && !finalDone)
    request.deliver(request.final, finalSeq > 0 ? finalSeq : request.lastSeq);
}
