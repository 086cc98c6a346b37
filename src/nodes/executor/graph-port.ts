/**
 * The graph's port of the one attempt driver (runtime/run-attempt.ts): the tool and the verify probe
 * from the registry, called with LangChain's config. The journal's order, the deadline and the settling
 * of a call in doubt are the driver's (docs/decisions/0038-effect-journal.md).
 */
import { errorInfo } from "../../policy/ladder/deviation.js";
import { toolConfig, type Invocable, type ToolCall } from "../../runtime/call-tool.js";
import type { Runtime } from "../../runtime/options.js";
import type { RunJournal } from "../../runtime/effect-journal.js";
import type { AttemptPort } from "../../runtime/run-attempt.js";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";

/** The call under `key`: the operation's, or the redo key the journal moved it to. */
function keyed(call: ToolCall, key: string): ToolCall {
  if (call.configurable?.idempotencyKey === key) return call;
  return { ...call, configurable: { ...call.configurable, idempotencyKey: key } };
}

/** The graph's port of the driver for one keyed call: the tool and the probe from the registry, called with LangChain's config. */
export function graphPort(
  rt: Runtime,
  config: LangGraphRunnableConfig,
  call: Omit<ToolCall, "args" | "timeoutMs">,
  journal: RunJournal | undefined,
  now: () => string,
  thrown: { last?: unknown } = {},
): AttemptPort {
  return {
    call: async (c, key, signal) => {
      const at = key === undefined ? call : keyed({ ...call, args: c.args, timeoutMs: c.timeoutMs }, key);
      try {
        return { ok: true, output: await (call.tool as Invocable).invoke(c.args, toolConfig(at, config, signal)) };
      } catch (error) {
        thrown.last = error;
        return { ok: false, error: errorInfo(error) };
      }
    },
    probe: async (name, args, key, signal) => {
      const probe = rt.tools.get(name);
      if (!probe) throw new Error(`tool "${name}" is not in the registry`);
      return probe.invoke(args, toolConfig(keyed({ ...call, args, timeoutMs: 0 }, key), config, signal));
    },
    clock: rt.clock,
    // Without the caller's stop, LangGraph's own signal still ends a backoff early.
    wake: config.signal,
    now,
    journal,
    honoursKeys: rt.honoursKeys,
  };
}
