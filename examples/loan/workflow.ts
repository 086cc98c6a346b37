/**
 * The loan-approval workflow from the design card: verify identity and pull credit side by side
 * (the bureau answers 503 once), compliance check once both are in, a human review when compliance says "review", then the
 * decision is issued (a side effect, committed once per idempotency key).
 */
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import type { PlanDraft, ReplanRequest } from "langgraph-replan";

export interface LoanToolOptions {
  /** How many times the credit bureau answers 503 before it succeeds. Default 1. */
  bureauFailures?: number;
  /** What the compliance service returns. Default "review". */
  complianceFlag?: string;
  /** Where committed decisions are recorded, keyed by idempotency key. */
  ledger?: Map<string, { applicant_id: string; decision: string }>;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

export function createLoanTools(options: LoanToolOptions = {}) {
  let bureauFailures = options.bureauFailures ?? 1;
  const ledger = options.ledger ?? new Map<string, { applicant_id: string; decision: string }>();
  const calls: string[] = [];

  const verifyIdentity = tool(
    async ({ applicant_id }) => {
      calls.push("verify_identity");
      return { identity_verified: applicant_id.startsWith("A-") };
    },
    {
      name: "verify_identity",
      description: "Verify the applicant's identity documents.",
      schema: z.object({ applicant_id: z.string() }),
    },
  );
  const pullCredit = tool(
    async ({ applicant_id }) => {
      calls.push("pull_credit");
      if (bureauFailures > 0) {
        bureauFailures -= 1;
        throw new HttpError(503, "credit bureau unavailable (503)");
      }
      return { credit_score: applicant_id === "A-7291" ? 720 : 640 };
    },
    {
      name: "pull_credit",
      description: "Pull the applicant's credit score from the bureau.",
      schema: z.object({ applicant_id: z.string() }),
    },
  );
  const complianceCheck = tool(
    async () => {
      calls.push("compliance_check");
      return { compliance_flag: options.complianceFlag ?? "review" };
    },
    {
      name: "compliance_check",
      description: "Run AML and policy compliance checks.",
      schema: z.object({ applicant_id: z.string(), credit_score: z.number() }),
    },
  );
  const issueDecision = tool(
    async ({ applicant_id, human_override }, config) => {
      calls.push("issue_decision");
      const key = String(config?.configurable?.idempotencyKey ?? "");
      if (!key) throw new Error("issue_decision needs an idempotency key");
      if (!ledger.has(key)) ledger.set(key, { applicant_id, decision: human_override });
      return { decision: ledger.get(key)!.decision };
    },
    {
      name: "issue_decision",
      description: "Write the loan decision to the loan database and notify the applicant.",
      schema: z.object({ applicant_id: z.string(), human_override: z.string() }),
      metadata: { sideEffects: ["write to loan DB", "trigger notification"] },
    },
  );
  const businessCredit = tool(
    async ({ applicant_id }) => {
      calls.push("business_credit");
      return { business_credit_score: applicant_id === "A-7291" ? 81 : 55 };
    },
    {
      name: "business_credit",
      description: "Pull the business credit score of the applicant's company.",
      schema: z.object({ applicant_id: z.string() }),
    },
  );
  return { tools: [verifyIdentity, pullCredit, complianceCheck, issueDecision, businessCredit], ledger, calls };
}

export const loanPlan: PlanDraft = {
  rationale: "Standard consumer-loan pipeline with a human review when compliance asks for one.",
  steps: [
    {
      id: "verify_identity",
      goal: "Verifying identity",
      tool: "verify_identity",
      inputs: ["applicant_id"],
      produces: ["identity_verified"],
      preconditions: ["has(facts.applicant_id)"],
      successSignal: "output.identity_verified == true",
      retry: { maxAttempts: 2, backoff: "fixed", initialDelayMs: 5000 },
      cost: 0.02,
    },
    {
      id: "pull_credit",
      goal: "Checking credit history",
      tool: "pull_credit",
      inputs: ["applicant_id"],
      produces: ["credit_score"],
      successSignal: "output.credit_score >= 300 && output.credit_score <= 850",
      retry: { maxAttempts: 3, backoff: "exponential", initialDelayMs: 500, maxDelayMs: 8000 },
      cost: 0.03,
    },
    {
      id: "compliance_check",
      goal: "Running compliance checks",
      tool: "compliance_check",
      dependsOn: ["verify_identity", "pull_credit"],
      inputs: ["applicant_id", "credit_score"],
      produces: ["compliance_flag"],
      preconditions: ["has(facts.credit_score)", "facts.identity_verified == true"],
      successSignal: 'output.compliance_flag in ["pass", "review"]',
      retry: { maxAttempts: 1 },
      cost: 0.05,
    },
    {
      id: "human_review",
      goal: "Compliance review by an underwriter",
      human: {
        prompt: "Compliance flagged this application for review: approve or deny?",
        timeoutMs: 48 * 3600 * 1000,
      },
      dependsOn: ["compliance_check"],
      inputs: ["applicant_id", "credit_score", "compliance_flag"],
      when: 'facts.compliance_flag == "review"',
      produces: ["human_override"],
      successSignal: 'output.human_override in ["approved", "denied"]',
    },
    {
      id: "issue_decision",
      goal: "Issuing the decision",
      tool: "issue_decision",
      dependsOn: ["human_review"],
      inputs: ["applicant_id", "human_override"],
      produces: ["decision"],
      successSignal: 'output.decision in ["approved", "denied"]',
      cost: 0.01,
    },
  ],
};

/**
 * Replanning for the loan workflow: a scope change asking for business credit adds that check
 * before the decision; everything else is kept as it was.
 */
export function loanReplan(req: ReplanRequest): PlanDraft {
  const wantsBusiness =
    req.scopeChanges.some((c) => /business credit/i.test(c)) || req.constraints.some((c) => /business credit/i.test(c));
  const steps = req.affectedSteps.map((s) => ({ ...s }));
  if (!wantsBusiness) return { steps };
  const business = {
    id: "business_credit",
    goal: "Checking business credit",
    tool: "business_credit",
    inputs: ["applicant_id"],
    produces: ["business_credit_score"],
    successSignal: "output.business_credit_score >= 0",
  };
  const first = steps[0];
  if (first) first.dependsOn = [...(first.dependsOn ?? []), "business_credit"];
  return { steps: [business, ...steps] };
}
