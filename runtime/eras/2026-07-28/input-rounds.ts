// Input-required rounds (MRTR) served by replay: a handler's asks of the client are answered from the retry's
// inputResponses and its sealed requestState; an ask still unanswered ends the round with an InputRequiredResult.
import { ErrorCode, isPlainObject, type JsonObject } from "../../rpc/jsonrpc.js";
import { CapabilityError, ReplacedAnswer, RequestRefusedError } from "../../rpc/errors.js";
import type { HandlerContext, InputSource } from "../../rpc/handler-context.js";
import type { PeerIdentity } from "../../rpc/peer.js";
import type { DispatchTable } from "../../rpc/dispatch.js";
import { ModernErrorCode } from "./envelope.js";
import { hasCapability } from "../../mcp/capabilities.js";
import { canonicalJson, digest, type RequestStateSealer, type StatePayload } from "./request-state.js";

interface Prior {
  /** Answers so far, by key: sealed in the state, plus this retry's inputResponses to keys the state asked. */
  readonly answers: { [key: string]: JsonObject };
  /** Digest of each ask made in earlier rounds, by key. */
  readonly asked: { readonly [key: string]: string };
  /** Whether a sealed state came with the request. */
  readonly sealed: boolean;
}

interface PendingAsk {
  readonly key: string;
  readonly method: string;
  readonly params: JsonObject | undefined;
  digest: string;
  readonly reject: (error: unknown) => void;
  /** Settles once the ask was looked up: true when it is still unanswered (it goes in the round). */
  ready: Promise<boolean>;
}

/**
 * The asks of one handler run. Each ask gets a key by call order (`q0`, `q1`, ...): a retry replays the handler, which
 * asks the same things in the same order, so the answers find their asks again; an ask whose method or params differ
 * from what the state recorded under its key is refused (-32602). The asks made in one turn (`Promise.all` of two)
 * go out in one round.
 */
export class InputRound implements InputSource {
  private next = 0;
  private readonly keys = new Set<string>();
  /** Asks made since the last look, in call order. */
  private waiting: PendingAsk[] = [];
  private looking = false;
  /** The answer that ended the run, once a round ended it. */
  private ended: ReplacedAnswer | undefined = undefined;
  /** What earlier rounds gave, read on the first ask: most requests never ask, and reading a state is a WebCrypto job. */
  private priorRead: Promise<Prior> | undefined = undefined;
  private readonly method: string;
  private readonly params: JsonObject | undefined;
  private requestDigest: Promise<string> | undefined = undefined;

  constructor(
    private readonly context: HandlerContext,
    method: string,
    params: JsonObject | undefined,
    private readonly identity: PeerIdentity,
    private readonly sealer: RequestStateSealer,
    /** What a client may be asked in a round: each request's result guard and the client capability it needs. */
    private readonly asks: DispatchTable,
  ) {
    this.method = method;
    this.params = params;
  }

  /** Read only when the handler asks; a state nobody uses cannot do harm, so its refusal is not reported. */
  private get prior(): Promise<Prior> {
    if (this.priorRead === undefined) {
      this.priorRead = this.load(this.params);
      this.priorRead.catch(() => undefined);
    }
    return this.priorRead;
  }

  get responses(): JsonObject | undefined {
    const responses = this.params?.inputResponses;
    return isPlainObject(responses) ? responses : undefined;
  }

  get state(): string | undefined {
    const state = this.params?.requestState;
    return typeof state === "string" ? state : undefined;
  }

  /**
   * The explicit style (`return ctx.inputRequired(...)`): the handler names its input requests and its own state,
   * which the client echoes as is (protecting it is the handler's business, as the specification says).
   */
  required(inputRequests: { readonly [key: string]: { method: string; params?: JsonObject } }, state?: string): Error {
    for (const { method } of Object.values(inputRequests)) {
      const refused = this.refusal(method, `${method} cannot be an input request`);
      if (refused !== undefined) return refused;
    }
    const result: JsonObject = { resultType: "input_required", inputRequests: inputRequests as JsonObject };
    if (state !== undefined) result.requestState = state;
    return new ReplacedAnswer(result);
  }

  /**
   * Why `method` cannot be asked of this client in a round: it is no input request of the revision (an Error saying
   * `notAnInput`), or the envelope lacks the capability it needs (-32021); undefined when it can.
   */
  private refusal(method: string, notAnInput: string): Error | undefined {
    if (!Object.hasOwn(this.asks, method)) return new Error(notAnInput);
    const capability = this.asks[method]!.capability;
    if (capability === undefined || hasCapability(this.identity.capabilities, capability)) return undefined;
    return new CapabilityError(method, capability, "client", {
      code: ModernErrorCode.MissingRequiredClientCapability,
      data: { requiredCapabilities: { [capability]: {} } },
    });
  }

  ask(method: string, params: JsonObject | undefined, named?: string): Promise<JsonObject> {
    const key = named ?? `q${this.next}`;
    this.next++;
    if (this.keys.has(key)) return Promise.reject(new Error(`Input key ${key} was already used by this request`));
    this.keys.add(key);
    // A CapabilityError the handler may catch and do without; if it does not, the request fails with -32021.
    const refused = this.refusal(
      method,
      `${method} cannot be sent to a client of this revision: only ${Object.keys(this.asks).join(", ")} are asked in rounds`,
    );
    if (refused !== undefined) return Promise.reject(refused);
    if (this.ended !== undefined) return Promise.reject(this.ended);
    return new Promise<JsonObject>((resolve, reject) => {
      const ask: PendingAsk = { key, method, params, digest: "", reject, ready: Promise.resolve(false) };
      ask.ready = this.lookUp(ask, resolve, reject);
      // Registered at once, looked at after this turn: the asks a handler makes together (Promise.all) share a round
      // however long each lookup takes.
      this.waiting.push(ask);
      if (!this.looking) {
        this.looking = true;
        setTimeout(() => void this.look(), 0);
      }
    });
  }

