import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createPlanManager, staticPlanner, TransientError, type PlanDraft } from "../../src/index.js";
import { managerWrite } from "../../src/graph/boundary.js";
import { operatorView, userView } from "../../src/views/index.js";
import { fakeClock } from "../helpers/clock.js";
import { brief, harness, httpError, scriptedTool, type Loose } from "../helpers/graph.js";

/** A promise the test settles by hand, so the order of events is fixed without timing. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

const tick = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms));

/** Tools whose behaviour per name is given by the test; every call and its configurable is logged. */
function tools(behaviour: Record<string, (args: Record<string, unknown>) => Promise<unknown> | unknown>) {
  const log: { name: string; event: "start" | "end"; key?: string }[] = [];
  const inFlight = { now: 0, max: 0 };
  const made = Object.entries(behaviour).map(([name, run]) =>
    tool(
      async (args: Record<string, unknown>, config) => {
        const key = (config as { configurable?: { idempotencyKey?: string } }).configurable?.idempotencyKey;
        log.push({ name, event: "start", ...(key ? { key } : {}) });
        inFlight.max = Math.max(inFlight.max, ++inFlight.now);
        try {
          return await run(args);
        } finally {
          inFlight.now--;
          log.push({ name, event: "end" });
        }
      },
      { name, description: name, schema: z.object({}).passthrough() },
    ),
  );
  const order = () => log.map((e) => `${e.event} ${e.name}`);
  return { made, log, inFlight, order };
}

const plan = (steps: PlanDraft["steps"], assumptions: PlanDraft["assumptions"] = []): PlanDraft => ({
  steps,
  assumptions,
});

