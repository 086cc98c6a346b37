/**
 * A side-effecting call through the effect journal (storage/journal.ts;
 * docs/decisions/0038-effect-journal.md). Before the call: a result the journal holds for
 * the key is the call's (the run's checkpoint lost it); an intent without a result is in doubt and is
 * settled first (policy/attempt/in-doubt.ts). Then the intent is made durable, the tool called, and
 * its output or the error it threw recorded. A call cut by its deadline, or one the tool itself gave up
 * on (its own timeout, a reset connection: `cutByTheTool`), is in doubt too, and settled at once: the
 * ladder never moves on (a retry, the fallback) past an effect that may have happened. A step's calls
 * and the compensations that undo them (nodes/shared/compensations.ts) both go through here.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Step } from "../../plan/schema/step.js";
import { cutByTheTool, readProbe, settleInDoubt, type Settlement } from "../../policy/attempt/in-doubt.js";
import { errorInfo } from "../../policy/ladder/deviation.js";
import { compensationKey } from "../../policy/compensation/abandoned.js";
import { liveKey } from "../../policy/compensation/redo-key.js";
import { callTool, StepTimeout, type ToolCall } from "../../runtime/call-tool.js";
import type { Flight } from "../../runtime/dispatch.js";
import type { Runtime } from "../../runtime/options.js";
import type { EffectResult, RunJournal } from "../../runtime/effect-journal.js";

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
  now: () => string;
}

/** `flight.effect` says what the journal made of the call, when it did more than pass it through. */
export function journaledInvoke(
  j: JournaledCall,
  flight: Pick<Flight, "effect" | "key">,
): NonNullable<Flight["invoke"]> {
  return async (call, config, stop) => {
    let entry = await j.journal.lookup(j.threadId, j.key);
    if (entry?.result?.ok) {
      const live = await pastUndone(j);
      if (live !== j.key) {
        // The run's state did not know the effect was undone: the redo goes out under a fresh key.
        j = { ...j, key: live };
        flight.key = live;
        call = { ...call, configurable: { ...call.configurable, idempotencyKey: live } };
        entry = await j.journal.lookup(j.threadId, live);
      }
    }
    if (entry?.result?.ok) {
      flight.effect = "journaled";
      return entry.result.output;
    }
    if (entry && !entry.result) {
      const approved = !j.approvalByAttempt || entry.attempt < j.attempt ? j.approvedKey : undefined;
      const settled = await settle(j, call, config, approved);
      if (settled.kind !== "call") return answer(j, flight, settled);
    }
    return callOnce(j, flight, call, config, stop, true);
  };
}

/**
 * The key past those whose effect the journal shows undone (`<key>:compensate` succeeded): a result
 * under an undone key is a cancelled booking, never this call's (policy/compensation/redo-key.ts).
 * Read only when the journal holds a result to reuse, so a first call costs no extra read.
 */
async function pastUndone(j: JournaledCall): Promise<string> {
  const undone = new Set<string>();
  for (let key = j.key; ; key = liveKey(j.key, undone)) {
    const undo = await j.journal.lookup(j.threadId, compensationKey(key));
    if (!undo?.result?.ok) return key;
    undone.add(key);
  }
}

/** The intent, the call, the result; a call cut by its deadline is settled before it returns. */
async function callOnce(
  j: JournaledCall,
  flight: Pick<Flight, "effect">,
  call: ToolCall,
  config: LangGraphRunnableConfig,
  stop: AbortSignal | undefined,
  first: boolean,
): Promise<unknown> {
  // An intent that cannot be made durable is not called: the error is the attempt's.
  await j.journal.intent(j.threadId, {
    key: j.key,
    stepId: j.step.id,
    tool: j.tool,
    args: call.args,
    attempt: j.attempt,
    at: j.now(),
  });
  let output: unknown;
  try {
    output = await callTool(call, config, stop);
  } catch (thrown) {
    const error = errorInfo(thrown);
    if (!(thrown instanceof StepTimeout) && !cutByTheTool(error)) {
      await record(j, { ok: false, error });
      throw thrown;
    }
    const settled = await settle(j, call, config, undefined);
    // Called again under the key once; cut again, it is a person's to settle.
    if (settled.kind === "call" && settled.why === "honours-keys" && first)
      return callOnce(j, flight, call, config, stop, false);
    if (settled.kind === "call" && settled.why === "not-happened") {
      await record(j, { ok: false, error });
      throw thrown;
    }
    if (settled.kind === "call") {
      const reason = `${j.tool} under key ${j.key} was cut by its deadline twice (${error.message}): did it happen?`;
      return answer(j, flight, { kind: "ask", reason });
    }
    return answer(j, flight, settled);
  }
  await record(j, { ok: true, output });
  return output;
}

/** A settlement other than calling: the probe's output (recorded as the result), or a question for a person. */
async function answer(
  j: JournaledCall,
  flight: Pick<Flight, "effect">,
  settled: Exclude<Settlement, { kind: "call" | "verify" }>,
) {
  if (settled.kind === "happened") {
    await record(j, { ok: true, output: settled.output });
    flight.effect = "verified";
    return settled.output;
  }
  flight.effect = "in_doubt";
  throw new EffectInDoubt(settled.reason);
}

/** Settles a call in doubt: the policy's order, with the verify probe run when it comes to that. */
async function settle(
  j: JournaledCall,
  call: ToolCall,
  config: LangGraphRunnableConfig,
  approvedKey: string | undefined,
): Promise<Exclude<Settlement, { kind: "verify" }>> {
  const doubt = { step: j.step, tool: j.tool, key: j.key, honoursKeys: j.rt.honoursKeys, approvedKey };
  const first = settleInDoubt(doubt);
  if (first.kind !== "verify") return first;
  const probe = j.rt.tools.get(first.probe.tool);
  let problem: string;
  try {
    if (!probe) throw new Error(`tool "${first.probe.tool}" is not in the registry`);
    const inputs = Object.fromEntries(
      (first.probe.inputs ?? []).filter((k) => Object.hasOwn(j.trusted, k)).map((k) => [k, j.trusted[k]]),
    );
    const args = { ...first.probe.args, ...inputs };
    const read = readProbe(await callTool({ ...call, tool: probe, args }, config));
    if (read.kind !== "unreadable") return read as Exclude<Settlement, { kind: "verify" }>;
    problem = read.problem;
  } catch (thrown) {
    problem = `threw (${errorInfo(thrown).message})`;
  }
  const asked = settleInDoubt({ ...doubt, probeFailed: problem });
  return asked.kind === "verify" ? { kind: "ask", reason: problem } : asked;
}

/**
 * A result that cannot be written leaves the intent in doubt: the run's checkpoint still records the
 * commit, and a branch that does not see it is asked rather than charged again.
 */
async function record(j: JournaledCall, result: EffectResult): Promise<void> {
  await j.journal.result(j.threadId, j.key, result).catch(() => undefined);
}
