/**
 * One name, one meaning in src/policy: no two files export a function or constant of the same name
 * (there is one `decide`, the ladder's; the replan's step machine is `decideReplan`).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

describe("names in src/policy", () => {
  it("no exported function or constant is defined in two files", () => {
    const files = new Map<string, string[]>();
    for (const file of sources("src/policy"))
      for (const m of readFileSync(file, "utf8").matchAll(/^export (?:async )?(?:function\*?|const) (\w+)/gm))
        // A function's overload signatures are one definition: each file counts once.
        if (!files.get(m[1]!)?.includes(file)) files.set(m[1]!, [...(files.get(m[1]!) ?? []), file]);
    expect([...files].filter(([, where]) => where.length > 1)).toEqual([]);
    expect(files.get("decide")).toEqual(["src/policy/ladder/decide.ts"]);
  });
});
