import { canonicalJson, sha256Hex } from "../hash";
import type { ExperimentConfig } from "./config";

// The test-read ledger of a split (brief §11): every claim of its test part, printed on every report
// built on it. A test set read many times is no longer a held-out estimate of anything: whoever picks
// among those reads selects on test. The split can be marked final, after which a claim needs an
// admin's override with a reason.

export type TestClaim = {
  /** Null when the claimer is a study, or the experiment was deleted (the read stays counted). */
  experimentId: string | null;
  studyId: string | null;
  claimerName: string;
  recipeHash: string;
  models: string[];
  claimedAt: string;
  claimedBy: string | null;
  /** Set when the split was already final: the admin who allowed the read, and why. */
  override: { reason: string; by: string | null } | null;
};

export type TestReads = {
  splitId: string;
  count: number;
  /** Oldest first. */
  claims: TestClaim[];
  final: { at: string; by: string | null; note: string } | null;
  /** Reads when the report was built; `count` is the ledger when it is read (the same in the stored body). */
  countAtReport: number;
};

/**
 * The recipe's identity for the ledger: every field of the recipe except what only names or
 * annotates it, so two reads by the same recipe under different names show as the same recipe.
 */
export function recipeHash(config: ExperimentConfig): string {
  const { name: _name, disclaimer: _disclaimer, ...recipe } = config;
  return sha256Hex(canonicalJson(recipe));
}

/** "read once", "read 3 times", and the final mark: the line every report prints. */
export function testReadsText(r: Pick<TestReads, "count" | "final" | "countAtReport">): string {
  const times = r.count === 1 ? "once" : `${r.count} times`;
  const since = r.count > r.countAtReport ? ` (${r.count - r.countAtReport} after this report was built)` : "";
  const final = r.final ? "; the split is marked final: a further read needs an admin override with a reason" : "";
  return `This test set has been read ${times}${since}${final}.`;
}

/** One claim on one line, for the exports and the pages. */
export function testClaimText(c: TestClaim): string {
  const who = c.claimedBy ? ` by ${c.claimedBy}` : "";
  const override = c.override ? ` — override by ${c.override.by ?? "an admin"}: ${c.override.reason}` : "";
  return `${c.claimedAt} ${c.studyId ? `study ${c.studyId}` : c.claimerName}${who}: ${c.models.join(" vs ")} (recipe ${c.recipeHash.slice(0, 12)})${override}`;
}
