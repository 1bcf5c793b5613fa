// Input-required rounds (MRTR) served by replay: a handler's asks of the client are answered from the retry's
// inputResponses and its sealed requestState; an ask still unanswered ends the round with an InputRequiredResult.
import { ErrorCode, isPlainObject, type JsonObject } from "../../jsonrpc.js";
import { ReplacedAnswer, RequestRefusedError } from "../../errors.js";
import type { HandlerContext } from "../../handler-context.js";
import type { PeerIdentity } from "../../peer.js";
import { ModernErrorCode } from "./envelope.js";
import { canonicalJson, digest, type RequestStateSealer, type StatePayload } from "./request-state.js";

/** The requests a server may answer with an InputRequiredResult. */
export const INPUT_REQUIRED_METHODS: ReadonlySet<string> = new Set(["tools/call", "prompts/get", "resources/read"]);

/** What a client may be asked in a round, and the capability it must have declared for it. */
const INPUT_REQUESTS: Readonly<Record<string, string>> = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
};

interface Prior {
  /** Answers so far, by key: sealed in the state, plus this retry's inputResponses to keys the state asked. */
  readonly answers: { [key: string]: JsonObject };
  /** Digest of each ask made in earlier rounds, by key. */
  readonly asked: { readonly [key: string]: string };
}

interface PendingAsk {
  readonly key: string;
  readonly method: string;
  readonly params: JsonObject | undefined;
  readonly digest: string;
  readonly reject: (error: unknown) => void;
}

/**
 * The asks of one handler run. Each ask gets a key by call order (`q0`, `q1`, ...): a retry replays the handler, which
 * asks the same things in the same order, so the answers find their asks again; an ask whose method or params differ
 * from what the state recorded under its key is refused (-32602). The asks made in one turn (`Promise.all` of two)
 * go out in one round.
 */
export class InputRound {
  private next = 0;
  private pending: PendingAsk[] = [];
  private ending = false;
  private readonly prior: Promise<Prior>;
  private readonly request: Promise<string>;

  constructor(
    private readonly context: HandlerContext,
    method: string,
    params: JsonObject | undefined,
    private readonly identity: PeerIdentity,
    private readonly sealer: RequestStateSealer,
  ) {
    const salient: JsonObject = { ...params };
    delete salient._meta;
    delete salient.inputResponses;
    delete salient.requestState;
    this.request = digest(`${method}\n${canonicalJson(salient)}`);
    this.prior = this.load(params);
    // Read only when the handler asks; a state nobody uses cannot do harm, so its refusal is not reported.
    this.prior.catch(() => undefined);
  }

  ask(method: string, params: JsonObject | undefined): Promise<JsonObject> {
    const key = `q${this.next++}`;
    const capability = INPUT_REQUESTS[method];
    if (capability === undefined) {
      return Promise.reject(
        new Error(
          `${method} cannot be sent to a client of this revision: only elicitation, sampling and roots are asked in rounds`,
        ),
      );
    }
    if (!isDeclared(this.identity.capabilities, capability)) {
      return Promise.reject(
        new RequestRefusedError(
          ModernErrorCode.MissingRequiredClientCapability,
          `Missing required client capability: ${capability} (for ${method})`,
          { requiredCapabilities: { [capability]: {} } },
        ),
      );
    }
    return this.answer(key, method, params);
  }

  private async answer(key: string, method: string, params: JsonObject | undefined): Promise<JsonObject> {
    const asked = await digest(`${method}\n${canonicalJson(params ?? {})}`);
    const prior = await this.prior;
    const recorded = prior.asked[key];
    if (recorded !== undefined && recorded !== asked) {
      throw new RequestRefusedError(
        ErrorCode.InvalidParams,
        `Invalid params: requestState does not match this request's input request ${key} (the handler asked something else); send the request anew`,
      );
    }
    const answer = prior.answers[key];
    if (recorded !== undefined && answer !== undefined) return answer;
    return new Promise<JsonObject>((_resolve, reject) => {
      this.pending.push({ key, method, params, digest: asked, reject });
      if (!this.ending) {
        this.ending = true;
        // After this turn: the asks a handler makes together (Promise.all) share the round.
        setTimeout(() => void this.end(), 0);
      }
    });
  }

  /** Ends the handler's run: the pending asks go to the client with everything needed to resume in the state. */
  private async end(): Promise<void> {
    const pending = this.pending;
    this.pending = [];
    let prior: Prior;
    try {
      prior = await this.prior;
    } catch (error) {
      for (const ask of pending) ask.reject(error);
      return;
    }
    const asked: { [key: string]: string } = { ...prior.asked };
    const inputRequests: JsonObject = {};
    for (const ask of pending) {
      asked[ask.key] = ask.digest;
      inputRequests[ask.key] =
        ask.params === undefined ? { method: ask.method } : { method: ask.method, params: ask.params };
    }
    const payload: StatePayload = {
      p: this.context.principal ?? null,
      r: await this.request,
      e: Date.now() + this.sealer.ttlMs,
      q: asked,
      a: prior.answers,
    };
    const answer = new ReplacedAnswer({
      resultType: "input_required",
      inputRequests,
      requestState: await this.sealer.seal(payload),
    });
    // The run is over: work it still does is wasted, and its signal says why.
    this.context.abort(answer);
    for (const ask of pending) ask.reject(answer);
  }

  private async load(params: JsonObject | undefined): Promise<Prior> {
    const state = params?.requestState;
    if (state === undefined) return { answers: {}, asked: {} };
    if (typeof state !== "string")
      throw new RequestRefusedError(ErrorCode.InvalidParams, "Invalid params: requestState must be a string");
    let payload: StatePayload;
    try {
      payload = await this.sealer.open(state);
    } catch (error) {
      const e = error as { code: number; message: string };
      throw new RequestRefusedError(e.code, e.message);
    }
    if (payload.p !== (this.context.principal ?? null) || payload.r !== (await this.request)) {
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
    return { answers, asked: payload.q };
  }
}

function isDeclared(capabilities: JsonObject, name: string): boolean {
  const value = capabilities[name];
  return value !== undefined && value !== null && value !== false;
}
