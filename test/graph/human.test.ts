import { rmSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { createLoanTools, loanPlan } from "../../examples/loan/workflow.js";
import { fakeClock } from "../helpers/clock.js";
import { brief, harness, httpError, scriptedTool, type Loose } from "../helpers/graph.js";

const dirs: string[] = [];
function dbFile() {
  const dir = mkdtempSync(join(tmpdir(), "replan-"));
  dirs.push(dir);
  return join(dir, "checkpoints.sqlite");
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function loanGraph(file: string, tools = createLoanTools(), clock = fakeClock()) {
  const checkpointer = SqliteSaver.fromConnString(file);
  const graph = createPlanManager({ tools: tools.tools, planner: staticPlanner({ plan: loanPlan }), clock }).compile({
    checkpointer,
  });
  return { graph, checkpointer, ...tools, clock };
}

describe("human review through interrupts", () => {
  it("round-trips the human step on SQLite across two graph instances", async () => {
    const file = dbFile();
    const config = { configurable: { thread_id: "loan-A-7291" } };
    const first = loanGraph(file);
    const paused: Loose = await first.graph.invoke(
      { goal: "Process loan application A-7291", context: { applicant_id: "A-7291" } },
      config,
    );
    expect(paused.status).toBe("awaiting_human");
    expect(paused.__interrupt__[0].value).toMatchObject({
      kind: "human_step",
      stepId: "human_review",
      planVersion: 1,
      options: ["complete", "skip", "abort"],
    });
    first.checkpointer.db.close();

    // A new process would build a new graph on the same file: do exactly that.
    const ledger = first.ledger;
    const second = loanGraph(file, createLoanTools({ bureauFailures: 0, ledger }));
    const snapshot = await second.graph.getState(config);
    expect(snapshot.next).toEqual(["human"]);
    expect(snapshot.tasks[0]?.interrupts[0]?.value).toMatchObject({ kind: "human_step", stepId: "human_review" });
    const done: Loose = await second.graph.invoke(
      new Command({ resume: { action: "complete", output: { human_override: "approved" } } }),
      config,
    );
    expect(done.status).toBe("completed");
    expect(second.calls).toEqual(["issue_decision"]);
    expect(done.facts.human_override).toEqual({
      value: "approved",
      label: "trusted",
      producedBy: "human_review",
      planVersion: 1,
      assumptions: [],
      derivedFrom: ["applicant_id", "credit_score", "compliance_flag"],
      observedAt: "2026-01-01T00:00:00.000Z",
    });
    expect(done.sideEffects).toEqual([
      {
        stepId: "issue_decision",
        idempotencyKey: "loan-A-7291:cc7fd65e1cd171d8",
        at: "2026-01-01T00:00:00.000Z",
        output: { decision: "approved" },
      },
    ]);
    expect([...ledger.values()]).toEqual([{ applicant_id: "A-7291", decision: "approved" }]);
    second.checkpointer.db.close();
  });

  it("round-trips an escalation on SQLite and resumes with provide", async () => {
    const file = dbFile();
    const plan: PlanDraft = {
      steps: [
        { id: "score", goal: "Score", tool: "score", produces: ["score"] },
        { id: "use", goal: "Use score", tool: "use", dependsOn: ["score"], inputs: ["score"], produces: ["result"] },
      ],
    };
    const make = () => {
      const score = scriptedTool("score", [httpError(404)]);
      const use = scriptedTool("use", [(args: Record<string, unknown>) => ({ result: Number(args.score) * 2 })]);
      const checkpointer = SqliteSaver.fromConnString(file);
      return {
        checkpointer,
        score,
        use,
        graph: createPlanManager({ tools: [score, use], planner: staticPlanner({ plan }), clock: fakeClock() }).compile(
          { checkpointer },
        ),
      };
    };
    const config = { configurable: { thread_id: "esc" } };
    const a = make();
    const paused: Loose = await a.graph.invoke({ goal: "g" }, config);
    expect(paused.__interrupt__[0].value.kind).toBe("escalation");
    a.checkpointer.db.close();
    const b = make();
    const out: Loose = await b.graph.invoke(
      new Command({ resume: { action: "provide", facts: { score: 21 } } }),
      config,
    );
    expect(out.status).toBe("completed");
    expect(out.facts.score).toMatchObject({ value: 21, label: "trusted", producedBy: "human" });
    expect(out.facts.result.value).toBe(42);
    expect(out.steps.score).toMatchObject({ status: "succeeded", output: { score: 21 } });
    expect(b.score.calls).toHaveLength(0);
    expect(brief(out.decisions)).toEqual([
      "score: deterministic → escalate [deterministic.escalate]",
      "score: person → provide [human.provide]",
    ]);
    b.checkpointer.db.close();
  });

  it("round-trips a plan review on SQLite and runs after approval", async () => {
    const file = dbFile();
    const config = { configurable: { thread_id: "review" } };
    const make = () => {
      const t = scriptedTool("t", [{ x: 1 }]);
      const checkpointer = SqliteSaver.fromConnString(file);
      return {
        t,
        checkpointer,
        graph: createPlanManager({
          tools: [t],
          planner: staticPlanner({ plan: { steps: [{ id: "s", goal: "S", tool: "t", produces: ["x"] }] } }),
          reviewPlan: true,
        }).compile({ checkpointer }),
      };
    };
    const a = make();
    const paused: Loose = await a.graph.invoke({ goal: "g" }, config);
    expect(paused.status).toBe("awaiting_review");
    expect(paused.__interrupt__[0].value).toMatchObject({
      kind: "plan_review",
      planVersion: 1,
      options: ["approve", "abort"],
    });
    expect(a.t.calls).toHaveLength(0);
    a.checkpointer.db.close();
    const b = make();
    const out: Loose = await b.graph.invoke(new Command({ resume: { action: "approve" } }), config);
    expect(out.status).toBe("completed");
    expect(b.t.calls).toHaveLength(1);
    b.checkpointer.db.close();
  });

  it("escalates a human step answered after its deadline instead of completing it", async () => {
    const h = harness(loanPlan, createLoanTools({ bureauFailures: 0 }).tools, { context: { applicant_id: "A-7291" } });
    await h.run();
    h.clock.advance(49 * 3600 * 1000);
    const late = await h.run(new Command({ resume: { action: "complete", output: { human_override: "approved" } } }));
    expect(late.status).toBe("awaiting_human");
    expect(late.steps.human_review.status).toBe("running");
    expect(brief(late.decisions)).toEqual(["human_review: budget_exhausted → escalate [human.deadline-passed]"]);
    const payload = late.__interrupt__[0].value;
    expect(payload).toMatchObject({
      kind: "escalation",
      stepId: "human_review",
      options: ["complete", "retry", "skip", "provide", "abort"],
    });
    expect(payload.context.lateOutput).toEqual({ human_override: "approved" });
    expect(payload.reason).toBe('the answer to human step "human_review" came after its 172800000 ms deadline');
    const out = await h.run(new Command({ resume: { action: "complete", output: { human_override: "approved" } } }));
    expect(out.status).toBe("completed");
  });

  it("aborts on a person's answer, distinct from failed", async () => {
    const h = harness({ steps: [{ id: "s", goal: "S", tool: "t" }] }, [
      scriptedTool("t", [httpError(400, "bad request")]),
    ]);
    await h.run();
    const out = await h.run(new Command({ resume: { action: "abort", reason: "not worth it" } }));
    expect(out.status).toBe("aborted");
    expect(out.outcome).toEqual({
      summary: 'Aborted at step "s": not worth it. 0 of 1 steps succeeded.',
      failedStep: "s",
      failureReason: "aborted_by_human",
      message: "not worth it",
      recoverable: false,
    });
  });

  it("skips an escalated step on a person's answer and carries on", async () => {
    const plan: PlanDraft = {
      steps: [
        { id: "a", goal: "A", tool: "a" },
        { id: "b", goal: "B", tool: "b", dependsOn: ["a"] },
      ],
    };
    const b = scriptedTool("b", [{}]);
    const h = harness(plan, [scriptedTool("a", [httpError(410)]), b]);
    await h.run();
    const out = await h.run(new Command({ resume: { action: "skip" } }));
    // A person skipped required work: the run carries on but does not call itself completed.
    expect(out.status).toBe("partial");
    expect(out.outcome.summary).toBe(
      'Partly done "test goal" (not done: a): 1 of 2 steps succeeded, 1 skipped (plan v1).',
    );
    expect(out.steps.a).toMatchObject({ status: "skipped", skipReason: "human" });
    expect(b.calls).toHaveLength(1);
    expect(out.outcome.missing).toEqual([{ stepId: "a", goal: "A", facts: [], reason: "skipped by a person" }]);
  });

  it("asks again, with the error, when the resume value is malformed or not offered", async () => {
    const h = harness({ steps: [{ id: "a", goal: "A", tool: "a" }] }, [scriptedTool("a", [httpError(404), {}])]);
    await h.run();
    const bad = await h.run(new Command({ resume: { action: "launch_rockets" } }));
    expect(bad.__interrupt__[0].value.error).toBe(
      'invalid resume value: unknown action "launch_rockets"; choose one of: retry, skip, provide, abort (as { action: "..." })',
    );
    const malformed = await h.run(new Command({ resume: { action: "provide", facts: { "not a key": 1 } } }));
    expect(malformed.__interrupt__[0].value.error).toContain("invalid resume value: facts.not a key:");
    const notOffered = await h.run(new Command({ resume: { action: "approve" } }));
    expect(notOffered.__interrupt__[0].value.error).toBe(
      'action "approve" is not available here; choose one of: retry, skip, provide, abort',
    );
    const out = await h.run(new Command({ resume: { action: "retry" } }));
    expect(out.status).toBe("completed");
  });

  it("rejects a human step answer that misses its success signal and asks again", async () => {
    const h = harness(loanPlan, createLoanTools({ bureauFailures: 0 }).tools, { context: { applicant_id: "A-7291" } });
    await h.run();
    const bad = await h.run(new Command({ resume: { action: "complete", output: { human_override: "maybe" } } }));
    expect(bad.__interrupt__[0].value.error).toBe(
      'output does not meet the step\'s success signal "output.human_override in [\\"approved\\", \\"denied\\"]"',
    );
    const out = await h.run(new Command({ resume: { action: "complete", output: { human_override: "denied" } } }));
    expect(out.status).toBe("completed");
    expect(out.facts.decision.value).toBe("denied");
  });

  it("keeps working with MemorySaver for the whole loan workflow", async () => {
    const tools = createLoanTools();
    const graph = createPlanManager({
      tools: tools.tools,
      planner: staticPlanner({ plan: loanPlan }),
      clock: fakeClock(),
    }).compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "m" } };
    await graph.invoke({ goal: "loan", context: { applicant_id: "A-7291" } }, config);
    const out: Loose = await graph.invoke(
      new Command({ resume: { action: "complete", output: { human_override: "approved" } } }),
      config,
    );
    expect(tools.calls).toEqual([
      "verify_identity",
      "pull_credit",
      "pull_credit",
      "compliance_check",
      "issue_decision",
    ]);
    expect(brief(out.decisions)).toEqual([
      "pull_credit: transient → retry [transient.retry]",
      "human_review: person → complete [human.complete]",
    ]);
  });
});

