/**
 * Text for one line of a terminal view. Goals, error messages and reasons come from plans and
 * tools, which read the outside world: characters a terminal acts on (escape sequences, bells,
 * carriage returns, C1 controls) and bidirectional overrides that reorder what is shown are
 * written as `\uXXXX`, a newline as `\n`, so a view shows the text and never runs it.
 */
const UNPRINTABLE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => (c === "\n" ? "\\n" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));
}
