/** Which model errors are worth a retry: decided by status and code, never retried twice. */
import { describe, expect, it } from "vitest";
import { modelFailure } from "../../src/planners/model-call.js";
import { httpError } from "../helpers/graph.js";

const withCode = (code: string, message = code) => Object.assign(new Error(message), { code });

describe("modelFailure", () => {
  it("retries rate limits, timeouts, 5xx and network errors; not auth, quota or bad requests", () => {
    const table = {
      "429 rate limit": httpError(429, "Rate limit reached for requests"),
      "429 insufficient_quota": Object.assign(httpError(429, "429 Rate limited"), { code: "insufficient_quota" }),
      "429 quota, no code": httpError(429, "You exceeded your current quota, please check your plan"),
      "408": httpError(408),
      "425": httpError(425),
      "500": httpError(500),
      "503": httpError(503),
      "400": httpError(400),
      "401": httpError(401),
      "403": httpError(403),
      "404": httpError(404),
      ECONNRESET: withCode("ECONNRESET"),
      ETIMEDOUT: withCode("ETIMEDOUT"),
      "OpenAI connection error": Object.assign(new Error("Connection error."), { name: "APIConnectionError" }),
      "client timeout": Object.assign(new Error("Request timed out."), { name: "TimeoutError" }),
      "aborted by the run": Object.assign(new Error("Request was aborted."), { name: "AbortError" }),
      "unparseable answer": Object.assign(new Error("Failed to parse. Text: oops"), { name: "OutputParserException" }),
    };
    expect(Object.fromEntries(Object.entries(table).map(([name, error]) => [name, modelFailure(error)]))).toEqual({
      "429 rate limit": "transient",
      "429 insufficient_quota": "quota",
      "429 quota, no code": "quota",
      "408": "transient",
      "425": "transient",
      "500": "transient",
      "503": "transient",
      "400": "permanent",
      "401": "authentication",
      "403": "authentication",
      "404": "permanent",
      ECONNRESET: "transient",
      ETIMEDOUT: "transient",
      "OpenAI connection error": "transient",
      "client timeout": "transient",
      "aborted by the run": "permanent",
      "unparseable answer": "permanent",
    });
  });
});