describe("resumeRun", () => {
  it("refuses to resume a thread with no pending interrupt, clearly", async () => {
    const { resumeRun } = await import("../../src/index.js");
    const h = harness({ steps: [{ id: "a", goal: "A", tool: "a" }] }, [scriptedTool("a", [{}])]);
    await h.run();
    await expect(resumeRun(h.graph, h.config, { action: "retry" })).rejects.toThrow(
      'thread "t1" has no pending interrupt (status: completed); there is nothing to resume',
    );
  });

  it("rejects a bad value without sending it, and the thread still resumes with a correct one", async () => {
    const { resumeRun, isPlanManagerError } = await import("../../src/index.js");
    const h = harness({ steps: [{ id: "a", goal: "A", tool: "a" }] }, [scriptedTool("a", [httpError(404), {}])]);
    await h.run();
    const error = await resumeRun(h.graph, h.config, { action: "complete", output: 1 }).catch((e: unknown) => e);
    expect(isPlanManagerError(error) && error.code).toBe("invalid_resume");
    expect((error as Error).message).toBe(
      'thread "t1", escalation for step "a": action "complete" is not available here; choose one of: retry, skip, provide, abort',
    );
    const addressed = await resumeRun(h.graph, h.config, { "not-an-id": { action: "retry" } } as never).catch(
      (e: unknown) => e,
    );
    expect((addressed as Error).message).toContain("(a map of interrupt ids? not-an-id is not the pending interrupt)");
    expect((await h.state()).status).toBe("awaiting_human");
    const out = (await resumeRun(h.graph, h.config, { action: "retry" })) as { status: string };
    expect(out.status).toBe("completed");
  });
});

