/**
 * Which questions this service has asked its clients' users (docs/decisions/0061-questions-elicited-from-the-client.md):
 * each question once per server, by the session that drives its plan or the first one that reads
 * it, whatever the number of `plan_wait`s and polls. An answer, from the form or from `plan_answer`,
 * ends the question: a form still open for it is withdrawn. Sessions ask (elicit-session.ts); this
 * holds what they share, bounded like every map of the service.
 */
import type { InterruptPayload } from "../plan/schema/interrupts.js";
import { ExpiringMap } from "./expiring-map.js";
import type { PlanThreads } from "./plan-threads.js";
import { digest } from "./requests.js";
import { elicitable } from "./elicit-form.js";
import { pendingOf } from "./summaries.js";

/** At most this many plans' questions and followers are remembered (the oldest are forgotten first). */
export const MAX_ELICITED = 10_000;
/** A question asked is not asked again for this long (a week): a poll days later does not ask it twice. */
const ASKED_TTL_MS = 7 * 24 * 3_600_000;

/** What a session asks about, once it has the question: the plan's question, its key, and the step's fact keys. */
export interface Asking {
  planId: string;
  question: InterruptPayload;
  key: string;
  produces: readonly string[] | undefined;
  /** Aborted when the question is answered some other way (or the plan deleted): the form is withdrawn. */
  signal: AbortSignal;
}

/** A session that may ask: the service wakes the one that drives a plan when its run pauses. */
export interface Asker {
  consider(planId: string): void;
}

/** One question as its key: its payload, which one checkpoint holds as written. */
export const questionKey = (question: InterruptPayload): string => digest("question", JSON.stringify(question));

export class PlanElicitations {
  /** False with `elicit: false` (`--no-elicit`): no session asks anything. */
  readonly enabled: boolean;
  private readonly threads: PlanThreads;
  private readonly asked: ExpiringMap<string, { key: string; withdraw: AbortController }>;
  /** The session that last started, answered or resumed each plan's run: it asks when the run pauses. */
  private readonly followers: ExpiringMap<string, Asker>;

  constructor(threads: PlanThreads, enabled: boolean) {
    this.threads = threads;
    this.enabled = enabled;
    const now = () => threads.now();
    this.asked = new ExpiringMap({ ttlMs: ASKED_TTL_MS, maxEntries: MAX_ELICITED, now });
    this.followers = new ExpiringMap({ ttlMs: ASKED_TTL_MS, maxEntries: MAX_ELICITED, now });
    if (enabled) threads.onPaused.add((planId) => this.followers.get(planId)?.consider(planId));
  }

  /** How many plans' questions and followers are held (for the bound's test). */
  get sizes(): { asked: number; followers: number } {
    return { asked: this.asked.size, followers: this.followers.size };
  }

  /** `asker` drives the plan's run from now on: it is the one to ask when the run pauses at a question. */
  follow(planId: string, asker: Asker): void {
    if (this.enabled) this.followers.set(planId, asker);
  }

  /**
   * The plan's question if it is one to ask and no session has asked it yet; claimed for the caller,
   * who asks it. Undefined while a run goes on, for an external step, or once asked.
   */
  async claim(planId: string): Promise<Asking | undefined> {
    if (!this.enabled || this.threads.runs.has(planId)) return undefined;
    const core = await this.threads.core(planId);
    if (core.running || !core.question || !elicitable(core.question)) return undefined;
    const key = questionKey(core.question);
    if (this.asked.get(planId)?.key === key) return undefined;
    // The step's fact keys are in the plan, not the question: one checkpoint read, once per question.
    const snapshot = await this.threads.snapshot(planId);
    const question = pendingOf(snapshot);
    if (!question || questionKey(question) !== key || this.asked.get(planId)?.key === key) return undefined;
    const withdraw = new AbortController();
    this.asked.set(planId, { key, withdraw });
    const plan = (snapshot.values as { plan?: { steps: { id: string; produces?: string[] }[] } }).plan;
    const step = question.stepId ? plan?.steps.find((s) => s.id === question.stepId) : undefined;
    const asked = question.kind === "escalation" ? question.context.step?.produces : undefined;
    return { planId, question, key, produces: step?.produces ?? asked, signal: withdraw.signal };
  }

  /**
   * The plan's question was answered: a form still open for it is withdrawn, and the question is
   * forgotten (its run is going on, so it is not read again; the same question asked again later is new).
   */
  answered(planId: string): void {
    this.asked.get(planId)?.withdraw.abort();
    this.asked.delete(planId);
  }

  /** The plan is gone: nothing of it is kept. */
  forget(planId: string): void {
    this.answered(planId);
    this.followers.delete(planId);
  }
}
