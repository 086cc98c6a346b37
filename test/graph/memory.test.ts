import {
  InMemoryStore,
  MemorySaver,
  type BaseStore,
  type Operation,
  type OperationResults,
} from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import {
  AssumptionBrokenError,
  PermanentError,
  createPlanManager,
  staticPlanner,
  type PlanDraft,
  type PlanManagerOptions,
  type ReplanRequest,
} from "../../src/index.js";
import { debugView } from "../../src/views/index.js";
import { DEFAULT_MEMORY_NAMESPACE } from "../../src/policy/options.js";
import { entryRevision, outcomeKey, templateEntry, type MemoryEntry } from "../../src/policy/memory/memory.js";
import { entryScore, scoreEntry } from "../../src/runtime/replan-memory.js";
import { fakeClock } from "../helpers/clock.js";
import { scriptedTool, type Loose } from "../helpers/graph.js";

/** One shared fault: the primary source is down in every thread; the mirror works. */
const plan: PlanDraft = {
  assumptions: [{ id: "primary_up", statement: "the primary source answers" }],
  steps: [
    {
      id: "fetch",
      goal: "Fetch the applicant's record",
      tool: "fetch_primary",
      inputs: ["applicant_id"],
      produces: ["data"],
      assumptions: ["primary_up"],
    },
    {
      id: "summarize",
      goal: "Summarize",
      tool: "summarize",
      inputs: ["data"],
      produces: ["summary"],
      dependsOn: ["fetch"],
    },
  ],
};

/** What an LLM planner typically writes: the applicant id copied into the arguments and the goal. */
function mirrorReplan(req: ReplanRequest): PlanDraft {
  const id = req.facts.trusted.applicant_id as string;
  return {
    steps: [
      {
        id: "fetch_mirror",
        goal: `Fetch ${id} from the mirror`,
        tool: "fetch_mirror",
        args: { applicant_id: id },
        produces: ["data"],
      },
      {
        id: "summarize",
        goal: "Summarize",
        tool: "summarize",
        inputs: ["data"],
        produces: ["summary"],
        dependsOn: ["fetch_mirror"],
      },
    ],
  };
}

const mirrored = (a: Record<string, unknown>) => ({ data: `mirror:${a.applicant_id}` });

function tools(mirror: unknown[] = [mirrored]) {
  return {
    fetch_primary: scriptedTool("fetch_primary", [new AssumptionBrokenError("primary_up", "primary source is down")]),
    fetch_mirror: scriptedTool("fetch_mirror", mirror),
    fetch_backup: scriptedTool("fetch_backup", [new PermanentError("backup rejects the request")]),
    summarize: scriptedTool("summarize", [(a: Record<string, unknown>) => ({ summary: `summary of ${a.data}` })]),
  };
}

interface Setup {
  store?: BaseStore;
  replan?: (req: ReplanRequest) => PlanDraft;
  options?: Partial<PlanManagerOptions>;
  without?: string[];
  mirror?: unknown[];
}

/** A manager on a shared store; `requests` collects the planner's replan calls. */
function manager({ store, replan = mirrorReplan, options = {}, without = [], mirror }: Setup) {
  const t = tools(mirror);
  const requests: ReplanRequest[] = [];
  const planner = staticPlanner({ plan, replan: (req) => (requests.push(req), replan(req)) });
  const graph = createPlanManager({
    tools: Object.values(t).filter((x) => !without.includes(x.name)),
    planner,
    clock: fakeClock(),
    replanMemory: { mode: "reuse" },
    ...options,
  }).compile({ checkpointer: new MemorySaver(), ...(store ? { store } : {}) });
  const run = async (threadId: string, applicant: string): Promise<Loose> => {
    const config = { configurable: { thread_id: threadId } };
    await graph.invoke({ goal: `Review ${applicant}`, context: { applicant_id: applicant } }, config);
    return (await graph.getState(config)).values as Loose;
  };
  return { run, requests, tools: t };
}

