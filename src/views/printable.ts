/**
 * Text for one line of a terminal view. Goals, error messages and reasons come from plans and
 * tools, which read the outside world: characters a terminal acts on (escape sequences, bells,
 * carriage returns, C1 controls) and bidirectional overrides that reorder what is shown are
 * written as `\uXXXX`, a newline as `\n`, so a view shows the text and never runs it.
 */
// Matching control characters is the point of these two patterns.
// oxlint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
/** The same, less the line breaks an HTML page may keep (`\n`, `\r`). */
// oxlint-disable-next-line no-control-regex
const UNPRINTABLE_IN_HTML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const escape = (c: string) => (c === "\n" ? "\\n" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, escape);
}

/** For the HTML report: the same, keeping line breaks. Markup is escaped separately. */
export function printableLines(text: string): string {
  return text.replace(UNPRINTABLE_IN_HTML, escape);
}
