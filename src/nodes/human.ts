/**
 * The human node: the only node that calls `interrupt()`. LangGraph re-runs it from the top on
 * resume and discards its writes while it is interrupted, so the payload comes from state
 * written by the node before (`pendingHuman`) and nothing here has side effects before the
 * answer is in. An answer that is malformed or not among the options is not lost work: the
 * node asks again with `error` set, and the thread stays resumable. What each answer does is
 * in `human-answers.ts`.
 */
import { Command, interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../runtime/options.js";
import type { PendingHuman, PlanManagerStateType } from "../runtime/state.js";
import { factValues } from "../plan/facts.js";
import { answeredStepId } from "../plan/external-offers.js";
import type { InterruptPayload, ResumeValue } from "../plan/schema/interrupts.js";
import { responseSchema } from "../runtime/response-schema.js";
import { answerProblem } from "../policy/ladder/answer-checks.js";
import { applyAnswer } from "./human/resume-actions.js";
import { journalOf } from "../runtime/effect-journal.js";

export { HUMAN_DESTINATIONS } from "./human/resume-actions.js";

export function makeHumanNode(rt: Runtime) {
  return async function human(state: PlanManagerStateType, config: LangGraphRunnableConfig): Promise<Command> {
    const pending = state.pendingHuman;
    if (!pending) return new Command({ goto: "executor" });
    const stepOf = (id: string | undefined) => (id ? state.plan?.steps.find((s) => s.id === id) : undefined);
    const facts = { facts: state.facts, trusted: factValues(state.facts) };
    let payload: InterruptPayload = publicPayload(pending);
    const schema = responseSchema(pending.options, pending.kind === "human_step" ? stepOf(pending.stepId) : undefined);
    for (;;) {
      const raw: unknown = interrupt(payload, { responseSchema: schema });
      // A submission is about the offered step it names; any other answer, the question's own step.
      const id = answeredStepId(pending, raw);
      const step = stepOf(id);
      const problem = answerProblem(raw, { pending, step, ...facts });
      if (problem === undefined) {
        const run = id ? state.steps[id] : undefined;
        const at = new Date(rt.clock.now()).toISOString();
        const next = applyAnswer({ rt, state, config, pending, step, run, at }, raw as ResumeValue);
        if (next.effect) await journalResult(config, next.effect);
        // Whatever the answer, a held proposal is settled by it (committed on approve, discarded otherwise).
        const held = state.heldReplan ? { heldReplan: null } : {};
        return new Command({ goto: next.goto, update: { pendingHuman: null, ...held, ...next.update } });
      }
      payload = { ...publicPayload(pending), error: problem };
    }
  };
}

/** A call in doubt that a person said happened is committed in the effect journal too (every branch sees it). */
async function journalResult(config: LangGraphRunnableConfig, effect: { key: string; output: unknown }) {
  const thread = config.configurable?.thread_id;
  const journal = journalOf(config);
  if (!journal || typeof thread !== "string") return;
  await journal.result(thread, effect.key, { ok: true, output: effect.output });
}

function publicPayload(pending: PendingHuman): InterruptPayload {
  const { deadline, ...payload } = pending;
  if (deadline === undefined || payload.kind !== "human_step") return payload;
  return { ...payload, context: { ...payload.context, deadline: new Date(deadline).toISOString() } };
}