const memoryDecisions = (out: Loose) =>
  (out.decisions as Loose[]).filter((d) => d.rule === "replan.memory").map((d) => d.reason as string);

const ns = [...DEFAULT_MEMORY_NAMESPACE];

/** The entries (outcome items live below them, under `outcomes`). */
async function entries(store: BaseStore) {
  const items = await store.search(ns, { limit: 1000 });
  return items.filter((i) => i.namespace.length === ns.length).map((i) => i.value as Loose);
}

/** An entry's key, revision and score, as the next replan sees them. */
async function scored(store: BaseStore, key: string) {
  const e = (await store.get(ns, key))?.value as Loose | undefined;
  return e ? { revision: e.revision as string, ...(await entryScore(store, ns, e.revision)) } : undefined;
}

/** Everything memory wrote, as text. */
async function everything(store: BaseStore) {
  return JSON.stringify(await store.search(["langgraph-replan"], { limit: 10_000 }));
}

describe("replan memory across threads", () => {
  it("reuse: the second thread with the same fault applies the first thread's fix without calling the planner", async () => {
    const store = new InMemoryStore();
    const m = manager({ store });
    const a = await m.run("A", "A-100");
    expect(a.status).toBe("completed");
    expect(m.requests).toHaveLength(1);
    const key = a.replans[0].memoryKey as string;
    expect(key).toMatch(/^primary_up:[0-9a-f]{16}$/);
    expect(a.replans[0]).toMatchObject({ source: "planner", memorySteps: ["fetch_mirror", "summarize"] });

    // Saved when the branch completed, thread-neutral: the copied id became an input, the goal names the
    // fact, step ids are neutral.
    const [saved] = await entries(store);
    expect(saved).toEqual({
      key,
      assumption: "primary_up",
      origin: "learned",
      steps: [
        {
          id: "s1",
          goal: "Fetch <applicant_id> from the mirror",
          tool: "fetch_mirror",
          inputs: ["applicant_id"],
          produces: ["data"],
        },
        {
          id: "s2",
          goal: "Summarize",
          tool: "summarize",
          inputs: ["data"],
          produces: ["summary"],
          dependsOn: ["s1"],
        },
      ],
      // The planner handed `summarize` back by id: position 1 of the affected steps, not its id.
      kept: { s2: 1 },
      revision: expect.stringMatching(/^[0-9a-f]{16}$/),
      savedAt: "2026-01-01T00:00:00.000Z",
    });
    expect(JSON.stringify(saved)).not.toContain("A-100");

    const b = await m.run("B", "B-200");
    expect(b.status).toBe("completed");
    expect(m.requests).toHaveLength(1); // the planner was not asked again
    expect(m.tools.fetch_mirror.calls).toEqual([{ applicant_id: "A-100" }, { applicant_id: "B-200" }]);
    expect(b.facts.summary.value).toBe("summary of mirror:B-200");
    expect(b.replans[0]).toMatchObject({
      source: "memory",
      memoryKey: key,
      memoryRevision: saved!.revision,
      newSteps: ["s1"],
      invalidatedSteps: ["fetch"],
    });
    // The kept step keeps this thread's id.
    expect(b.plan.steps.map((s: Loose) => [s.id, s.dependsOn ?? []])).toEqual([
      ["s1", []],
      ["summarize", ["s1"]],
    ]);
    expect(memoryDecisions(b)).toEqual([`reused entry ${key} (0 of 0 uses succeeded): planner not called`]);
    expect(b.decisions.map((d: Loose) => [d.seq, d.rule, d.action])).toEqual([
      [1, "assumption.replan-local", "replan_local"],
      [2, "replan.memory", "replan_local"],
    ]);
    expect(await scored(store, key)).toEqual({ revision: saved!.revision, uses: 1, successes: 1 });
    const outcomes = await store.search([...ns, "outcomes", saved!.revision]);
    expect(outcomes.map((i) => [i.key, i.value])).toEqual([[outcomeKey("B::2"), { success: true }]]);

    const view = debugView(b as never).join("\n");
    expect(view).toContain(`replan.memory`);
    expect(view).toContain(`source: memory (entry ${key}, revision ${saved!.revision})`);
  });

  it("hint: the planner is asked, with the remembered replacement in req.hints", async () => {
    const store = new InMemoryStore();
    const m = manager({ store, options: { replanMemory: { mode: "hint" } } });
    await m.run("A", "A-100");
    const afterA = await entries(store);
    const b = await m.run("B", "B-200");
    expect(b.status).toBe("completed");
    expect(m.requests).toHaveLength(2);
    expect("hints" in m.requests[0]!).toBe(false);
    const key = b.replans[0].memoryKey;
    expect(m.requests[1]!.hints).toEqual([
      {
        key,
        uses: 0,
        successes: 0,
        steps: [
          {
            id: "s1",
            goal: "Fetch <applicant_id> from the mirror",
            tool: "fetch_mirror",
            inputs: ["applicant_id"],
            produces: ["data"],
          },
          {
            id: "s2",
            goal: "Summarize",
            tool: "summarize",
            inputs: ["data"],
            produces: ["summary"],
            dependsOn: ["s1"],
          },
        ],
      },
    ]);
    expect(b.replans[0].source).toBe("planner");
    expect(memoryDecisions(b)).toEqual([`entry ${key} (0 of 0 uses succeeded) passed to the planner as a hint`]);
    // The entry was healthy, so B's answer was not saved; the debug view does not claim it was going to be.
    expect(afterA).toHaveLength(1);
    expect(await entries(store)).toEqual(afterA);
    const view = debugView(b as never).join("\n");
    expect(view).toContain(
      `source: planner (key ${key}; saved when its branch completes unless a healthy entry has it)`,
    );
    expect(view).not.toContain("saved as");
  });

  it("a template that keeps failing is retired after 3 uses; the planner's answer then serves the next threads", async () => {
    const store = new InMemoryStore();
    const backup = [
      {
        id: "fetch_backup",
        goal: "Fetch from the backup",
        tool: "fetch_backup",
        inputs: ["applicant_id"],
        produces: ["data"],
      },
      {
        id: "summarize",
        goal: "Summarize",
        tool: "summarize",
        inputs: ["data"],
        produces: ["summary"],
        dependsOn: ["fetch_backup"],
      },
    ];
    const m = manager({ store, options: { replanTemplates: [{ assumption: "primary_up", steps: backup }] } });
    const calls: number[] = [];
    const outs: Loose[] = [];
    for (const t of ["t1", "t2", "t3", "t4", "t5"]) {
      const before = m.requests.length;
      outs.push(await m.run(t, `${t}-id`));
      calls.push(m.requests.length - before);
    }
    expect(calls).toEqual([0, 0, 0, 1, 0]);
    expect(outs.map((o) => o.status)).toEqual([
      "awaiting_human",
      "awaiting_human",
      "awaiting_human",
      "completed",
      "completed",
    ]);
    expect(outs[0]!.replans[0]).toMatchObject({ source: "memory", memoryKey: "primary_up:template" });
    expect(memoryDecisions(outs[2]!)).toEqual([
      "reused entry primary_up:template (0 of 2 uses succeeded): planner not called",
    ]);
    const exact = outs[3]!.replans[0].memoryKey;
    expect(memoryDecisions(outs[3]!)).toEqual([
      "entry primary_up:template retired: 0 of 3 uses succeeded; planner asked",
    ]);
    expect(outs[4]!.replans[0]).toMatchObject({ source: "memory", memoryKey: exact });
    // The template is not written to the store (the options are its source); its outcomes are.
    expect((await entries(store)).map((e) => [e.key, e.origin])).toEqual([[exact, "learned"]]);
    const template = outs[0]!.replans[0].memoryRevision;
    expect(await entryScore(store, ns, template)).toEqual({ uses: 3, successes: 0 });
    expect(await scored(store, exact)).toMatchObject({ uses: 1, successes: 1 });
  });

  it("a learned entry that stops working is retired after 3 uses and replaced by the planner's next completed answer", async () => {
    const store = new InMemoryStore();
    // The mirror serves thread A, rejects the next three calls, then works again.
    const down = new PermanentError("mirror rejects the request");
    const m = manager({ store, mirror: [mirrored, down, down, down, mirrored] });
    const calls: number[] = [];
    const scores: number[][] = [];
    const statuses: string[] = [];
    for (const t of ["A", "B", "C", "D", "E", "F"]) {
      const before = m.requests.length;
      statuses.push((await m.run(t, `${t}-1`)).status);
      calls.push(m.requests.length - before);
      const [e] = await entries(store);
      const score = await scored(store, e!.key);
      scores.push([score!.uses, score!.successes]);
    }
    expect(calls).toEqual([1, 0, 0, 0, 1, 0]);
    expect(statuses).toEqual([
      "completed",
      "awaiting_human",
      "awaiting_human",
      "awaiting_human",
      "completed",
      "completed",
    ]);
    // Replaced by E's answer (counts start again), then reused by F.
    expect(scores).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
      [3, 0],
      [0, 0],
      [1, 1],
    ]);
  });

  it("templates answer the very first thread; a template naming an unknown tool is refused up front", async () => {
    const store = new InMemoryStore();
    const steps = [
      {
        id: "via_mirror",
        goal: "Fetch from the mirror",
        tool: "fetch_mirror",
        inputs: ["applicant_id"],
        produces: ["data"],
      },
      {
        id: "sum",
        goal: "Summarize",
        tool: "summarize",
        inputs: ["data"],
        produces: ["summary"],
        dependsOn: ["via_mirror"],
      },
    ];
    const m = manager({ store, options: { replanTemplates: [{ assumption: "primary_up", steps }] } });
    const a = await m.run("A", "A-100");
    expect(a.status).toBe("completed");
    expect(m.requests).toHaveLength(0);
    expect(a.replans[0]).toMatchObject({
      source: "memory",
      memoryKey: "primary_up:template",
      newSteps: ["via_mirror", "sum"],
    });
    expect(a.facts.summary.value).toBe("summary of mirror:A-100");
    expect(() =>
      createPlanManager({
        tools: Object.values(tools()),
        planner: staticPlanner({ plan }),
        replanTemplates: [{ assumption: "primary_up", steps: [{ id: "x", goal: "x", tool: "teleport" }] }],
      }),
    ).toThrow(
      expect.objectContaining({
        code: "invalid_options",
        message: "replanTemplates[0]: tool teleport is not registered",
      }),
    );
  });

  it("an entry whose tool is gone is skipped; one that fails validation is discarded and counted as a failure", async () => {
    const store = new InMemoryStore();
    await manager({ store }).run("A", "A-100");
    const key = (await entries(store))[0]!.key;
    // A second deployment without the mirror tool: its planner answers with the backup.
    const backupReplan = (): PlanDraft => ({
      steps: [
        { id: "fb", goal: "Fetch from backup", tool: "summarize", inputs: ["applicant_id"], produces: ["summary"] },
      ],
    });
    const other = manager({ store, replan: backupReplan, without: ["fetch_mirror"] });
    const b = await other.run("B", "B-200");
    expect(other.requests).toHaveLength(1);
    expect(memoryDecisions(b)).toEqual([`entry ${key} skipped: tool fetch_mirror is not registered; planner asked`]);

    const broken = [
      { id: "needs", goal: "Needs a fact no thread has", tool: "fetch_mirror", inputs: ["missing_fact"] },
    ];
    const m = manager({
      store: new InMemoryStore(),
      options: { replanTemplates: [{ assumption: "primary_up", steps: broken }] },
    });
    const c = await m.run("C", "C-300");
    expect(c.status).toBe("completed");
    expect(m.requests).toHaveLength(1);
    expect(memoryDecisions(c)).toEqual([
      expect.stringMatching(
        /^entry primary_up:template failed validation \(.*missing_fact.*\); discarded, counted as a failure; planner asked$/,
      ),
    ]);
    expect(c.replans[0].source).toBe("planner");
  });

  it("a reused draft that a later guard stops is counted as a failure and the planner is asked", async () => {
    // lookup rests on portal_up too, so its fact becomes suspect: a draft that only reads it re-runs lookup
    // (backtracking), which maxBacktracksPerStep: 0 forbids; the planner's answer fetches the company again.
    const portalPlan: PlanDraft = {
      assumptions: [{ id: "portal_up", statement: "the portal serves reports" }],
      steps: [
        { id: "lookup", goal: "Look up", tool: "lookup", produces: ["company"], assumptions: ["portal_up"] },
        {
          id: "portal",
          goal: "Report",
          tool: "portal",
          inputs: ["company"],
          produces: ["report"],
          dependsOn: ["lookup"],
          assumptions: ["portal_up"],
        },
      ],
    };
    const template = [{ id: "m", goal: "Mirror", tool: "mirror", inputs: ["company"], produces: ["report"] }];
    const fresh: PlanDraft = {
      steps: [
        { id: "lookup2", goal: "Look up again", tool: "lookup", produces: ["company"] },
        { id: "m2", goal: "Mirror", tool: "mirror", inputs: ["company"], produces: ["report"], dependsOn: ["lookup2"] },
      ],
    };
    const requests: ReplanRequest[] = [];
    const store = new InMemoryStore();
    const graph = createPlanManager({
      tools: [
        scriptedTool("lookup", [{ company: "Acme" }]),
        scriptedTool("portal", [new AssumptionBrokenError("portal_up", "portal is down")]),
        scriptedTool("mirror", [{ report: "r" }]),
      ],
      planner: staticPlanner({ plan: portalPlan, replan: (req) => (requests.push(req), fresh) }),
      clock: fakeClock(),
      policy: { maxBacktracksPerStep: 0 },
      replanTemplates: [{ assumption: "portal_up", steps: template }],
    }).compile({ checkpointer: new MemorySaver(), store });
    const config = { configurable: { thread_id: "P" } };
    await graph.invoke({ goal: "report" }, config);
    const out = (await graph.getState(config)).values as Loose;
    expect(out.status).toBe("completed");
    expect(requests).toHaveLength(1);
    expect(memoryDecisions(out)).toEqual([
      "entry portal_up:template (0 of 0 uses succeeded) stopped by guard.max-backtracks " +
        '(step "lookup" was already re-run 0 times by backtracking (policy.maxBacktracksPerStep = 0)); ' +
        "discarded, counted as a failure; planner asked",
    ]);
    expect(out.decisions.map((d: Loose) => [d.seq, d.rule])).toEqual([
      [1, "assumption.replan-local"],
      [2, "replan.memory"],
    ]);
    expect(out.replans[0]).toMatchObject({ source: "planner", newSteps: ["lookup2", "m2"] });
    expect(out.replans[0].memoryKey).toMatch(/^portal_up:[0-9a-f]{16}$/);
    expect(out.replans[0].memoryRevision).toBeUndefined();
    const { revision } = templateEntry({ assumption: "portal_up", steps: template }, "");
    expect(await entryScore(store, ns, revision)).toEqual({ uses: 1, successes: 0 });
    expect((await entries(store)).map((e) => e.key)).toEqual([out.replans[0].memoryKey]);
  });

  it("a replacement that copies a fact under another name is not saved: the next thread asks the planner", async () => {
    const store = new InMemoryStore();
    const leaky = (req: ReplanRequest): PlanDraft => ({
      steps: [
        {
          id: "fm",
          goal: "Fetch from the mirror",
          tool: "fetch_mirror",
          args: { applicant: req.facts.trusted.applicant_id },
          produces: ["data"],
        },
        { id: "sm", goal: "Summarize", tool: "summarize", inputs: ["data"], produces: ["summary"], dependsOn: ["fm"] },
      ],
    });
    const m = manager({ store, replan: leaky });
    expect((await m.run("A", "A-100")).status).toBe("completed");
    expect(await entries(store)).toEqual([]);
    await m.run("B", "B-200");
    expect(m.requests).toHaveLength(2);
  });

  it("a store that cannot write does not fail the run: the save error is a memory event", async () => {
    // LangGraph hands nodes a batching wrapper around the store: writes reach it as put operations in `batch`.
    class ReadOnlyStore extends InMemoryStore {
      override async batch<Op extends readonly Operation[]>(ops: Op): Promise<OperationResults<Op>> {
        if (ops.some((op) => "value" in op)) throw new Error("store is read-only");
        return super.batch(ops);
      }
    }
    const t = tools();
    const graph = createPlanManager({
      tools: Object.values(t),
      planner: staticPlanner({ plan, replan: mirrorReplan }),
      clock: fakeClock(),
      replanMemory: { mode: "reuse" },
    }).compile({ checkpointer: new MemorySaver(), store: new ReadOnlyStore() });
    const config = { configurable: { thread_id: "A" }, streamMode: "custom" as const };
    const events: Loose[] = [];
    for await (const e of await graph.stream({ goal: "g", context: { applicant_id: "A-100" } }, config))
      events.push(e as Loose);
    const state = (await graph.getState(config)).values as Loose;
    expect(state.status).toBe("completed");
    expect(events.filter((e) => e.type === "memory")).toEqual([
      { type: "memory", op: "error", key: state.replans[0].memoryKey, reason: "store is read-only" },
    ]);
  });

  it("a store that cannot write still serves templates: nothing is written to use one", async () => {
    class ReadOnlyStore extends InMemoryStore {
      override async batch<Op extends readonly Operation[]>(ops: Op): Promise<OperationResults<Op>> {
        if (ops.some((op) => "value" in op)) throw new Error("store is read-only");
        return super.batch(ops);
      }
    }
    const steps = [
      { id: "via_mirror", goal: "Fetch", tool: "fetch_mirror", inputs: ["applicant_id"], produces: ["data"] },
      { id: "sum", goal: "Sum", tool: "summarize", inputs: ["data"], produces: ["summary"], dependsOn: ["via_mirror"] },
    ];
    const m = manager({
      store: new ReadOnlyStore(),
      options: { replanTemplates: [{ assumption: "primary_up", steps }] },
    });
    const a = await m.run("A", "A-100");
    expect(a.status).toBe("completed");
    expect(m.requests).toHaveLength(0);
    expect(a.replans[0]).toMatchObject({ source: "memory", memoryKey: "primary_up:template" });
    expect(memoryDecisions(a)).toEqual([
      "reused entry primary_up:template (0 of 0 uses succeeded): planner not called",
    ]);
  });

  it("without a store, memory is off: every thread asks the planner and records carry no memory fields", async () => {
    const m = manager({});
    const a = await m.run("A", "A-100");
    const b = await m.run("B", "B-200");
    expect([a.status, b.status]).toEqual(["completed", "completed"]);
    expect(m.requests).toHaveLength(2);
    expect(Object.keys(b.replans[0])).not.toContain("source");
    expect(memoryDecisions(b)).toEqual([]);
  });
});

