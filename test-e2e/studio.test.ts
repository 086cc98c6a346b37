/**
 * LangGraph Studio's server (`langgraph dev`) serving langgraph.json, driven through the SDK:
 * run the loan demo to its human interrupt, inject a scope change with threads.updateState,
 * resume with a command, stream updates and custom events, and check the final state.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "./helpers/dev-server.js";

let server: DevServer;
beforeAll(async () => {
  server = await startDevServer();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

describe("the Studio graph over the LangGraph SDK", () => {
  it("draws every ladder edge", async () => {
    const client = new Client({ apiUrl: server.url });
    const [assistant] = await client.assistants.search({ graphId: "plan_manager" });
    const graph = (await client.assistants.getGraph(assistant!.assistant_id)) as {
      edges: { source: string; target: string }[];
    };
    const edges = graph.edges.map((e) => `${e.source}->${e.target}`).sort();
    expect(edges).toEqual(
      expect.arrayContaining([
        "classifier->executor",
        "classifier->replanner",
        "classifier->human",
        "classifier->finalize",
        "executor->classifier",
        "executor->executor",
        "executor->finalize",
        "executor->human",
        "human->executor",
        "human->replanner",
        "human->finalize",
        "planner->human",
        "planner->executor",
        "replanner->executor",
        "replanner->human",
      ]),
    );
  });

  it("runs the loan workflow to its interrupt, takes a scope change while paused, resumes and finishes", async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    const custom: { type: string; stepId?: string }[] = [];
    const updates: string[] = [];
    const collect = async (stream: AsyncIterable<{ event: string; data: unknown }>) => {
      for await (const chunk of stream) {
        if (chunk.event === "custom") custom.push(chunk.data as { type: string; stepId?: string });
        if (chunk.event === "updates") updates.push(...Object.keys(chunk.data as object));
      }
    };
    await collect(
      client.runs.stream(thread.thread_id, "plan_manager", {
        input: { goal: "Process loan application A-7291", context: { applicant_id: "A-7291" } },
        streamMode: ["updates", "custom"],
      }),
    );
    const paused = await client.threads.getState(thread.thread_id);
    const payload = paused.tasks[0]?.interrupts[0]?.value as { kind: string; stepId: string; options: string[] };
    expect(payload).toMatchObject({
      kind: "human_step",
      stepId: "human_review",
      options: ["complete", "skip", "change_scope", "abort"],
    });
    expect((paused.values as { status: string }).status).toBe("awaiting_human");
    expect(updates).toContain("__interrupt__");
    expect(custom.filter((e) => e.type === "step_finished").map((e) => e.stepId)).toEqual([
      "verify_identity",
      "pull_credit",
      "pull_credit",
      "compliance_check",
    ]);
    expect(custom.some((e) => e.type === "decision")).toBe(true);

    // A refused update reaches the SDK as a 422 with the manager's code and message (not a bare 500).
    const refused = await client.threads.updateState(thread.thread_id, { values: { status: "completed" } }).then(
      () => undefined,
      (error: { status?: number; text?: string }) => error,
    );
    expect([refused?.status, JSON.parse(refused?.text ?? "null")]).toEqual([
      422,
      {
        error: "invalid_update",
        message:
          'updateState: "status" cannot be written from outside a run (the manager owns it); ' +
          "the keys you may write are: scopeChanges",
      },
    ]);
    expect(server.log()).not.toContain("invalid_update");

    await client.threads.updateState(thread.thread_id, { values: { scopeChanges: ["also check business credit"] } });
    expect((await client.threads.getState(thread.thread_id)).next as string[]).toEqual(["human"]);

    custom.length = 0;
    await collect(
      client.runs.stream(thread.thread_id, "plan_manager", {
        command: { resume: { action: "complete", output: { human_override: "approved" } } },
        streamMode: ["updates", "custom"],
      }),
    );
    const final = (await client.threads.getState(thread.thread_id)).values as Record<string, any>;
    expect(final.status).toBe("completed");
    expect(final.plan.version).toBe(2);
    expect(final.replans[0]).toMatchObject({
      scope: "global",
      newSteps: ["business_credit"],
      preservedSteps: ["verify_identity", "pull_credit", "compliance_check", "human_review"],
    });
    expect(final.facts.business_credit_score.value).toBe(81);
    expect(final.scopeChanges).toEqual([]);
    expect(final.decisions.map((d: { rule: string }) => d.rule)).toEqual([
      "transient.retry",
      "human.complete",
      "scope.replan-global",
    ]);
    expect(custom.map((e) => e.type)).toEqual(
      expect.arrayContaining(["replan", "step_started", "step_finished", "finished"]),
    );
  });
});
