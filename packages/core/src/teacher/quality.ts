import { z } from "zod";
import type { TestOutcome } from "../grading/schemas";

// What a snapshot's answers had to be to get in: the data-quality factor of a study (at equal
// supervised tokens, does verified data beat answers nobody checked?). Every snapshot records its
// quality; its children (length cut, prompt variant, budget) inherit it.
//   verified                — the hidden tests passed in the isolated judge (the default);
//   unverified              — any answer that parses into the task's main files, graded or not;
//   public_pass_hidden_fail — every public test passed and a hidden one did not: answers that look
//                             right to anyone who sees only the public tests.
// A fourth value names no collection filter but a control made from a snapshot:
//   shuffled_control        — each prompt answered with another task's answer (teacher/shuffle.ts
//                             on the server): the format without the repair, for a negative arm.

export const DATA_QUALITIES = ["verified", "unverified", "public_pass_hidden_fail"] as const;
export const DataQuality = z.enum(DATA_QUALITIES);
export type DataQuality = z.infer<typeof DataQuality>;

export const SNAPSHOT_QUALITIES = [...DATA_QUALITIES, "shuffled_control"] as const;
export type SnapshotQuality = (typeof SNAPSHOT_QUALITIES)[number];

export const DATA_QUALITY_LABELS: Record<SnapshotQuality, string> = {
  verified: "verified (hidden tests pass)",
  unverified: "unverified (any parseable answer)",
  public_pass_hidden_fail: "public pass, hidden fail",
  shuffled_control: "answers shuffled across tasks (control)",
};

/** A teacher answer as the quality rule sees it. */
export type GradedAnswer = {
  /** The parsed main files; null when the answer did not parse. */
  parsed: boolean;
  /** The judge's verdict; null while ungraded. */
  verdict: string | null;
  tests: Pick<TestOutcome, "layer" | "outcome">[];
};

const failed = (t: Pick<TestOutcome, "outcome">) => t.outcome === "failed" || t.outcome === "error";

/** Whether an answer belongs to a snapshot of this quality. */
export function admitsAnswer(quality: DataQuality, a: GradedAnswer): boolean {
  if (!a.parsed) return false;
  switch (quality) {
    case "verified":
      return a.verdict === "pass";
    case "unverified":
      return true;
    case "public_pass_hidden_fail": {
      const pub = a.tests.filter((t) => t.layer === "public");
      const hidden = a.tests.filter((t) => t.layer === "hidden");
      return a.verdict !== null && a.verdict !== "pass" && pub.length > 0 && !pub.some(failed) && hidden.some(failed);
    }
  }
}

/** Whether the quality rests on a verdict (then only an isolated judge's verdict counts). */
export const qualityReadsVerdict = (quality: DataQuality): boolean => quality !== "unverified";