describe("what a human step shows", () => {
  it("shows the trusted values of the step's inputs, and no other fact", async () => {
    const quote = tool(async () => ({ price: 130, vendor: "acme" }), {
      name: "quote",
      description: "quotes a price",
      schema: z.object({}),
    });
    const graph = createPlanManager({
      tools: [quote],
      planner: staticPlanner({
        plan: {
          steps: [
            { id: "quote", goal: "Get a quote", tool: "quote", produces: ["price", "vendor"] },
            {
              id: "pay",
              goal: "Decide whether to pay",
              human: { prompt: "Pay this price?" },
              inputs: ["price"],
              produces: ["pay"],
              dependsOn: ["quote"],
            },
          ],
        },
      }),
    }).compile({ checkpointer: new MemorySaver() });
    const paused = await graph.invoke(
      { goal: "Buy the part", context: { budget: 200 } },
      { configurable: { thread_id: "price" } },
    );
    expect(paused.__interrupt__?.[0]?.value).toEqual({
      kind: "human_step",
      reason: "Pay this price?",
      stepId: "pay",
      planVersion: 1,
      options: ["complete", "skip", "abort"],
      context: { goal: "Buy the part", step: { id: "pay", goal: "Decide whether to pay" }, facts: { price: 130 } },
    });
  });
});
