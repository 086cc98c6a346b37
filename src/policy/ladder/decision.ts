/**
 * A decision as stored in `state.decisions`: the shape from plan/schema/decision.ts, with `rule` typed by
 * the rule table (`RuleId`), so a decision cannot name a rule that does not exist.
 */
import { z } from "zod";
import { DecisionShapeSchema } from "../../plan/schema/decision.js";
import { RULE_IDS } from "./rules.js";

/** The schema of a decision. */
export const DecisionSchema = DecisionShapeSchema.extend({ rule: z.enum(RULE_IDS) });
/** A decision in `state.decisions`: the rule that fired, its action, the failure class and the evidence. */
export type Decision = z.infer<typeof DecisionSchema>;
