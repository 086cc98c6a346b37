/**
 * Rolling horizon (docs/architecture.md "Long goals"): a plan drafted a few steps at a time and extended as it goes.
 */
import { Command, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import type { ExtendRequest } from "../../src/contracts/planner.js";
import { requestScopeChange } from "../../src/graph/scope-change.js";
import { staticPlanner } from "../../src/planners/static-planner.js";
import type { PlanDraft } from "../../src/plan/schema/plan.js";
import type { Step } from "../../src/plan/schema/step.js";
import { AssumptionBrokenError } from "../../src/errors.js";
import { planMetrics } from "../../src/views/metrics.js";
import { planAtVersion } from "../../src/plan/history.js";
import { replanRecords } from "../../src/views/index.js";
import { userView } from "../../src/views/user-view.js";
import { operatorView } from "../../src/views/operator-view.js";
import { harness, scriptedTool, type Loose } from "../helpers/graph.js";
import { fakeClock } from "../helpers/clock.js";

const step = (n: number, extra: Partial<Step> = {}): Step => ({
  id: `s${n}`,
  goal: `Step ${n}`,
  tool: "work",
  produces: [`r${n}`],
  ...(n > 1 ? { dependsOn: [`s${n - 1}`] } : {}),
  ...extra,
});
const worker = () => scriptedTool("work", [(args: Record<string, unknown>) => ({ ok: true, ...args })]);
/** Each tool output becomes the fact r<n>: the tool returns its args, so r<n> is set via args. */
const stepWithOutput = (n: number, extra: Partial<Step> = {}): Step => ({ ...step(n, extra), args: { [`r${n}`]: n } });

/** A goal of `total` steps planned `ahead` at a time. */
function rollingPlanner(total: number, ahead: number, requests: ExtendRequest[] = []) {
  const batch = (from: number): PlanDraft => {
    const to = Math.min(total, from + ahead - 1);
    const steps = Array.from({ length: to - from + 1 }, (_, i) => stepWithOutput(from + i));
    return { steps, complete: to === total };
  };
  return staticPlanner({
    plan: batch(1),
    extend: (req) => {
      requests.push(structuredClone({ ...req, validate: undefined, reportUsage: undefined }) as never);
      return batch(req.plan.steps.length + 1);
    },
  });
}

describe("rolling horizon", () => {
  it("extends a plan that is not complete until the goal is covered, one plan version per extension", async () => {
    const requests: ExtendRequest[] = [];
    const work = worker();
    const h = harness(rollingPlanner(5, 2, requests), [work]);
    const out = await h.run();
    expect(out.status).toBe("completed");
    expect(work.calls.map((c) => Object.keys(c)[0])).toEqual(["r1", "r2", "r3", "r4", "r5"]);
    expect(out.plan.version).toBe(3);
    expect(out.plan.complete).toBeUndefined();
    expect(out.replans.map((r: Loose) => [r.trigger, r.scope, r.fromVersion, r.toVersion, r.newSteps])).toEqual([
      ["horizon", "extend", 1, 2, ["s3", "s4"]],
      ["horizon", "extend", 2, 3, ["s5"]],
    ]);
    // Compact extension records (docs/decisions/0050-compact-extension-records.md): what was added, a kept count,
    // the facts new since the record before; read back whole by replanRecords.
    expect(out.replans[1]).toEqual({
      kind: "extend",
      trigger: "horizon",
      scope: "extend",
      fromVersion: 2,
      toVersion: 3,
      invalidatedSteps: [],
      keptCount: 4,
      newSteps: ["s5"],
      facts: { trusted: ["r3", "r4"], suspect: [], invalidated: [] },
      at: out.replans[1].at,
    });
    expect(out.planHistory.map((e: Loose) => [e.version, e.keptCount, e.order])).toEqual([
      [2, 2, undefined],
      [3, 4, undefined],
    ]);
    const full = replanRecords(out as never);
    expect(full.map((r) => [r.preservedSteps, r.facts.trusted])).toEqual([
      [
        ["s1", "s2"],
        ["r1", "r2"],
      ],
      [
        ["s1", "s2", "s3", "s4"],
        ["r1", "r2", "r3", "r4"],
      ],
    ]);
    expect(requests.map((r) => [r.extensions, r.done.map((d) => `${d.id}:${d.status}`), r.facts.trusted])).toEqual([
      [0, ["s1:succeeded", "s2:succeeded"], { r1: 1, r2: 2 }],
      [1, ["s1:succeeded", "s2:succeeded", "s3:succeeded", "s4:succeeded"], { r1: 1, r2: 2, r3: 3, r4: 4 }],
    ]);
    expect(out.decisions).toEqual([]);
    const metrics = planMetrics(out as never);
    expect([metrics.replans, metrics.extensions]).toEqual([0, 2]);
    expect(operatorView(out as never, { now: 0 })[5]).toBe("plan_version: 3, no replans triggered, 2 extensions");
    expect(planAtVersion(out as never, 1)!.steps.map((s) => s.id)).toEqual(["s1", "s2"]);
    expect(planAtVersion(out as never, 2)!.steps.map((s) => s.id)).toEqual(["s1", "s2", "s3", "s4"]);
  });

  it("rejects a draft that is not complete from a planner that cannot extend, before any tool runs", async () => {
    const work = worker();
    const h = harness({ steps: [stepWithOutput(1)], complete: false }, [work]);
    const out = await h.run();
    expect(out.status).toBe("failed");
    expect(out.outcome.failureReason).toBe("invalid_plan");
    expect(out.outcome.issues).toEqual([
      {
        code: "horizon_without_extend",
        path: ["complete"],
        message:
          "the draft says it is not complete (complete: false), but the planner has no extend function to plan the rest",
      },
    ]);
    expect(work.calls).toEqual([]);
  });

  it("escalates with guard.max-extensions at the limit; a person's retry grants one more, abort ends the run", async () => {
    const work = worker();
    let asked = 0;
    const planner = staticPlanner({
      plan: { steps: [stepWithOutput(1)], complete: false },
      extend: (req) => {
        asked += 1;
        return { steps: [stepWithOutput(req.plan.steps.length + 1)], complete: false };
      },
    });
    const h = harness(planner, [work], { policy: { maxExtensions: 1 } });
    let out = await h.run();
    expect([out.status, asked, out.plan.version]).toEqual(["awaiting_human", 1, 2]);
    expect(out.decisions.map((d: Loose) => [d.rule, d.action, d.failureClass])).toEqual([
      ["guard.max-extensions", "escalate", "none"],
    ]);
    expect(out.decisions[0].reason).toBe(
      "the plan was extended 1 times and is still not complete (policy.maxExtensions = 1)",
    );
    expect(out.__interrupt__[0].value.options).toEqual(["retry", "skip", "abort"]);
    expect(operatorView(out as never, { now: 0 })[5]).toBe(
      "plan_version: 2, no replans triggered, 1 extension; more steps to be planned",
    );
    out = await h.run(new Command({ resume: { action: "retry" } }));
    expect([out.status, asked, out.plan.version, work.calls.length]).toEqual(["awaiting_human", 2, 3, 3]);
    expect(out.decisions.at(-1).reason).toBe(
      "the plan was extended 2 times and is still not complete (policy.maxExtensions = 1, 1 more granted by a person)",
    );
    out = await h.run(new Command({ resume: { action: "abort", reason: "enough" } }));
    expect([out.status, asked]).toEqual(["aborted", 2]);
  });

  it("shows how far the plan looks ahead while the next steps are being planned", () => {
    const state = {
      plan: { version: 1, steps: [step(1), step(2)], assumptions: [], complete: false },
      steps: { s1: { status: "succeeded", attempts: 1 }, s2: { status: "succeeded", attempts: 1 } },
      status: "running",
    } as never;
    expect(userView(state)).toEqual(["✓ Step 1", "✓ Step 2", "2 of 2 planned steps done; planning the next steps"]);
  });
});

describe("extensions and the ladder", () => {
  it("replans locally inside the current horizon, then goes on extending", async () => {
    const work = scriptedTool("work", [
      (args: Record<string, unknown>) => {
        if (args.r3 === 3 && !args.retry) throw new AssumptionBrokenError("mirror_up", "the mirror is down");
        return { ...args };
      },
    ]);
    const requests: ExtendRequest[] = [];
    const planner = staticPlanner({
      plan: { steps: [stepWithOutput(1), stepWithOutput(2)], complete: false },
      extend: (req) => {
        requests.push(req);
        if (req.extensions === 0)
          return {
            steps: [stepWithOutput(3, { assumptions: ["mirror_up"] }), stepWithOutput(4)],
            assumptions: [{ id: "mirror_up", statement: "the mirror answers" }],
            complete: false,
          };
        return { steps: [stepWithOutput(5)], complete: true };
      },
      replan: (req) => ({
        steps: req.affectedSteps.map((s) => ({ ...s, assumptions: [], args: { ...s.args, retry: true } })),
      }),
    });
    const out = await harness(planner, [work]).run();
    expect(out.status).toBe("completed");
    expect(out.replans.map((r: Loose) => `${r.scope} v${r.fromVersion}->v${r.toVersion}`)).toEqual([
      "extend v1->v2",
      "local v2->v3",
      "extend v3->v4",
    ]);
    expect(out.replans[1].invalidatedSteps).toEqual([]);
    expect(requests.map((r) => r.done.length)).toEqual([2, 4]);
    const metrics = planMetrics(out as never);
    expect([metrics.replans, metrics.localReplans, metrics.extensions]).toEqual([1, 1, 2]);
  });

  it("reviews each extension under reviewReplans, and plans a scope change made between two extensions", async () => {
    const work = worker();
    const planner = staticPlanner({
      plan: { steps: [stepWithOutput(1)], complete: false },
      extend: (req) => {
        const n = req.plan.steps.length + 1;
        const after = req.plan.steps.at(-1)!.id;
        return { steps: [stepWithOutput(n, { dependsOn: [after] })], complete: req.extensions === 1 };
      },
      // The global replan re-plans the rest of the goal, and says it is not done yet.
      replan: (req) => ({
        steps: [...req.affectedSteps, { id: "notify", goal: "Notify", tool: "work", args: { note: "scope" } }],
        complete: false,
      }),
    });
    const h = harness(planner, [work], { reviewPlan: true, reviewReplans: true });
    expect((await h.run()).status).toBe("awaiting_review");
    let out = await h.run(new Command({ resume: { action: "approve" } }));
    expect(out.status).toBe("awaiting_review");
    const review = out.__interrupt__[0].value;
    expect([review.kind, review.reason, review.planVersion]).toEqual([
      "plan_review",
      "approve plan version 2 (extension 1: 1 more steps)",
      2,
    ]);
    expect(review.context.replan.newSteps).toEqual(["s2"]);
    await requestScopeChange(h.graph, h.config, "also notify the customer");
    out = await h.run(new Command({ resume: { action: "approve" } }));
    // The scope change is planned at the next step boundary: a global replan, reviewed too.
    expect(out.status).toBe("awaiting_review");
    out = await h.run(new Command({ resume: { action: "approve" } }));
    expect(out.status).toBe("awaiting_review");
    out = await h.run(new Command({ resume: { action: "approve" } }));
    expect(out.status).toBe("completed");
    expect(out.replans.map((r: Loose) => `${r.trigger.split(":")[0]} ${r.scope} v${r.toVersion}`)).toEqual([
      "horizon extend v2",
      "scope.replan-global global v3",
      "horizon extend v4",
    ]);
    expect(out.plan.steps.map((s: Step) => s.id)).toEqual(["s1", "s2", "notify", "s4"]);
    expect(work.calls.length).toBe(4);
  });

  it("refuses an extension that reuses the id of a step a replan removed, naming it", async () => {
    const work = scriptedTool("work", [
      (args: Record<string, unknown>) => {
        if (args.r2 === 2) throw new AssumptionBrokenError("mirror_up", "the mirror is down");
        return { ...args };
      },
    ]);
    const planner = staticPlanner({
      plan: {
        steps: [stepWithOutput(1), stepWithOutput(2, { assumptions: ["mirror_up"] })],
        assumptions: [{ id: "mirror_up", statement: "the mirror answers" }],
        complete: false,
      },
      replan: () => ({ steps: [{ id: "alt", goal: "Alternative", tool: "work", args: { alt: 1 } }] }),
      extend: (req) => {
        expect(req.usedIds).toEqual(["s1", "alt", "s2"]);
        return { steps: [stepWithOutput(2)], complete: true };
      },
    });
    const out = await harness(planner, [work]).run();
    expect(out.status).toBe("awaiting_human");
    expect(out.decisions.map((d: Loose) => d.rule)).toEqual(["assumption.replan-local", "replan.invalid-draft"]);
    expect(out.decisions[1].reason).toContain(
      'step id "s2" belonged to a step an earlier plan version removed; use a new id',
    );
    expect(out.__interrupt__[0].value.options).toEqual(["retry", "skip", "abort"]);
    // A person accepts the work done: no more steps are planned, the run ends.
    const h = harness(planner, [work]);
    await h.run();
    const end = await h.run(new Command({ resume: { action: "skip" } }));
    expect([end.status, end.plan.complete, end.decisions.at(-1).rule]).toEqual(["completed", undefined, "human.skip"]);
  });

  it("never asks for the same extension twice across a stop and a resume in a new process", async () => {
    const checkpointer = new MemorySaver();
    const requests: ExtendRequest[] = [];
    const work = worker();
    const first = harness(rollingPlanner(4, 2, requests), [work], { checkpointer });
    // Stop right after the first extension is checkpointed (as a crash between two extend calls would).
    const stopped = first.graph.withConfig({ interruptAfter: ["extender"] } as never);
    await stopped.invoke({ goal: "long goal", context: {} } as never, first.config);
    expect(requests.length).toBe(1);
    const second = harness(rollingPlanner(4, 2, requests), [work], { checkpointer });
    const out = (await second.graph.invoke(null as never, second.config)) as Loose;
    expect(out.status).toBe("completed");
    expect(requests.length).toBe(1);
    expect(work.calls.length).toBe(4);
  });

  it("holds an extension that brings a new side-effecting tool for a person (guard.new-capability); approve commits it", async () => {
    const work = worker();
    const pay = scriptedTool("send_payment", [{ paid: true }], { sideEffects: ["payments"] });
    const planner = staticPlanner({
      plan: { steps: [stepWithOutput(1)], complete: false },
      extend: () => ({ steps: [{ id: "pay", goal: "Pay", tool: "send_payment", args: { to: "ACC-1" } }] }),
    });
    const h = harness(planner, [work, pay]);
    let out = await h.run();
    expect([out.status, out.plan.version, pay.calls.length]).toEqual(["awaiting_review", 1, 0]);
    expect(out.decisions.map((d: Loose) => d.rule)).toEqual(["guard.new-capability"]);
    const review = out.__interrupt__[0].value;
    expect([review.kind, review.context.tools, review.options]).toEqual([
      "plan_review",
      "send_payment",
      ["approve", "reject", "abort"],
    ]);
    out = await h.run(new Command({ resume: { action: "approve" } }));
    expect([out.status, out.plan.version, pay.calls.length]).toEqual(["completed", 2, 1]);
    expect(out.replans.map((r: Loose) => r.scope)).toEqual(["extend"]);
    expect(out.decisions.map((d: Loose) => d.rule)).toEqual(["guard.new-capability", "human.approve-replan"]);
  });

  it("with steps running side by side, asks for an extension only once nothing is running or ready", async () => {
    const log: string[] = [];
    const clock = fakeClock();
    const slow = scriptedTool("fetch", [
      async (args: Record<string, unknown>) => {
        log.push(`start ${args.part}`);
        await new Promise((resolve) => setTimeout(resolve, args.part === "a" ? 60 : 5));
        log.push(`end ${args.part}`);
        return { [`part_${args.part}`]: true };
      },
    ]);
    const part = (p: string): Step => ({
      id: p,
      goal: `Part ${p}`,
      tool: "fetch",
      args: { part: p },
      produces: [`part_${p}`],
    });
    const planner = staticPlanner({
      plan: { steps: [part("a"), part("b"), part("c")], complete: false },
      extend: (req) => {
        log.push(`extend after ${req.done.map((d) => `${d.id}:${d.status}`).join(",")}`);
        return { steps: [{ ...part("d"), dependsOn: ["a", "b", "c"] }], complete: true };
      },
    });
    const out = await harness(planner, [slow], { clock, policy: { maxConcurrency: 4 } }).run();
    expect(out.status).toBe("completed");
    expect(log.slice(0, 3)).toEqual(["start a", "start b", "start c"]);
    expect(log.indexOf("end a")).toBeLessThan(log.findIndex((l) => l.startsWith("extend")));
    expect(log.filter((l) => l.startsWith("extend"))).toEqual(["extend after a:succeeded,b:succeeded,c:succeeded"]);
    expect(log.slice(-2)).toEqual(["start d", "end d"]);
  });
});

describe("the extend request of a long plan", () => {
  // docs/decisions/0030-long-runs-per-step-cost.md: `done`, `facts` and `usedIds` are built when first read.
  it("shows its lists to JSON and Object.keys, and lets a planner replace them", async () => {
    const seen: unknown[] = [];
    const planner = staticPlanner({
      plan: { steps: [stepWithOutput(1)], complete: false },
      extend: (req) => {
        seen.push(Object.keys(req).filter((k) => ["done", "facts", "usedIds"].includes(k)));
        seen.push(JSON.parse(JSON.stringify({ done: req.done, facts: req.facts, usedIds: req.usedIds })));
        req.usedIds = ["mine"];
        req.done.push({ id: "x", goal: "x", tool: null, status: "pending" });
        seen.push([req.usedIds, req.done.length]);
        return { steps: [stepWithOutput(2)], complete: true };
      },
    });
    const out = await harness(planner, [worker()]).run();
    expect(out.status).toBe("completed");
    expect(seen).toEqual([
      ["done", "facts", "usedIds"],
      {
        done: [{ id: "s1", goal: "Step 1", tool: "work", status: "succeeded" }],
        facts: { trusted: { r1: 1 } },
        usedIds: ["s1"],
      },
      [["mine"], 2],
    ]);
  });
});
