/**
 * One MCP session asking its user the questions of the plans it drives or reads, through
 * `elicitation/create` in form mode (docs/decisions/0061-questions-elicited-from-the-client.md).
 * Only a client that declared form elicitation is asked. An accepted form is answered as
 * `plan_answer` would be, and checked the same way: a refused answer is asked once more with the
 * reason, then left pending; a declined or cancelled form, or one withdrawn because `plan_answer`
 * came first, leaves the question to `plan_answer`. Nothing here throws: the question stays pending.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { isPlanManagerError } from "../errors.js";
import { answerFrom, asksAboutUndo, elicitForm, type FormContent } from "./elicit-form.js";
import type { Asker, Asking } from "./elicitations.js";
import type { PlanService } from "./service.js";

/** How long a form waits for its user before the question is left to `plan_answer` (30 minutes). */
export const ELICIT_TIMEOUT_MS = 30 * 60_000;
/** A refused answer is asked once more; then the question is left pending. */
const ASKS_PER_QUESTION = 2;

/** How an `ElicitSession` asks: how long a form waits, and where a failed ask is reported. */
export interface ElicitSessionOptions {
  /** How long one form waits for its user, in ms (default `ELICIT_TIMEOUT_MS`). */
  timeoutMs?: number;
  /** Called with what went wrong in asking (a transport that failed); the question stays pending. */
  onError?: (error: unknown) => void;
}

/**
 * One MCP session asking its client's user the questions of the plans it drives or reads, with
 * `elicitation/create` (form mode); an accepted form is checked exactly as `plan_answer` is.
 */
export class ElicitSession implements Asker {
  private readonly server: Server;
  private readonly service: PlanService;
  private readonly timeoutMs: number;
  private readonly onError: (error: unknown) => void;
  private closed = false;
  /** Forms open in this session, withdrawn when it closes. */
  private readonly open = new Set<AbortController>();

  constructor(server: Server, service: PlanService, options: ElicitSessionOptions = {}) {
    this.server = server;
    this.service = service;
    this.timeoutMs = options.timeoutMs ?? ELICIT_TIMEOUT_MS;
    this.onError = options.onError ?? (() => undefined);
  }

  /** Whether this session's user can be asked: the service asks, and the client declared form elicitation. */
  get capable(): boolean {
    return (
      !this.closed && this.service.elicitations.enabled && !!this.server.getClientCapabilities()?.elicitation?.form
    );
  }

  /** This session drives the plan's run now: it asks when the run pauses at a question. */
  follow(planId: string): void {
    if (this.capable) this.service.elicitations.follow(planId, this);
  }

  /** Asks the plan's question if it is one to ask and no session asked it yet; in the background. */
  consider(planId: string): void {
    if (!this.capable) return;
    void this.service.elicitations
      .claim(planId)
      .then((asking) => asking && this.ask(asking))
      .catch((error: unknown) => this.onError(error));
  }

  close(): void {
    this.closed = true;
    for (const form of this.open) form.abort();
  }

  private async ask(asking: Asking): Promise<void> {
    const { planId, question, key, produces } = asking;
    let refused: string | undefined;
    for (let asked = 0; asked < ASKS_PER_QUESTION && !asking.signal.aborted; asked++) {
      const content = await this.form(asking, refused);
      if (!content) return;
      if ("refused" in content) {
        refused = content.refused;
        continue;
      }
      try {
        await this.service.answer(planId, answerFrom(content.values, produces, asksAboutUndo(question)), key);
        return;
      } catch (error) {
        // Only a refused answer is asked again: a question gone or a run going on is not this form's.
        if (!isPlanManagerError(error) || error.path !== "answer") return;
        refused = error.message;
      }
    }
  }

  /**
   * One form: its content when accepted, why it was refused when the content does not fit the form
   * (the SDK checks it against the schema), undefined when declined, cancelled, withdrawn or failed.
   */
  private async form(
    asking: Asking,
    refused: string | undefined,
  ): Promise<{ values: FormContent } | { refused: string } | undefined> {
    const withdraw = new AbortController();
    const signal = AbortSignal.any([withdraw.signal, asking.signal]);
    this.open.add(withdraw);
    try {
      const result = await this.server.elicitInput(elicitForm(asking.question, asking.produces, refused), {
        signal,
        timeout: this.timeoutMs,
      });
      return result.action === "accept" ? { values: (result.content ?? {}) as FormContent } : undefined;
    } catch (error) {
      if (signal.aborted) return undefined;
      if (error instanceof McpError && error.code === ErrorCode.InvalidParams) return { refused: error.message };
      this.onError(error);
      return undefined;
    } finally {
      this.open.delete(withdraw);
    }
  }
}
