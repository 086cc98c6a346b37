/**
 * What a thrown value says about itself (issue [hardening], items 2 and 3): argument errors from
 * the real @langchain/core reach the fallback, and transient failures that are not `Error`s with
 * a numeric `status` still retry, with a readable message.
 */
import { createServer, type Server, type Socket } from "node:net";
import { tool, ToolInputParsingException } from "@langchain/core/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import * as zodCore from "zod/v4/core";
import { type PlanDraft } from "../../src/index.js";
import { classifyEvidence, type Deviation } from "../../src/policy/index.js";
import { errorInfo } from "../../src/policy/ladder/deviation.js";
import { brief, harness, scriptedTool, type Harness } from "../helpers/graph.js";

const evidenceOf = (thrown: unknown) =>
  classifyEvidence({ kind: "error", attempt: 1, message: "m", error: errorInfo(thrown) }).id;

async function thrownBy(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (thrown) {
    return thrown;
  }
  throw new Error("expected a throw");
}

const strictDouble = () =>
  tool(async ({ n }) => ({ doubled: n * 2 }), {
    name: "double",
    description: "Doubles a number",
    schema: z.object({ n: z.number() }).strict(),
  });

/** A TCP server that accepts connections and never answers, so a fetch can only time out. */
let silent: Server;
let silentUrl = "";
const sockets = new Set<Socket>();
beforeAll(async () => {
  silent = createServer((socket) => void sockets.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const address = silent.address();
  silentUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

describe("argument errors (item 2)", () => {
  it('recognises the real ToolInputParsingException that @langchain/core throws with name "Error"', async () => {
    const thrown = await thrownBy(() => strictDouble().invoke({ n: "seven" } as never));
    expect(thrown).toBeInstanceOf(ToolInputParsingException);
    expect((thrown as Error).name).toBe("Error");
    const info = errorInfo(thrown);
    expect(info.name).toBe("ToolInputParsingException");
    expect(info.message.startsWith("Received tool input did not match expected schema")).toBe(true);
    const rule = classifyEvidence({ kind: "error", attempt: 1, message: "m", error: info });
    expect(rule.id).toBe("deterministic.invalid-arguments");
  });

  it("recognises a ToolInputParsingException from another copy of @langchain/core, named or minified", () => {
    // The class as another copy of the package defines it: same name, different identity.
    const Copy = {
      ToolInputParsingException: class extends Error {
        constructor(
          message: string,
          readonly output?: string,
        ) {
          super(message);
        }
      },
    }.ToolInputParsingException;
    expect(Copy.name).toBe("ToolInputParsingException");
    expect(new Copy("bad") instanceof ToolInputParsingException).toBe(false);
    // Read by its fields, not its class: the message @langchain/core writes and the `output` it carries.
    expect(errorInfo(new Copy("Received tool input did not match expected schema", "{}")).name).toBe(
      "ToolInputParsingException",
    );
    // A minifier renames the class; what stays is the message @langchain/core writes and the `output` it carries.
    const Minified = class a extends Error {
      constructor(
        message: string,
        readonly output?: string,
      ) {
        super(message);
      }
    };
    const minified = new Minified("Received tool input did not match expected schema\n\n✖ bad", '{"n":"seven"}');
    expect(errorInfo(minified).name).toBe("ToolInputParsingException");
    expect(evidenceOf(minified)).toBe("deterministic.invalid-arguments");
  });

  it("does not take any error carrying an `output` field for an argument error", () => {
    const e = Object.assign(new Error("the report came back empty"), { output: "" });
    expect(errorInfo(e)).toEqual({ name: "Error", message: "the report came back empty" });
    expect(evidenceOf(e)).toBe("unknown.unclassified");
  });

  it("recognises zod v4 errors, classic and core", async () => {
    const classic = await thrownBy(() => z.object({ n: z.number() }).parse({ n: "x" }));
    const core = await thrownBy(() => zodCore.parse(z.number(), "x"));
    expect((core as Error).name).toBe("$ZodError");
    expect([errorInfo(classic).name, errorInfo(core).name]).toEqual(["ZodError", "ZodError"]);
    expect(evidenceOf(classic)).toBe("deterministic.invalid-arguments");
    expect(evidenceOf(core)).toBe("deterministic.invalid-arguments");
    // Structural: a ZodError from another copy of zod is still a ZodError.
    const copy = Object.assign(new Error("[]"), { name: "ZodError", issues: [] });
    expect(evidenceOf(copy)).toBe("deterministic.invalid-arguments");
  });

  it("a real tool with a strict schema, called with arguments it rejects, switches to the fallback", async () => {
    const fallback = scriptedTool("double_slowly", [{ doubled: 14 }]);
    const plan: PlanDraft = {
      steps: [
        {
          id: "calc",
          goal: "Double n",
          tool: "double",
          inputs: ["n"],
          produces: ["doubled"],
          fallback: { tool: "double_slowly" },
        },
      ],
    };
    const h = harness(plan, [strictDouble(), fallback], { context: { n: "seven" } });
    const out = await h.run();
    expect(brief(out.decisions)).toEqual(["calc: deterministic → fallback [deterministic.fallback]"]);
    const reason: string = out.decisions[0].reason;
    const cause = "calc: ToolInputParsingException: Received tool input did not match expected schema";
    expect(reason.startsWith(cause)).toBe(true);
    expect(reason.endsWith('; switching to fallback tool "double_slowly"')).toBe(true);
    expect(fallback.calls).toEqual([{ n: "seven" }]);
    expect(out.status).toBe("completed");
    expect(out.facts.doubled.value).toBe(14);
    expect(await recordedEvidence(h)).toEqual(["deterministic.invalid-arguments"]);
  });
});

/** The evidence rule of every deviation the run recorded, read back from its checkpoints. */
async function recordedEvidence(h: Harness): Promise<string[]> {
  const seen = new Set<string>();
  const ids: string[] = [];
  for await (const snapshot of h.graph.getStateHistory(h.config)) {
    const deviation = (snapshot.values as { deviation?: Deviation | null }).deviation;
    if (!deviation || seen.has(JSON.stringify(deviation))) continue;
    seen.add(JSON.stringify(deviation));
    ids.unshift(classifyEvidence(deviation).id);
  }
  return ids;
}

describe("what errorInfo reads from a thrown value (item 3)", () => {
  it("a thrown plain object: its status, and its message field", () => {
    expect(errorInfo({ status: 503, message: "busy" })).toEqual({ name: "Error", message: "busy", status: 503 });
    expect(evidenceOf({ status: 503, message: "busy" })).toBe("transient.http-5xx");
  });

  it("a thrown plain object without a message is shown as JSON, never [object Object]", () => {
    expect(errorInfo({ statusCode: "503", detail: "try later" })).toEqual({
      name: "Error",
      message: '{"statusCode":"503","detail":"try later"}',
      status: 503,
    });
    const long = { detail: "x".repeat(300) };
    const { message } = errorInfo(long);
    expect(message.length).toBe(200);
    expect(message.endsWith("...")).toBe(true);
    const circular: Record<string, unknown> = { reason: 1 };
    circular.self = circular;
    expect(errorInfo(circular)).toEqual({ name: "Error", message: "a thrown object with keys reason, self" });
    class Weird {
      get kind() {
        return "weird";
      }
    }
    expect(errorInfo(new Weird())).toEqual({ name: "Error", message: "a thrown object with no keys" });
  });

  it("reads the HTTP status from status, statusCode, response.status or response.statusCode, number or digits", () => {
    const withFields = (fields: Record<string, unknown>) =>
      errorInfo(Object.assign(new Error("upstream"), fields)).status;
    expect(withFields({ status: 502 })).toBe(502);
    expect(withFields({ statusCode: 504 })).toBe(504);
    expect(withFields({ response: { status: 500 } })).toBe(500);
    expect(withFields({ response: { statusCode: 503 } })).toBe(503);
    expect(withFields({ status: "503" })).toBe(503);
    expect(withFields({ response: { statusCode: "429" } })).toBe(429);
    // A field that is not an HTTP status is passed over, not trusted.
    expect(withFields({ status: "error", response: { status: 503 } })).toBe(503);
    expect(withFields({ status: 0 })).toBeUndefined();
    expect(withFields({ status: 5030 })).toBeUndefined();
    expect(withFields({ status: "50x" })).toBeUndefined();
    expect(withFields({ response: "503" })).toBeUndefined();
    const axiosLike = Object.assign(new Error("upstream"), { response: { statusCode: 503 } });
    expect(evidenceOf(axiosLike)).toBe("transient.http-5xx");
    expect(evidenceOf(Object.assign(new Error("slow down"), { status: "429" }))).toBe("transient.http-429");
  });

  it("the DOMExceptions an aborted or timed-out fetch throws are transient", async () => {
    const aborted = await thrownBy(() => fetch(silentUrl, { signal: AbortSignal.abort() }));
    const timedOut = await thrownBy(() => fetch(silentUrl, { signal: AbortSignal.timeout(20) }));
    expect(aborted).toBeInstanceOf(DOMException);
    expect(errorInfo(aborted)).toEqual({ name: "AbortError", message: "This operation was aborted" });
    expect(errorInfo(timedOut)).toEqual({ name: "TimeoutError", message: "The operation was aborted due to timeout" });
    expect([evidenceOf(aborted), evidenceOf(timedOut)]).toEqual(["transient.abort-timeout", "transient.abort-timeout"]);
    // Where DOMException is not an Error (other runtimes), the same fields still say what happened.
    expect(evidenceOf({ name: "TimeoutError", message: "timed out", code: 23 })).toBe("transient.abort-timeout");
  });

  it("thrown primitives keep a readable message", () => {
    expect(errorInfo("disk full")).toEqual({ name: "Error", message: "disk full" });
    expect(errorInfo(42)).toEqual({ name: "Error", message: "42" });
    expect(errorInfo(undefined)).toEqual({ name: "Error", message: "undefined" });
    expect(errorInfo(null)).toEqual({ name: "Error", message: "null" });
    expect(errorInfo(Symbol("gone"))).toEqual({ name: "Error", message: "Symbol(gone)" });
    expect(errorInfo(10n)).toEqual({ name: "Error", message: "10" });
    expect(errorInfo(function tripwire() {})).toEqual({ name: "Error", message: "a thrown function tripwire" });
  });

  it("a thrown value whose fields throw when read does not break the run", () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("no reading");
        },
        ownKeys() {
          throw new Error("no listing");
        },
      },
    );
    expect(errorInfo(hostile)).toEqual({ name: "Error", message: "a thrown value that cannot be read" });
  });

  it("keeps what TransientError-like fields say: code, cause code, retryAfterMs", () => {
    const fetchFailed = Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
    expect(errorInfo(fetchFailed)).toEqual({ name: "TypeError", message: "fetch failed", code: "ECONNREFUSED" });
    expect(evidenceOf(fetchFailed)).toBe("transient.network");
    const transient = { name: "TransientError", message: "later", retryAfterMs: 50 };
    expect(errorInfo(transient)).toEqual(transient);
  });
});

