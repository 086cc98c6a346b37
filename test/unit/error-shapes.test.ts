/**
 * A thrown value is read by its shape, never by its class's name: LangChain's parser errors from
 * any copy of @langchain/core, and plain objects with the same fields, are recorded the same, and a
 * class that is only named like one of them is not taken for it.
 */
import { OutputParserException } from "@langchain/core/output_parsers";
import { ToolInputParsingException } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { classifyEvidence } from "../../src/policy/index.js";
import { errorInfo } from "../../src/policy/ladder/deviation.js";

const TOOL_INPUT = "Received tool input did not match expected schema";

/** The name errorInfo records and the evidence rule the ladder reads from it. */
const read = (thrown: unknown, about?: { agentAnswer: boolean }) => {
  const error = errorInfo(thrown);
  return [error.name, classifyEvidence({ kind: "error", attempt: 1, message: "m", error }, about).id];
};
/** An agent step's answer: a parser error there is an unmet signal the model can answer again. */
const answer = { agentAnswer: true };

describe("LangChain's parser errors, by shape", () => {
  it("an OutputParserException from this copy, from a minified copy without LangChain's code, and a plain object with its fields read the same", () => {
    // An older or minified copy: the class renamed, no `lc_error_code`, the three fields the class declares.
    const Minified = class a extends Error {
      constructor(
        message: string,
        readonly llmOutput?: string,
        readonly observation?: string,
        readonly sendToLLM = false,
      ) {
        super(message);
      }
    };
    const real = new OutputParserException('Failed to parse. Text: "patch=good".', "patch=good");
    const copy = new Minified('Failed to parse. Text: "patch=good".', "patch=good");
    const plain = { message: "Failed to parse.", llmOutput: "patch=good", observation: undefined, sendToLLM: false };
    const marked = { message: "Failed to parse.", lc_error_code: "OUTPUT_PARSING_FAILURE" };
    const expected = ["OutputParserException", "unmet.unparsable-answer"];
    expect([read(real, answer), read(copy, answer), read(plain, answer), read(marked, answer)]).toEqual([
      expected,
      expected,
      expected,
      expected,
    ]);
  });

  it("a ToolInputParsingException from this copy, another copy, and a plain object with its fields read the same", () => {
    // Another copy's class: same name, another identity.
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
    const expected = ["ToolInputParsingException", "deterministic.invalid-arguments"];
    expect([
      read(new ToolInputParsingException(TOOL_INPUT, '{"n":"seven"}')),
      read(new Copy(`${TOOL_INPUT}\n\n✖ bad`, '{"n":"seven"}')),
      read({ name: "Error", message: TOOL_INPUT, output: '{"n":"seven"}' }),
      read({ name: "ToolInputParsingException", message: "bad" }),
    ]).toEqual([expected, expected, expected, expected]);
  });

  it("a class only named like LangChain's parser errors, with none of their fields, is a plain error", () => {
    const Named = { OutputParserException: class extends Error {}, ToolInputParsingException: class extends Error {} };
    expect(Named.OutputParserException.name).toBe("OutputParserException");
    expect([
      read(new Named.OutputParserException("x"), answer),
      read(new Named.ToolInputParsingException("x"), answer),
    ]).toEqual([
      ["Error", "unknown.unclassified"],
      ["Error", "unknown.unclassified"],
    ]);
  });

  it("a zod error from this copy, and a plain object shaped like one from another, read the same", () => {
    const real = z.number().safeParse("x").error;
    const expected = ["ZodError", "deterministic.invalid-arguments"];
    expect([read(real), read({ name: "$ZodError", message: "[]", issues: [] })]).toEqual([expected, expected]);
  });
});

describe("thrown values that are not errors, by shape", () => {
  it("an instance of a class and a plain object with the same fields are shown the same", () => {
    class Rejection {
      constructor(readonly self: unknown) {}
    }
    const circularPlain: Record<string, unknown> = {};
    circularPlain.self = circularPlain;
    const circularInstance = new Rejection(undefined) as { self: unknown };
    circularInstance.self = circularInstance;
    class Empty {
      get kind() {
        return "empty";
      }
    }
    expect([errorInfo(circularInstance), errorInfo(circularPlain), errorInfo(new Empty()), errorInfo({})]).toEqual([
      { name: "Error", message: "a thrown object with keys self" },
      { name: "Error", message: "a thrown object with keys self" },
      { name: "Error", message: "a thrown object with no keys" },
      { name: "Error", message: "a thrown object with no keys" },
    ]);
  });
});
