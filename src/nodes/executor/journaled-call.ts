/**
 * The graph's side-effecting call through the effect journal (runtime/journaled-call.ts, the order
 * both engines share; docs/decisions/0038-effect-journal.md): the tool is called with `callTool`, the
 * verify probe from the registry. A step's calls and the compensations that undo them
 * (nodes/shared/compensations.ts) both go through here.
 */
import type { Step } from "../../plan/schema/step.js";
import { cutByTheTool } from "../../policy/ladder/in-doubt.js";
import { errorInfo } from "../../policy/ladder/deviation.js";
import { callTool, StepTimeout, type ToolCall } from "../../runtime/call-tool.js";
import type { Flight } from "../../runtime/dispatch.js";
import type { Runtime } from "../../runtime/options.js";
import type { RunJournal } from "../../runtime/effect-journal.js";
import { journaledCall, type CallOutcome } from "../../runtime/journaled-call.js";

/** The call's outcome is unknown and nothing settled it: the step deviates with `effect_in_doubt`. */
export class EffectInDoubt extends Error {
  constructor(message: string) {
    super(message);
    this.name = "EffectInDoubt";
  }
}

export interface JournaledCall {
  rt: Runtime;
  journal: RunJournal;
  threadId: string;
  key: string;
  /** The step the call is made for; a compensation's undo declares neither keys nor a probe. */
  step: Pick<Step, "id" | "honoursIdempotencyKey" | "verify">;
  /** The call is a compensation's undo (its question names no probe). */
  undo?: boolean;
  tool: string;
  attempt: number;
  /** The step's trusted facts, for the probe's inputs. */
  trusted: Readonly<Record<string, unknown>>;
  approvedKey: string | undefined;
  /**
   * The approval covers only an intent of an earlier attempt, the call the person was asked about: an
   * intent of this attempt is the approved call itself, cut too (the process died in it), and is asked
   * about again rather than called a third time. A step's attempts count on across a person's retry; a
   * compensation's are numbered on from the approved call (`approvedAttempt` in its record).
   */
  approvalByAttempt?: boolean;
  /** The journal attempt of the call in doubt a person approved (`approvedAttempt` on the step's run). */
  approvedAttempt?: number | undefined;
  now: () => string;
}

/** The call under `key`: the operation's, or the redo key the journal moved it to. */
function keyed(call: ToolCall, key: string): ToolCall {
  if (call.configurable?.idempotencyKey === key) return call;
  return { ...call, configurable: { ...call.configurable, idempotencyKey: key } };
}

/** `flight.effect` says what the journal made of the call, when it did more than pass it through. */
export function journaledInvoke(
  j: JournaledCall,
  flight: Pick<Flight, "effect" | "key" | "inDoubtAttempt" | "settled">,
): NonNullable<Flight["invoke"]> {
  return async (call, config, stop) => {
    const made = await journaledCall({
      ...j,
      honoursKeys: j.rt.honoursKeys,
      args: call.args,
      call: async (key): Promise<CallOutcome> => {
        try {
          return { ok: true, output: await callTool(keyed(call, key), config, stop) };
        } catch (thrown) {
          const error = errorInfo(thrown);
          return { ok: false, error, cut: thrown instanceof StepTimeout || cutByTheTool(error), thrown };
        }
      },
      probe: async (name, args, key) => {
        const probe = j.rt.tools.get(name);
        if (!probe) throw new Error(`tool "${name}" is not in the registry`);
        return callTool({ ...keyed(call, key), tool: probe, args }, config);
      },
    });
    if (made.key !== j.key) flight.key = made.key;
    if (made.settled.length > 0) flight.settled = made.settled;
    if (made.kind === "in_doubt") {
      flight.effect = "in_doubt";
      flight.inDoubtAttempt = made.attempt;
      throw new EffectInDoubt(made.reason);
    }
    if (made.effect) flight.effect = made.effect;
    if (made.outcome.ok) return made.outcome.output;
    throw made.outcome.thrown;
  };
}