  /** Answers the ask from the state and this retry's responses; true when it stays unanswered. */
  private async lookUp(
    ask: PendingAsk,
    resolve: (answer: JsonObject) => void,
    reject: (error: unknown) => void,
  ): Promise<boolean> {
    try {
      ask.digest = await digest(`${ask.method}\n${canonicalJson(ask.params ?? {})}`);
      const prior = await this.prior;
      const recorded = prior.asked[ask.key];
      if (recorded !== undefined && recorded !== ask.digest) {
        throw new RequestRefusedError(
          ErrorCode.InvalidParams,
          `Invalid params: requestState does not match this request's input request ${ask.key} (the handler asked something else); send the request anew`,
        );
      }
      const answer = prior.answers[ask.key];
      // Without a state only this retry's responses count: the client answered before (or without) being asked.
      if (answer !== undefined && (recorded !== undefined || !prior.sealed)) {
        const spec = this.asks[ask.method]!;
        if (spec.isResult !== undefined && !spec.isResult(answer)) {
          throw new RequestRefusedError(
            ErrorCode.InvalidParams,
            `Invalid params: inputResponses["${ask.key}"] is not a valid ${spec.resultType ?? "result"} for ${ask.method}`,
            { inputKey: ask.key },
          );
        }
        resolve(answer);
        return false;
      }
      return true;
    } catch (error) {
      reject(error);
      return false;
    }
  }

  /** After the turn that asked: the asks still unanswered end the run in one round. */
  private async look(): Promise<void> {
    this.looking = false;
    const batch = this.waiting;
    this.waiting = [];
    const open = await Promise.all(batch.map((ask) => ask.ready));
    const pending = batch.filter((_ask, i) => open[i]);
    if (pending.length === 0) return;
    if (this.ended !== undefined) {
      for (const ask of pending) ask.reject(this.ended);
      return;
    }
    const prior = await this.prior;
    const asked: { [key: string]: string } = { ...prior.asked };
    const inputRequests: JsonObject = {};
    for (const ask of pending) {
      asked[ask.key] = ask.digest;
      inputRequests[ask.key] =
        ask.params === undefined ? { method: ask.method } : { method: ask.method, params: ask.params };
    }
    const payload: StatePayload = {
      p: this.context.principal ?? null,
      r: await this.request(),
      e: Date.now() + this.sealer.ttlMs,
      q: asked,
      a: prior.answers,
    };
    const answer = new ReplacedAnswer({
      resultType: "input_required",
      inputRequests,
      requestState: await this.sealer.seal(payload),
    });
    this.ended = answer;
    // The run is over: work it still does is wasted, and its signal says why.
    this.context.abort(answer);
    for (const ask of pending) ask.reject(answer);
  }

  /**
   * Digest of the request's method and salient params (what a state is bound to). Made only when a state is read or
   * sealed: most requests never ask, and a digest is a WebCrypto job.
   */
  private request(): Promise<string> {
    if (this.requestDigest === undefined) {
      const salient: JsonObject = { ...this.params };
      delete salient._meta;
      delete salient.inputResponses;
      delete salient.requestState;
      this.requestDigest = digest(`${this.method}\n${canonicalJson(salient)}`);
    }
    return this.requestDigest;
  }

  private async load(params: JsonObject | undefined): Promise<Prior> {
    const state = params?.requestState;
    if (state === undefined) return { answers: plainEntries(params?.inputResponses), asked: {}, sealed: false };
    if (typeof state !== "string")
      throw new RequestRefusedError(ErrorCode.InvalidParams, "Invalid params: requestState must be a string");
    let payload: StatePayload;
    try {
      payload = await this.sealer.open(state);
    } catch (error) {
      const e = error as { code: number; message: string };
      throw new RequestRefusedError(e.code, e.message);
    }
    if (payload.p !== (this.context.principal ?? null) || payload.r !== (await this.request())) {
      throw new RequestRefusedError(
        ErrorCode.InvalidParams,
        "Invalid params: requestState refused (it was issued for another request or caller); send the request anew",
      );
    }
    const answers: { [key: string]: JsonObject } = { ...payload.a };
    const responses = params?.inputResponses;
    if (isPlainObject(responses)) {
      // Keys the state never asked are ignored, as the spec says of unexpected input.
      for (const [key, value] of Object.entries(responses)) {
        if (Object.hasOwn(payload.q, key) && isPlainObject(value)) answers[key] = value;
      }
    }
    return { answers, asked: payload.q, sealed: true };
  }
}

/** The object-valued entries of an inputResponses map (anything else is not an answer and is ignored). */
function plainEntries(responses: unknown): { [key: string]: JsonObject } {
  const out: { [key: string]: JsonObject } = {};
  if (!isPlainObject(responses)) return out;
  for (const [key, value] of Object.entries(responses)) if (isPlainObject(value)) out[key] = value;
  return out;
}