describe("transient failures retry end to end (item 3)", () => {
  const cases: [string, () => unknown, string, string][] = [
    [
      "a thrown plain object { status: 503, message }",
      () => {
        throw { status: 503, message: "busy" };
      },
      "fetch: Error: busy",
      "transient.http-5xx",
    ],
    [
      "an Error with response.statusCode 503",
      () => {
        throw Object.assign(new Error("upstream unavailable"), { response: { statusCode: 503 } });
      },
      "fetch: Error: upstream unavailable",
      "transient.http-5xx",
    ],
    [
      "the TimeoutError of a fetch under AbortSignal.timeout",
      () => fetch(silentUrl, { signal: AbortSignal.timeout(20) }),
      "fetch: TimeoutError: The operation was aborted due to timeout",
      "transient.abort-timeout",
    ],
    [
      "the AbortError of an aborted fetch",
      () => fetch(silentUrl, { signal: AbortSignal.abort() }),
      "fetch: AbortError: This operation was aborted",
      "transient.abort-timeout",
    ],
  ];
  it.each(cases)("%s: retried, then the run completes", async (_label, fail, message, evidence) => {
    const flaky = scriptedTool("fetch_quote", [fail, { price: 120 }]);
    const plan: PlanDraft = {
      steps: [{ id: "fetch", goal: "Fetch a quote", tool: "fetch_quote", produces: ["price"] }],
    };
    const h = harness(plan, [flaky]);
    const out = await h.run();
    expect(out.status).toBe("completed");
    expect(brief(out.decisions)).toEqual(["fetch: transient → retry [transient.retry]"]);
    expect(out.decisions[0].reason).toBe(`${message}; attempt 2/3 in 200 ms`);
    expect(flaky.calls.length).toBe(2);
    expect(out.facts.price.value).toBe(120);
    expect(await recordedEvidence(h)).toEqual([evidence]);
  });
});
