/** llmPlanner with a horizon, through ChatOpenAI against an OpenAI-compatible server on 127.0.0.1. */
import { ChatOpenAI } from "@langchain/openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlanManagerError } from "../../src/errors.js";
import { llmPlanner } from "../../src/planners/llm-planner.js";
import { harness, scriptedTool, type Loose } from "../helpers/graph.js";
import { startOpenAiServer, type OpenAiServer } from "../helpers/openai-server.js";
import { strictStep } from "../helpers/llm-answers.js";

let server: OpenAiServer;
beforeAll(async () => {
  server = await startOpenAiServer();
});
afterAll(() => server.close());

/** A step as a strict-mode model writes it: every field present, null when it does not apply. */
const modelStep = (n: number) =>
  strictStep({
    id: `s${n}`,
    goal: `Part ${n} of the survey`,
    tool: "survey",
    argsJson: JSON.stringify({ part: n }),
    produces: [`part${n}`],
    dependsOn: n > 1 ? [`s${n - 1}`] : null,
    estimateMs: 1000,
  });
const answer = (from: number, to: number, complete: boolean) => ({
  steps: Array.from({ length: to - from + 1 }, (_, i) => modelStep(from + i)),
  assumptions: [],
  rationale: null,
  complete,
});
const surveyTool = () =>
  scriptedTool("survey", [(args: Record<string, unknown>) => ({ [`part${args.part}`]: `done ${args.part}` })]);
const userPrompt = (request: Record<string, any>): string[] =>
  (request.messages as { role: string; content: string }[]).find((m) => m.role === "user")!.content.split("\n\n");

describe("llmPlanner({ horizon })", () => {
  it("plans a 12-step goal in three rounds of at most 5 steps, extending with the facts and the steps done", async () => {
    server.requests.length = 0;
    server.answers.splice(0, server.answers.length, answer(1, 5, false), answer(6, 10, false), answer(11, 12, true));
    const model = new ChatOpenAI({
      model: "local-model",
      apiKey: "sk-local",
      configuration: { baseURL: server.baseURL },
    });
    const survey = surveyTool();
    const out = (await harness(llmPlanner({ model, horizon: 5 }), [survey]).run({ goal: "Survey 12 sites" })) as Loose;

    expect(out.status).toBe("completed");
    expect(survey.calls.map((c) => c.part)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(out.plan.steps[0].estimateMs).toBe(1000);
    expect(out.replans.map((r: Loose) => [r.scope, r.fromVersion, r.toVersion, r.newSteps.length])).toEqual([
      ["extend", 1, 2, 5],
      ["extend", 2, 3, 2],
    ]);
    expect(out.usage.map((u: Loose) => u.purpose)).toEqual(["plan", "extend", "extend"]);
    expect(server.requests).toHaveLength(3);
    const horizonLine =
      "Plan at most 5 steps ahead. If the goal needs more steps than that, return the first 5 and set complete to " +
      "false: you will be asked for the next steps once these have run. Set complete to true when your steps finish the goal.";
    const first = userPrompt(server.requests[0]!);
    expect(first[0]).toBe("Goal: Survey 12 sites");
    expect(first.slice(-2)).toEqual([horizonLine, "Write the plan."]);
    const second = userPrompt(server.requests[1]!);
    expect(second.slice(0, 3)).toEqual([
      "Goal: Survey 12 sites",
      "The plan so far (version 1) has run. Plan the next steps of the goal.",
      "Steps done so far (they stay; new steps may depend on them):\n" +
        '<untrusted-data name="steps_done">\n' +
        JSON.stringify([1, 2, 3, 4, 5].map((n) => `s${n} (survey): Part ${n} of the survey — succeeded`)) +
        "\n</untrusted-data>",
    ]);
    expect(second[4]).toBe(
      'Trusted facts:\n<untrusted-data name="trusted_facts">\n' +
        '{"part1":"done 1","part2":"done 2","part3":"done 3","part4":"done 4","part5":"done 5"}\n</untrusted-data>',
    );
    expect(second.slice(-3)).toEqual([
      horizonLine,
      "Step ids already used (do not reuse them): s1, s2, s3, s4, s5",
      "Return only the new steps.",
    ]);
    const third = userPrompt(server.requests[2]!);
    expect(third[1]).toBe("The plan so far (version 2) has run. Plan the next steps of the goal.");
    expect(third[4]).toContain('"part10":"done 10"');
    for (const request of server.requests) expect(request.response_format.json_schema.name).toBe("plan_draft");
  });

  it("sends a draft longer than the horizon back to the model with the reason", async () => {
    server.requests.length = 0;
    server.answers.splice(0, server.answers.length, answer(1, 7, false), answer(1, 5, true));
    const model = new ChatOpenAI({
      model: "local-model",
      apiKey: "sk-local",
      configuration: { baseURL: server.baseURL },
    });
    const survey = surveyTool();
    const out = (await harness(llmPlanner({ model, horizon: 5 }), [survey]).run({ goal: "Survey 5 sites" })) as Loose;
    expect(out.status).toBe("completed");
    expect(server.requests).toHaveLength(2);
    const feedback = (server.requests[1]!.messages as { role: string; content: string }[]).at(-1)!.content;
    expect(feedback).toBe(
      "That plan was rejected. Fix these problems and return the whole corrected answer:\n" +
        "- the draft has 7 steps; plan at most 5 (the horizon) and set complete to false",
    );
  });

  it("rejects a horizon that is not a whole number >= 1, naming the option", () => {
    const model = new ChatOpenAI({ model: "m", apiKey: "sk-local", configuration: { baseURL: "http://127.0.0.1:9" } });
    const error = (() => {
      try {
        llmPlanner({ model, horizon: 0 });
      } catch (e) {
        return e as PlanManagerError;
      }
    })();
    expect([error?.code, error?.message]).toEqual([
      "invalid_options",
      "llmPlanner: horizon must be a whole number >= 1",
    ]);
  });
});
