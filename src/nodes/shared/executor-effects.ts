/** What an executor may change, as the capability review reads it (docs/architecture.md "Untrusted facts"). */
import type { Runtime } from "../../runtime/options.js";
import { agentSideEffects } from "../../steps/handle.js";

/** A tool's side effects from its metadata; an agent's (`agent:NAME`) from the tools it lists. */
export function executorEffects(rt: Pick<Runtime, "tools" | "agents" | "metadataOf">, name: string): readonly string[] {
  const agent = !rt.tools.has(name) && name.startsWith("agent:") ? rt.agents.get(name.slice(6)) : undefined;
  if (agent) return agentSideEffects(agent, rt.metadataOf);
  return rt.metadataOf(name)?.sideEffects ?? [];
}
