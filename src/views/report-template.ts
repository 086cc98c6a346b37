/**
 * The HTML report's fixed text: its style sheet, the script that renders its Mermaid diagrams, and
 * the markup of table rows. report.ts fills them with a run's data; every value is escaped there.
 */

/** The report's style sheet, one entry per line. */
export const REPORT_STYLE = [
  "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#212529}",
  "h1{font-size:20px} h2{font-size:16px;margin-top:28px;border-bottom:1px solid #dee2e6}",
  "table{border-collapse:collapse;width:100%;margin:8px 0} td,th{border:1px solid #dee2e6;padding:4px " +
    "6px;text-align:left;vertical-align:top}",
  "th{background:#f1f3f5} " +
    ".versions{display:grid;grid-template-columns:repeat(auto-fill,minmax(380px,1fr));gap:16px}",
  ".version{min-width:0;overflow-x:auto} pre.mermaid svg{max-width:100%;height:auto} td{overflow-wrap:break-word}",
  "/* Free text and values may hold long unbroken tokens: they break anywhere rather than widen the page. */",
  "td.free,td code{overflow-wrap:anywhere}",
  ".version{border:1px solid #dee2e6;border-radius:6px;padding:8px} .why{color:#495057;font-size:12px}",
  ".s-succeeded,.l-trusted{color:#2b8a3e} .s-failed,.l-invalidated{color:#c92a2a} " +
    ".l-suspect,.s-skipped{color:#e67700}",
  "pre.mermaid{background:#fff}",
  ".lanes{position:relative;border:1px solid #dee2e6;border-radius:6px;padding:4px 0;margin:8px 0}",
  ".lane{position:relative;height:22px;margin:2px 0} .bar{position:absolute;top:0;height:20px;overflow:hidden;",
  "white-space:nowrap;font-size:11px;line-height:20px;padding:0 3px;box-sizing:border-box;border-radius:3px;",
  "background:#d0ebff;border:1px solid #74c0fc} .bar.s-failed{background:#ffe3e3;border-color:#ff8787}",
  ".gap{position:absolute;top:0;height:20px;line-height:20px;font-size:11px;color:#868e96;text-align:center;",
  "white-space:nowrap;overflow:hidden;border:1px dashed #adb5bd;border-width:0 1px;box-sizing:border-box}",
].join("\n");

/** Renders every `pre.mermaid` once the bundle is loaded; the page records how many diagrams it drew. */
export const MERMAID_RUNNER = [
  'mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });',
  'mermaid.run({ querySelector: "pre.mermaid" }).then(() => { document.body.dataset.diagrams = ' +
    'String(document.querySelectorAll("pre.mermaid svg").length); }).catch((e) => { ' +
    'document.body.dataset.diagrams = "error: " + e.message; });',
].join("\n");

/** A table cell: markup already escaped, with an optional class. */
export type Cell = string | number | { html: string; class: string };

/** One table row of cells. */
export function row(cells: readonly Cell[]): string {
  const td = (c: Cell) => (typeof c === "object" ? `<td class="${c.class}">${c.html}</td>` : `<td>${c}</td>`);
  return `<tr>${cells.map(td).join("")}</tr>`;
}

/** A table's header row. */
export function headerRow(names: readonly string[]): string {
  return `<tr>${names.map((n) => `<th>${n}</th>`).join("")}</tr>`;
}
