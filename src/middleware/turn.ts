/**
 * The side-effecting steps the calls of one model turn took. An agent runs a turn's tool calls side
 * by side, each reading the state as the turn began, so none of them sees the others: without this,
 * two calls of one step would both run it (docs/decisions/0043-effects-in-the-middleware.md). The
 * first call to reach a side-effecting step takes it; a later call of the same operation waits for
 * it and reuses its result (`effect.reused`), whichever step it is for; a later call of another
 * operation to a taken step is refused. Kept per process and per thread, for the turn in progress
 * only: the calls of one turn run in one process, and a call run again after a restart finds the
 * journal instead.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ToolReply } from "./settle.js";

/** A step taken by a call of the turn: its call, the operation's key and arguments, and its result once it ends. */
export interface Claim {
  callId: string;
  stepId: string;
  key: string | undefined;
  args: Record<string, unknown>;
  done: Promise<ToolReply>;
}

export type Taken =
  /** This call has the step; `end` hands its result (or what it threw) to the calls waiting on it. */
  | { kind: "own"; end: (result: ToolReply | undefined) => void }
  /** Another call of the turn has it. */
  | { kind: "taken"; claim: Claim };

interface Turn {
  id: string;
  /** By step id, and by the operation's key: two steps of one operation make it once too. */
  steps: Map<string, Claim>;
  keys: Map<string, Claim>;
}

export class TurnClaims {
  private readonly threads = new Map<string, Turn>();

  /** Takes the call's step and operation, unless another call of the same turn took either. Synchronous, so arrival order decides. */
  take(threadId: string, turnId: string, claim: Omit<Claim, "done">): Taken {
    let turn = this.threads.get(threadId);
    if (turn?.id !== turnId) {
      // A new turn of the thread: the last one's calls have all ended.
      turn = { id: turnId, steps: new Map(), keys: new Map() };
      this.threads.set(threadId, turn);
    }
    const held = turn.steps.get(claim.stepId) ?? (claim.key === undefined ? undefined : turn.keys.get(claim.key));
    // The same call run again (a person answered its question) is the step's owner still.
    if (held && held.callId !== claim.callId) return { kind: "taken", claim: held };
    let end!: (result: ToolReply | undefined) => void;
    const done = new Promise<ToolReply>((resolve, reject) => {
      end = (result) => (result ? resolve(result) : reject(new Error("the call did not finish")));
    });
    // A call that threw (a question for a person) leaves no waiter with an unhandled rejection.
    done.catch(() => undefined);
    turn.steps.set(claim.stepId, { ...claim, done });
    if (claim.key !== undefined) turn.keys.set(claim.key, { ...claim, done });
    return { kind: "own", end };
  }

  /** The thread's run ended: nothing of its turn is kept. */
  forget(threadId: string): void {
    this.threads.delete(threadId);
  }
}

/**
 * The turn a tool call belongs to: the ids of the calls of the model message that made it. Undefined
 * when the call has no id or its message is not in the state (nothing to coordinate it with).
 */
export function turnOf(messages: readonly BaseMessage[], callId: string | undefined): string | undefined {
  if (!callId) return undefined;
  // The call's message is the last model message: the turn's results come after it.
  const made = messages.findLast((m) => AIMessage.isInstance(m));
  const calls = made?.tool_calls ?? [];
  return calls.some((c) => c.id === callId) ? calls.map((c) => c.id ?? "").join("\u0000") : undefined;
}