describe("replan memory scores under concurrency", () => {
  it("ten threads reusing one entry at once: all ten outcomes count", async () => {
    const store = new InMemoryStore();
    const m = manager({ store });
    await m.run("A", "A-100");
    const [saved] = await entries(store);
    const outs = await Promise.all(Array.from({ length: 10 }, (_, i) => m.run(`T${i}`, `T-${i}00`)));
    expect(outs.map((o) => o.replans[0].source)).toEqual(Array(10).fill("memory"));
    expect(m.requests).toHaveLength(1);
    expect(await scored(store, saved!.key)).toEqual({ revision: saved!.revision, uses: 10, successes: 10 });
  });

  it("scoreEntry: concurrent writers add up; a repeated outcome counts once, even after 70 others", async () => {
    const store = new InMemoryStore();
    await Promise.all(Array.from({ length: 10 }, (_, i) => scoreEntry(store, ns, "r1", `t${i}::2`, i % 2 === 0)));
    expect(await entryScore(store, ns, "r1")).toEqual({ uses: 10, successes: 5 });
    for (let i = 0; i < 70; i++) await scoreEntry(store, ns, "r2", `t${i}::2`, false);
    await scoreEntry(store, ns, "r2", "t0::2", false); // a crash re-reports the first outcome
    await scoreEntry(store, ns, "r2", "t69::2", false);
    expect(await entryScore(store, ns, "r2")).toEqual({ uses: 70, successes: 0 });
    // Past one page of search results (500).
    for (let i = 0; i < 510; i++) await scoreEntry(store, ns, "r3", `t${i}::2`, i < 10);
    expect(await entryScore(store, ns, "r3")).toEqual({ uses: 510, successes: 10 });
  });

  it("a late outcome scores the revision its thread reused, not the entry that replaced it", async () => {
    const store = new InMemoryStore();
    let release!: () => void;
    let entered!: () => void;
    const inside = new Promise<void>((ok) => (entered = ok));
    const gate = new Promise<void>((ok) => (release = ok));
    // B's mirror call waits; C, D and E fail with the mirror, retiring the entry; F's answer replaces it.
    const slow = async (a: Record<string, unknown>) => (entered(), await gate, mirrored(a));
    const down = new PermanentError("mirror rejects the request");
    const m = manager({ store, mirror: [mirrored, slow, down, down, down, mirrored] });
    await m.run("A", "A-100");
    const [first] = await entries(store);
    const late = m.run("B", "B-200");
    await inside;
    for (const t of ["C", "D", "E"]) expect((await m.run(t, `${t}-1`)).status).toBe("awaiting_human");
    expect((await m.run("F", "F-1")).replans[0].source).toBe("planner");
    const [second] = await entries(store);
    expect(second!.revision).not.toBe(first!.revision);
    release();
    const b = await late;
    expect(b.status).toBe("completed");
    expect(b.replans[0]).toMatchObject({ source: "memory", memoryRevision: first!.revision });
    expect(await entryScore(store, ns, first!.revision)).toEqual({ uses: 4, successes: 1 });
    expect(await scored(store, second!.key)).toEqual({ revision: second!.revision, uses: 0, successes: 0 });
  });

  it("two threads saving the same answer at once write one revision: their reusers' outcomes add up", async () => {
    const store = new InMemoryStore();
    const m = manager({ store });
    const [a, b] = await Promise.all([m.run("A", "A-100"), m.run("B", "B-200")]);
    expect([a.replans[0].source, b.replans[0].source, m.requests.length]).toEqual(["planner", "planner", 2]);
    const [saved] = await entries(store);
    expect(await entries(store)).toHaveLength(1);
    // The revision is the content's (no saver in it): whichever thread wrote last, it is the same one.
    const { revision: _r, savedAt: _s, ...content } = saved as MemoryEntry;
    expect(saved!.revision).toBe(entryRevision(content));
    await Promise.all([m.run("C", "C-300"), m.run("D", "D-400")]);
    expect(await scored(store, saved!.key)).toEqual({ revision: saved!.revision, uses: 2, successes: 2 });
  });

  it("thread ids never reach the shared store, not even as outcome keys", async () => {
    const store = new InMemoryStore();
    const m = manager({ store });
    await m.run("loan-A-7291", "A-7291");
    await m.run("loan-B-8812", "B-8812");
    const text = await everything(store);
    expect(text).toContain(outcomeKey("loan-B-8812::2"));
    for (const id of ["7291", "8812", "loan-"]) expect(text).not.toContain(id);
  });
});
