/**
 * The JSON a client's model answers with as text: bare, or in a fenced block (```json … ```), the
 * way chat models often wrap it. Text that holds no JSON is an `OutputParserException`, which the
 * planners read as a reply that did not parse, and ask again with the parse error
 * (docs/decisions/0060-sampling-through-the-client.md).
 */
import { OutputParserException } from "@langchain/core/output_parsers";

const FENCED = /```(?:json|JSON)?[ \t]*\r?\n([\s\S]*?)\r?\n?```/;

/** The text's JSON object: the first fenced block if there is one, else the whole text. */
export function parseJsonText(text: string): Record<string, unknown> {
  const fenced = FENCED.exec(text);
  const body = (fenced ? fenced[1]! : text).trim();
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    const why = (error as Error).message;
    throw new OutputParserException(`the reply is not JSON (${why}); answer with one JSON object only`, text);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new OutputParserException("the reply is JSON but not an object; answer with one JSON object", text);
  return value as Record<string, unknown>;
}
