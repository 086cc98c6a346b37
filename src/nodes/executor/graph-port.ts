/**
 * A keyed call of the graph made by the one attempt driver (runtime/run-attempt.ts), for a caller that
 * calls like `callTool`: a compensation's undo (nodes/shared/compensate-next.ts). The journal's order,
 * the deadline and the settling of a call in doubt are the driver's (docs/decisions/0038-effect-journal.md).
 */
import type { Step } from "../../plan/schema/step.js";
import { errorInfo } from "../../policy/ladder/deviation.js";
import { toolConfig, StepTimeout, type Invocable, type ToolCall } from "../../runtime/call-tool.js";
import type { Flight } from "../../runtime/dispatch.js";
import type { Runtime } from "../../runtime/options.js";
import type { RunJournal } from "../../runtime/effect-journal.js";
import { runAttempt, type AttemptPort } from "../../runtime/run-attempt.js";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";

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
  /** Kept for its callers: the driver always reads an approval as covering the intents up to it. */
  approvalByAttempt?: boolean;
  /** The journal attempt of the call in doubt a person approved (`approvedAttempt` on the record). */
  approvedAttempt?: number | undefined;
  now: () => string;
}

/** The call under `key`: the operation's, or the redo key the journal moved it to. */
function keyed(call: ToolCall, key: string): ToolCall {
  if (call.configurable?.idempotencyKey === key) return call;
  return { ...call, configurable: { ...call.configurable, idempotencyKey: key } };
}

/** The graph's port of the driver for one keyed call: the tool and the probe from the registry, called with LangChain's config. */
export function graphPort(
  rt: Runtime,
  config: LangGraphRunnableConfig,
  call: Omit<ToolCall, "args" | "timeoutMs">,
  journal: RunJournal | undefined,
  now: () => string,
  thrown: { last?: unknown } = {},
): AttemptPort {
  return {
    call: async (c, key, signal) => {
      const at = key === undefined ? call : keyed({ ...call, args: c.args, timeoutMs: c.timeoutMs }, key);
      try {
        return { ok: true, output: await (call.tool as Invocable).invoke(c.args, toolConfig(at, config, signal)) };
      } catch (error) {
        thrown.last = error;
        return { ok: false, error: errorInfo(error) };
      }
    },
    probe: async (name, args, key, signal) => {
      const probe = rt.tools.get(name);
      if (!probe) throw new Error(`tool "${name}" is not in the registry`);
      return probe.invoke(args, toolConfig(keyed({ ...call, args, timeoutMs: 0 }, key), config, signal));
    },
    sleep: (ms, signal) => rt.clock.sleep(ms, signal),
    now,
    journal,
    honoursKeys: rt.honoursKeys,
  };
}

/** `flight.effect` says what the journal made of the call, when it did more than pass it through. */
export function journaledInvoke(
  j: JournaledCall,
  flight: Pick<Flight, "effect" | "key" | "inDoubtAttempt" | "settled">,
): (call: ToolCall, config: LangGraphRunnableConfig, stop?: AbortSignal) => Promise<unknown> {
  return async (call, config) => {
    const thrown: { last?: unknown } = {};
    const port = graphPort(j.rt, config, call, j.journal, j.now, thrown);
    const approval = { approvedKey: j.approvedKey, approvedAttempt: j.approvedAttempt };
    const { configurable, args, timeoutMs } = call;
    const at = { threadId: j.threadId, key: j.key, tool: j.tool, args, attempt: j.attempt, timeoutMs };
    const made = await runAttempt(port, { undo: true, ...at, stepId: configurable.stepId, approval });
    if (made.key !== undefined && made.key !== j.key) flight.key = made.key;
    if (made.settled && made.settled.length > 0) flight.settled = [...made.settled];
    if (made.effect === "in_doubt") {
      flight.effect = "in_doubt";
      if (made.inDoubtAttempt !== undefined) flight.inDoubtAttempt = made.inDoubtAttempt;
      throw new EffectInDoubt(made.outcome.ok ? "" : made.outcome.error.message);
    }
    if (made.effect) flight.effect = made.effect;
    if (made.outcome.ok) return made.outcome.output;
    if (made.outcome.timeout) throw new StepTimeout(timeoutMs);
    throw thrown.last;
  };
}
