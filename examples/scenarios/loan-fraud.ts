/**
 * The loan workflow with new evidence: identity, credit and compliance succeed; underwriting
 * then finds an employment start date before the employer was founded, which falsifies the
 * employment assumption. Plan v2 inserts deep verification and a human review before the
 * decision.
 */
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import type { PlanDraft, ReplanRequest } from "../../src/index.js";

export function createFraudTools() {
  const calls: string[] = [];
  const make = (
    name: string,
    description: string,
    result: (args: Record<string, unknown>) => unknown,
    metadata?: Record<string, unknown>,
  ) =>
    tool(
      async (args: Record<string, unknown>) => {
        calls.push(name);
        return result(args);
      },
      { name, description, schema: z.object({}).passthrough(), ...(metadata ? { metadata } : {}) },
    );
  const tools = [
    make("verify_identity", "Verify identity documents.", () => ({ identity_verified: true })),
    make("pull_credit", "Pull the credit score.", () => ({ credit_score: 720 })),
    make("compliance_check", "AML and policy checks.", () => ({ compliance_flag: "pass" })),
    make("underwrite", "Underwrite the application from the stated employment.", () => ({
      recommendation: "approve",
      employment_start: 2015,
      employer_founded: 2019,
    })),
    make("deep_verify_employment", "Verify employment with the employer and tax records.", () => ({
      employment_verified: false,
      fraud_signal: "employment predates employer",
    })),
    make("issue_decision", "Write the decision and notify the applicant.", (a) => ({ decision: a.human_decision }), {
      sideEffects: ["write to loan DB"],
    }),
  ];
  return { tools, calls };
}

export const fraudPlan: PlanDraft = {
  assumptions: [
    {
      id: "employment_valid",
      statement: "the stated employment history is genuine",
      check: "facts.employment_start >= facts.employer_founded",
    },
  ],
  steps: [
    {
      id: "verify_identity",
      goal: "Verifying identity",
      tool: "verify_identity",
      inputs: ["applicant_id"],
      produces: ["identity_verified"],
    },
    {
      id: "pull_credit",
      goal: "Checking credit history",
      tool: "pull_credit",
      dependsOn: ["verify_identity"],
      inputs: ["applicant_id"],
      produces: ["credit_score"],
    },
    {
      id: "compliance_check",
      goal: "Running compliance checks",
      tool: "compliance_check",
      dependsOn: ["pull_credit"],
      inputs: ["credit_score"],
      produces: ["compliance_flag"],
      assumptions: ["employment_valid"],
    },
    {
      id: "underwrite",
      goal: "Underwriting",
      tool: "underwrite",
      dependsOn: ["compliance_check"],
      inputs: ["credit_score", "compliance_flag"],
      produces: ["recommendation", "employment_start", "employer_founded"],
      assumptions: ["employment_valid"],
    },
    {
      id: "issue_decision",
      goal: "Issuing the decision",
      tool: "issue_decision",
      dependsOn: ["underwrite"],
      inputs: ["recommendation"],
      produces: ["decision"],
      assumptions: ["employment_valid"],
    },
  ],
};

export function fraudReplan(req: ReplanRequest): PlanDraft {
  return {
    steps: [
      {
        id: "deep_verification",
        goal: "Verifying employment in depth",
        tool: "deep_verify_employment",
        inputs: ["applicant_id"],
        produces: ["employment_verified", "fraud_signal"],
      },
      {
        id: "fraud_review",
        goal: "Fraud review by an investigator",
        human: { prompt: `Possible fraud (${req.trigger.slice(0, 60)}…): decide.` },
        dependsOn: ["deep_verification"],
        inputs: ["fraud_signal"],
        produces: ["human_decision"],
      },
      {
        id: "issue_decision",
        goal: "Issuing the decision",
        tool: "issue_decision",
        dependsOn: ["fraud_review"],
        inputs: ["human_decision"],
        produces: ["decision"],
      },
    ],
  };
}