describe("steps running at the same time", () => {
  it("starts a step the moment it is ready while a slow sibling still runs (no barrier)", async () => {
    const slow = gate();
    const t = tools({
      slow: () => slow.opened.then(() => ({ s: 1 })),
      fast: () => ({ f: 1 }),
      next: () => {
        slow.open();
        return { n: 1 };
      },
    });
    const h = harness(
      plan([
        { id: "slow", goal: "slow", tool: "slow", produces: ["s"] },
        { id: "fast", goal: "fast", tool: "fast", produces: ["f"] },
        { id: "next", goal: "next", tool: "next", inputs: ["f"], dependsOn: ["fast"] },
      ]),
      t.made,
    );
    const out = await h.run();
    expect(out.status).toBe("completed");
    // "next" ran before "slow" ended: with a barrier it would wait for "slow" (which waits for it).
    expect(t.order()).toEqual(["start slow", "start fast", "end fast", "start next", "end next", "end slow"]);
  });

  it("runs one step at a time, in plan order, with maxConcurrency 1", async () => {
    const t = tools({ a: () => tick().then(() => 1), b: () => tick().then(() => 2), c: () => 3 });
    const h = harness(
      plan([
        { id: "a", goal: "a", tool: "a" },
        { id: "b", goal: "b", tool: "b" },
        { id: "c", goal: "c", tool: "c", dependsOn: ["a"] },
      ]),
      t.made,
      { policy: { maxConcurrency: 1 } },
    );
    expect((await h.run()).status).toBe("completed");
    expect(t.order()).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
    expect(t.inFlight.max).toBe(1);
  });

  it("never runs more than maxConcurrency steps, and step_started carries how many run", async () => {
    const t = tools({ w: () => tick().then(() => ({})) });
    const steps = ["s1", "s2", "s3", "s4", "s5"].map((id) => ({ id, goal: id, tool: "w" }));
    const h = harness(plan(steps), t.made, { policy: { maxConcurrency: 2 } });
    const started: number[] = [];
    const stream = await h.graph.stream({ goal: "g" } as never, { ...h.config, streamMode: "custom" });
    for await (const e of stream) if ((e as Loose).type === "step_started") started.push((e as Loose).running);
    expect(t.inFlight.max).toBe(2);
    expect(started.slice(0, 2)).toEqual([1, 2]);
    expect(started.every((n) => n >= 1 && n <= 2)).toBe(true);
    expect((await h.state()).status).toBe("completed");
  });

  it("the user and operator views show steps running together", async () => {
    const release = gate();
    const t = tools({
      quick: () => ({ q: 1 }),
      a: () => release.opened.then(() => ({})),
      b: () => release.opened.then(() => ({})),
    });
    const h = harness(
      plan([
        { id: "quick", goal: "Quick look", tool: "quick", produces: ["q"] },
        { id: "a", goal: "Verifying identity", tool: "a", dependsOn: ["quick"] },
        { id: "b", goal: "Pulling credit", tool: "b", dependsOn: ["quick"] },
      ]),
      t.made,
    );
    const run = h.run();
    // The checkpoint after "quick" ended shows the two steps it made ready running.
    while ((await h.state()).steps?.b?.status !== "running") await tick(1);
    const state = (await h.state()) as never;
    expect(userView(state)).toEqual([
      "✓ Quick look",
      "… Verifying identity",
      "… Pulling credit",
      "Running together: Verifying identity; Pulling credit.",
    ]);
    expect(operatorView(state, { now: 0 })[0]).toBe("step: a (+1 running: b)");
    release.open();
    expect((await run).status).toBe("completed");
  });

  it("never overlaps steps sharing a sideEffects entry; they start in plan order", async () => {
    const first = gate();
    const t = tools({
      warmup: () => first.opened.then(() => ({ w: 1 })),
      charge: (a) => tick().then(() => ({ id: a.n })),
      other: () => {
        first.open();
        return {};
      },
    });
    const h = harness(
      plan([
        { id: "warmup", goal: "w", tool: "warmup", produces: ["w"] },
        { id: "pay1", goal: "p1", tool: "charge", args: { n: 1 }, sideEffects: ["payments"], dependsOn: ["warmup"] },
        { id: "pay2", goal: "p2", tool: "charge", args: { n: 2 }, sideEffects: ["payments"] },
        { id: "other", goal: "o", tool: "other" },
      ]),
      t.made,
    );
    expect((await h.run()).status).toBe("completed");
    // pay2 was ready first but waits for pay1 (earlier in the plan, same resource); "other" did not wait.
    expect(t.order()).toEqual([
      "start warmup",
      "start other",
      "end other",
      "end warmup",
      "start charge",
      "end charge",
      "start charge",
      "end charge",
    ]);
    expect((await h.state()).steps.pay1.endedAt <= (await h.state()).steps.pay2.startedAt).toBe(true);
  });

  it("ends blocked, naming the holder, when a step waits for a resource whose earlier user can never run", async () => {
    const t = tools({ x: () => ({}), a: () => ({}), b: () => ({}) });
    const h = harness(
      plan([
        { id: "x", goal: "x", tool: "x" },
        { id: "a", goal: "a", tool: "a", sideEffects: ["db"], idempotent: true, dependsOn: ["x"] },
        { id: "b", goal: "b", tool: "b", sideEffects: ["db"], idempotent: true },
      ]),
      t.made,
      { reviewPlan: true },
    );
    expect((await h.run()).status).toBe("awaiting_review");
    // x can never finish: a waits for it, and b (same resource, later in the plan) waits for a.
    await h.graph.updateState(h.config, managerWrite({ steps: { x: { status: "invalidated", attempts: 1 } } }));
    const out = await h.run(new Command({ resume: { action: "approve" } }));
    expect(out.status).toBe("failed");
    expect(out.outcome.message).toBe('no step can run: waiting on b ("a" comes first on db)');
    expect(t.log).toEqual([]);
  });

  it("keeps a finished attempt across a crash while two others run; those two run again under the same keys", async () => {
    const checkpointer = new MemorySaver();
    const config = { configurable: { thread_id: "crash" } };
    const draft = plan([
      { id: "a", goal: "a", tool: "a", produces: ["x"] },
      { id: "b", goal: "b", tool: "b", sideEffects: ["ledger"], idempotent: false, args: { amount: 5 } },
      { id: "c", goal: "c", tool: "c", sideEffects: ["mail"], idempotent: false },
    ]);
    const hang = gate();
    const running = { b: gate(), c: gate() };
    const first = tools({
      a: () => Promise.all([running.b.opened, running.c.opened]).then(() => ({ x: 1 })),
      b: () => (running.b.open(), hang.opened),
      c: () => (running.c.open(), hang.opened),
    });
    const graph1 = createPlanManager({ tools: first.made, planner: staticPlanner({ plan: draft }) }).compile({
      checkpointer,
    });
    void graph1.invoke({ goal: "g" } as never, config);
    // "a" is durable once the checkpoint shows it succeeded, while "b" and "c" are still running.
    while ((await graph1.getState(config)).values.steps?.a?.status !== "succeeded") await tick(1);
    expect(first.order()).toEqual(["start a", "start b", "start c", "end a"]);
    // The process dies: b and c never report back. A new process reads the same checkpoints.
    const afterCrash = new MemorySaver();
    afterCrash.storage = checkpointer.storage;
    afterCrash.writes = checkpointer.writes;

    const second = tools({ a: () => ({ x: 2 }), b: () => ({}), c: () => ({}) });
    const graph2 = createPlanManager({ tools: second.made, planner: staticPlanner({ plan: draft }) }).compile({
      checkpointer: afterCrash,
    });
    const out = (await graph2.invoke(null as never, config)) as Loose;
    expect(out.status).toBe("completed");
    expect(second.log.filter((e) => e.event === "start").map((e) => e.name)).toEqual(["b", "c"]);
    const keys = (log: typeof first.log) => log.filter((e) => e.key).map((e) => `${e.name}:${e.key}`);
    expect(keys(second.log)).toEqual(keys(first.log));
    expect(keys(second.log)).toHaveLength(2);
    expect(out.facts.x.value).toBe(1);
    expect(out.sideEffects.map((e: Loose) => e.stepId).sort()).toEqual(["b", "c"]);
  });

  it("starts nothing new after a deviation; running steps finish and keep their results; classified in order", async () => {
    const bGate = gate();
    const started = { b: gate(), keep: gate() };
    let aCalls = 0;
    let bCalls = 0;
    const t = tools({
      a: async () => {
        if (++aCalls > 1) return {};
        // Fails once b and keep are running; they end only after the failure is in.
        await Promise.all([started.b.opened, started.keep.opened]);
        setTimeout(() => bGate.open(), 5);
        throw new TransientError("a busy");
      },
      b: () => {
        started.b.open();
        return bGate.opened.then(() => (++bCalls === 1 ? Promise.reject(new TransientError("b busy")) : {}));
      },
      keep: () => {
        started.keep.open();
        return bGate.opened.then(() => ({ k: 1 }));
      },
      d: () => ({}),
    });
    const h = harness(
      plan([
        { id: "a", goal: "a", tool: "a" },
        { id: "b", goal: "b", tool: "b" },
        { id: "keep", goal: "keep", tool: "keep", produces: ["k"] },
        { id: "d", goal: "d", tool: "d" },
      ]),
      t.made,
      { policy: { maxConcurrency: 3, defaultRetry: { backoff: "none" } } },
    );
    const out = await h.run();
    expect(out.status).toBe("completed");
    expect(brief(out.decisions)).toEqual([
      "a: transient → retry [transient.retry]",
      "b: transient → retry [transient.retry]",
    ]);
    // "d" waited for a slot; after a's failure nothing new started until b and keep had finished.
    const order = t.order();
    expect(order.slice(0, 4)).toEqual(["start a", "start b", "start keep", "end a"]);
    expect(order.indexOf("start d")).toBeGreaterThan(order.lastIndexOf("end keep"));
    expect(order.indexOf("start d")).toBeGreaterThan(order.indexOf("end b"));
    expect(out.steps.keep).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(out.facts.k.label).toBe("trusted");
  });

  it("a human step waits until running steps have finished, then interrupts", async () => {
    const t = tools({ slow: () => tick(20).then(() => ({ s: 1 })) });
    const h = harness(
      plan([
        { id: "slow", goal: "slow", tool: "slow", produces: ["s"] },
        { id: "ask", goal: "ask", human: { prompt: "ok?" } },
      ]),
      t.made,
    );
    const out = await h.run();
    expect(out.status).toBe("awaiting_human");
    expect(out.steps.slow).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(out.pendingHuman.kind).toBe("human_step");
    expect(t.order()).toEqual(["start slow", "end slow"]);
  });

  it("a waiting human step lets independent ready work run first, and asks only when nothing else can run", async () => {
    const t = tools({ a: () => ({ x: 1 }), b: () => ({ y: 2 }), c: () => ({ z: 3 }) });
    const h = harness(
      plan([
        { id: "approve", goal: "approve", human: { prompt: "ok?" }, produces: ["ok"] },
        { id: "a", goal: "a", tool: "a", produces: ["x"] },
        { id: "b", goal: "b", tool: "b", dependsOn: ["a"], produces: ["y"] },
        { id: "c", goal: "c", tool: "c", dependsOn: ["approve"], produces: ["z"] },
      ]),
      t.made,
    );
    const paused = await h.run();
    expect(paused.status).toBe("awaiting_human");
    expect(paused.__interrupt__[0].value).toMatchObject({ kind: "human_step", stepId: "approve" });
    expect(t.order()).toEqual(["start a", "end a", "start b", "end b"]);
    expect(paused.steps.a).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(paused.steps.b).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(paused.steps.approve.status).toBe("running");
    expect(paused.steps.c).toBeUndefined();
    const out = await h.run(new Command({ resume: { action: "complete", output: { ok: true } } }));
    expect(out.status).toBe("completed");
    expect(t.order()).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
    expect(out.steps.approve).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(out.facts.ok).toMatchObject({ value: true, producedBy: "approve" });
    expect(out.steps.c).toMatchObject({ status: "succeeded", attempts: 1 });
  });

  it("an independent step failing while a human step waits is escalated first; the human step is asked after", async () => {
    const h = harness(
      plan([
        { id: "approve", goal: "approve", human: { prompt: "ok?" }, produces: ["ok"] },
        { id: "a", goal: "a", tool: "t" },
      ]),
      [scriptedTool("t", [httpError(400, "bad request")])],
    );
    const escalated = await h.run();
    expect(escalated.__interrupt__[0].value).toMatchObject({ kind: "escalation", stepId: "a" });
    expect(escalated.steps.a.status).toBe("failed");
    expect(escalated.steps.approve).toBeUndefined();
    const asked = await h.run(new Command({ resume: { action: "skip" } }));
    expect(asked.__interrupt__[0].value).toMatchObject({ kind: "human_step", stepId: "approve" });
    expect(asked.steps.a).toMatchObject({ status: "skipped", skipReason: "human" });
    const out = await h.run(new Command({ resume: { action: "complete", output: { ok: true } } }));
    // A step a person skipped makes the run partial.
    expect(out.status).toBe("partial");
    expect(out.steps.approve).toMatchObject({ status: "succeeded", attempts: 1 });
  });

  it("two independent human steps are asked one at a time, in plan order, after the tool work", async () => {
    const t = tools({ x: () => ({ x: 1 }) });
    const h = harness(
      plan([
        { id: "ask1", goal: "ask1", human: { prompt: "one?" }, produces: ["one"] },
        { id: "ask2", goal: "ask2", human: { prompt: "two?" }, produces: ["two"] },
        { id: "x", goal: "x", tool: "x", produces: ["x"] },
      ]),
      t.made,
    );
    const first = await h.run();
    expect(first.__interrupt__.map((i: Loose) => i.value.stepId)).toEqual(["ask1"]);
    expect(t.order()).toEqual(["start x", "end x"]);
    expect(first.steps.ask2).toBeUndefined();
    const second = await h.run(new Command({ resume: { action: "complete", output: { one: 1 } } }));
    expect(second.__interrupt__.map((i: Loose) => i.value.stepId)).toEqual(["ask2"]);
    const out = await h.run(new Command({ resume: { action: "complete", output: { two: 2 } } }));
    expect(out.status).toBe("completed");
    expect(t.order()).toEqual(["start x", "end x"]);
  });

  it("a local replan keeps finished work outside its scope", async () => {
    const t = tools({
      check: () => {
        throw new TransientError("down");
      },
      alt: () => ({ ok: true }),
      side: () => tick(10).then(() => ({ y: 1 })),
    });
    const draft = plan(
      [
        { id: "check", goal: "check", tool: "check", assumptions: ["A"], retry: { maxAttempts: 1 } },
        { id: "side", goal: "side", tool: "side", produces: ["y"] },
      ],
      [{ id: "A", statement: "the check service works" }],
    );
    const planner = staticPlanner({
      plan: draft,
      replan: () => ({ steps: [{ id: "check2", goal: "check another way", tool: "alt" }] }),
    });
    const h = harness(planner, t.made);
    const out = await h.run();
    expect(out.status).toBe("completed");
    expect(out.replans).toHaveLength(1);
    expect(out.replans[0]).toMatchObject({ scope: "local", preservedSteps: ["side"], newSteps: ["check2"] });
    expect(t.log.filter((e) => e.name === "side" && e.event === "start")).toHaveLength(1);
    expect(out.facts.y).toMatchObject({ value: 1, label: "trusted" });
  });

  it("halves a tool's concurrency on 429s, gives it back on successes, and completes with no step failing", async () => {
    let inFlight = 0;
    const api = tool(
      async () => {
        if (inFlight >= 2) throw httpError(429, "too many requests");
        inFlight++;
        await tick(3);
        inFlight--;
        return { ok: true };
      },
      { name: "api", description: "allows 2 calls at a time", schema: z.object({}).passthrough() },
    );
    const steps = ["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8"].map((id) => ({ id, goal: id, tool: "api" }));
    const clock = fakeClock();
    const graph = createPlanManager({
      tools: [api],
      planner: staticPlanner({ plan: plan(steps) }),
      clock,
      policy: { maxConcurrency: 4, defaultRetry: { maxAttempts: 8, backoff: "none" } },
    }).compile({ checkpointer: new MemorySaver() });
    const out = (await graph.invoke({ goal: "g" } as never, { configurable: { thread_id: "rl" } })) as Loose;
    expect(out.status).toBe("completed");
    expect(Object.values(out.steps).map((s) => (s as Loose).status)).toEqual(Array(8).fill("succeeded"));
    const limits = out.decisions.filter((d: Loose) => d.rule === "rate.limit").map((d: Loose) => d.reason);
    expect(limits[0]).toBe("api may run 2 calls at a time (was 4): rate limited with 4 calls running");
    expect(limits.some((r: string) => r.endsWith("a call succeeded"))).toBe(true);
    const throttled = out.decisions.filter((d: Loose) => d.rule === "transient.retry").length;
    expect(throttled).toBeGreaterThanOrEqual(2);
  });

  it("property: any DAG, any maxConcurrency: each step once, never over the limit, shared resources apart", async () => {
    const dagArb = fc.integer({ min: 2, max: 9 }).chain((n) =>
      fc.record({
        deps: fc.array(fc.array(fc.nat(), { maxLength: 2 }), { minLength: n, maxLength: n }),
        resource: fc.array(fc.constantFrom(undefined, "ledger", "mail"), { minLength: n, maxLength: n }),
        latency: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: n, maxLength: n }),
        max: fc.integer({ min: 1, max: 4 }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(dagArb, async ({ deps, resource, latency, max }) => {
        const events: string[] = [];
        const running = new Set<string>();
        let peak = 0;
        const work = tool(
          async ({ id }: { id: string }) => {
            running.add(id);
            peak = Math.max(peak, running.size);
            events.push(`start ${id}`);
            await tick(latency[Number(id.slice(1))]!);
            running.delete(id);
            events.push(`end ${id}`);
            return {};
          },
          { name: "work", description: "work", schema: z.object({ id: z.string() }) },
        );
        const steps = deps.map((d, i) => ({
          id: `s${i}`,
          goal: `s${i}`,
          tool: "work",
          args: { id: `s${i}` },
          ...(i > 0 && d.length > 0 ? { dependsOn: [...new Set(d.map((x) => `s${x % i}`))] } : {}),
          ...(resource[i] ? { sideEffects: [resource[i]!], idempotent: true } : {}),
        }));
        const h = harness(plan(steps), [work], { policy: { maxConcurrency: max } });
        const out = await h.run();
        expect(out.status).toBe("completed");
        expect(events.filter((e) => e.startsWith("start")).sort()).toEqual(steps.map((s) => `start ${s.id}`).sort());
        expect(peak).toBeLessThanOrEqual(max);
        for (const step of steps) {
          const begin = events.indexOf(`start ${step.id}`);
          for (const dep of step.dependsOn ?? []) expect(events.indexOf(`end ${dep}`)).toBeLessThan(begin);
        }
        // Steps on one resource: the previous one on it ended before the next one started, in plan order.
        for (const r of ["ledger", "mail"]) {
          const on = steps.filter((s) => s.sideEffects?.[0] === r).map((s) => s.id);
          for (let i = 1; i < on.length; i++)
            expect(events.indexOf(`end ${on[i - 1]}`)).toBeLessThan(events.indexOf(`start ${on[i]}`));
        }
      }),
      { numRuns: 40, seed: 20261123 },
    );
  }, 60_000);
});
