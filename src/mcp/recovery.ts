/**
 * A server takes up the runs no live process holds (docs/decisions/0037-planning-service-over-mcp.md,
 * "Runs outlive their server"): an MCP client closing a stdio server kills it mid-step after a few
 * seconds, and its plans would otherwise stay `running` until someone calls `plan_resume`. As durable
 * engines recover pending work at launch, the server looks over its database's threads at launch and
 * then on an interval (a claim that lapsed, another server that died) and takes each such plan up
 * through `PlanService.takeUp`, the path `plan_resume` takes. The run's own claim
 * (graph/process-claim.ts) keeps two servers from both running it.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";
import { saverAdapter } from "../storage/index.js";
import type { ThreadSummary } from "../storage/saver-adapter.js";
import type { PlanService } from "./service.js";
import { runGoingOn, type StatusCore } from "./status.js";

/** How often `RunRecovery` looks for runs whose server died, and what it does with a look that failed. */
export interface RecoveryOptions {
  /** Milliseconds between looks after the first (default 10 000; 0: at launch only). */
  everyMs?: number;
  /** What a look that failed threw (a database away for a while); the next look tries again. Default: ignored. */
  onError?: (error: unknown) => void;
}

/** Threads listed per query. */
const PAGE = 500;

/**
 * Takes up the runs of a database whose server died mid-step, at launch and then every `everyMs`, as
 * `plan_resume` would; calls cut in flight are settled through the effect journal.
 */
export class RunRecovery {
  private readonly service: PlanService;
  private readonly saver: BaseCheckpointSaver;
  private readonly everyMs: number;
  private readonly onError: (error: unknown) => void;
  /**
   * Threads whose latest checkpoint shows nothing to take up (ended, stopped, asking, not served), by
   * thread id, with that checkpoint's id: not read again until it changes. Rebuilt at each look, so it
   * holds no thread the database no longer has.
   */
  private idle = new Map<string, string>();
  /** Threads whose take-up threw, with the checkpoint it threw on: reported once each (rebuilt at each look). */
  private failed = new Map<string, string>();
  private looking: Promise<string[]> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  /** `saver` is the checkpointer `service` was made with. */
  constructor(service: PlanService, saver: BaseCheckpointSaver, options: RecoveryOptions = {}) {
    const everyMs = options.everyMs ?? 10_000;
    if (!Number.isSafeInteger(everyMs) || everyMs < 0)
      throw new PlanManagerError(
        "invalid_options",
        `everyMs must be a whole number of milliseconds ≥ 0, got ${String(everyMs)}`,
        { path: "everyMs" },
      );
    this.service = service;
    this.saver = saver;
    this.everyMs = everyMs;
    this.onError = options.onError ?? (() => undefined);
  }

  /** Takes up every plan no live process holds; resolves to the plan ids whose runs this process started. */
  scan(): Promise<string[]> {
    if (this.closed) return Promise.resolve([]);
    this.looking ??= this.look().finally(() => (this.looking = undefined));
    return this.looking;
  }

  /** Looks again every `everyMs` until `close` (the timer does not keep the process alive). */
  start(): void {
    if (this.everyMs === 0 || this.timer || this.closed) return;
    this.timer = setInterval(() => void this.scan().catch(this.onError), this.everyMs);
    this.timer.unref();
  }

  /** No more looks; resolves once a look under way has ended. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.looking?.catch(() => undefined);
  }

  private async look(): Promise<string[]> {
    const adapter = saverAdapter(this.saver);
    const started: string[] = [];
    const idle = new Map<string, string>();
    const failed = new Map<string, string>();
    let before: string | undefined;
    for (;;) {
      const page = await adapter.listThreads({ limit: PAGE, ...(before ? { before } : {}) });
      const settled = await this.settledByRow(page.filter((t) => this.idle.get(t.threadId) !== t.checkpointId));
      for (const { threadId, checkpointId } of page) {
        if (this.closed) return started;
        if (this.idle.get(threadId) === checkpointId || settled.has(threadId)) {
          idle.set(threadId, checkpointId);
          continue;
        }
        // One thread that cannot be read (a corrupt checkpoint, a graph that throws on it) is that
        // thread's problem: the plans after it are still taken up, and it is reported once per checkpoint.
        const outcome = await this.service.takeUp(threadId).catch((error: unknown) => {
          if (this.failed.get(threadId) !== checkpointId)
            this.onError(
              new Error(
                `could not take up plan "${threadId}" (checkpoint ${checkpointId}): ` +
                  `${error instanceof Error ? error.message : String(error)}; the other plans are taken up, ` +
                  "and this one is tried again at every look (repair or plan_delete it)",
                { cause: error },
              ),
            );
          failed.set(threadId, checkpointId);
          return "failed" as const;
        });
        if (outcome === "started") started.push(threadId);
        if (outcome === "idle") idle.set(threadId, checkpointId);
      }
      if (page.length < PAGE) break;
      before = page.at(-1)!.checkpointId;
    }
    this.idle = idle;
    this.failed = failed;
    return started;
  }

  /**
   * The threads whose status row names their latest checkpoint and shows nothing to take up: one
   * query for a page, so a database of finished plans is looked over without reading each one.
   */
  private async settledByRow(threads: readonly ThreadSummary[]): Promise<Set<string>> {
    const store = saverAdapter(this.saver).statuses;
    if (!store || threads.length === 0) return new Set();
    const rows = await store.read(threads.map((t) => t.threadId));
    const settled = new Set<string>();
    for (const { threadId, checkpointId } of threads) {
      const row = rows.get(threadId);
      // The row's summary is the service's (mcp/service.ts `summaryOf`): `{ core, createdAt? }`.
      if (row?.checkpointId === checkpointId && rowSettled(row.summary)) settled.add(threadId);
    }
    return settled;
  }
}

/** Whether a row shows nothing to take up; a row that cannot be read does not (the checkpoint is read instead). */
function rowSettled(summary: string): boolean {
  try {
    return !runGoingOn((JSON.parse(summary) as { core: StatusCore }).core);
  } catch {
    return false;
  }
}

/** A server's runs over its life (`langgraph-replan mcp`). */
export interface ServerRuns {
  /** A signal: no more take-ups, and the runs end at their next step boundary (`PlanService.halt`). */
  halt(): void;
  /** Resolves once no take-up is under way and every run has ended, or halted and been checkpointed. */
  ended(): Promise<void>;
}

/**
 * Takes up the runs no live process holds before the server answers its first request (so a
 * `plan_wait` finds its run), then every `everyMs`, until the server ends.
 */
export async function takeUpRuns(
  service: PlanService,
  saver: BaseCheckpointSaver,
  options: RecoveryOptions & {
    /** Halts as `ServerRuns.halt` does, also during the first look (a signal that comes while it takes runs up). */
    signal?: AbortSignal;
  } = {},
): Promise<ServerRuns> {
  const recovery = new RunRecovery(service, saver, options);
  let halted: Promise<void> | undefined;
  const halt = () => void (halted ??= recovery.close().then(() => service.halt()));
  if (options.signal?.aborted) halt();
  options.signal?.addEventListener("abort", halt, { once: true });
  await recovery.scan().catch(options.onError ?? (() => undefined));
  recovery.start();
  return {
    halt,
    async ended() {
      await recovery.close();
      await service.settled();
      await halted;
    },
  };
}
