import { and, eq } from "drizzle-orm";
import { insertPreferencePairs, schema, type Db } from "@agentlab/db";
import { ExperimentConfig, type FailingLayer, type GradeVerdict, type ScoredPair } from "@agentlab/core";
import { baseConfig, makeSplit } from "../experiments-harness";

// Stored preference pairs of a finished sft+dpo experiment for the pair browser's tests:
// written through the query the pairs stage uses, so the train-only trigger checks them. The mix
// is fixed and known (layers, sources, rounds, margins, a down-weighted pair), so a filter's
// expected rows can be counted from `pairs`.

const VERDICT: Record<FailingLayer, GradeVerdict> = {
  syntax: "fail_syntax",
  public: "fail_public",
  hidden: "fail_hidden",
  limits: "timeout",
  tampered: "tampered",
};

/** Round 0: −3.2, −2.7, …, 0.3; round 1: −4, −3.7, …, −0.7. */
export const margin = (round: number, i: number): number =>
  round === 0 ? Number((-3.2 + i * 0.5).toFixed(2)) : Number((-4 + i * 0.3).toFixed(2));

export type SeededPairs = { experimentId: string; splitId: string; pairs: Map<number, ScoredPair[]> };

export async function seedPreferencePairs(db: Db, name = "dpo browser"): Promise<SeededPairs> {
  const { splitId } = await makeSplit(db);
  const train = (
    await db
      .select({ taskId: schema.splitAssignments.taskId })
      .from(schema.splitAssignments)
      .where(and(eq(schema.splitAssignments.splitId, splitId), eq(schema.splitAssignments.part, "train")))
  )
    .map((r) => r.taskId)
    .sort();
  // Finished, so a running product's experiment runner leaves it alone.
  const [exp] = await db
    .insert(schema.experiments)
    .values({
      name,
      splitId,
      state: "succeeded",
      config: ExperimentConfig.parse(baseConfig(splitId, { name, method: "sft+dpo", dpo: { rounds: 2 } })),
    })
    .returning({ id: schema.experiments.id });
  if (!exp) throw new Error("no experiment");
  const layers: FailingLayer[] = ["hidden", "hidden", "public", "syntax", "hidden", "limits"];
  const make = (round: number, i: number): ScoredPair => {
    const taskId = train[i % 6] ?? "";
    const layer = layers[i % layers.length] ?? "hidden";
    const mutant = round === 1 && i % 4 === 3;
    return {
      pairKey: `${taskId}:${mutant ? "mutant" : `r${round}`}:${i}`,
      taskId,
      pairSource: mutant ? "near_miss" : "cross_state",
      prompt: [
        { role: "system", content: "You repair Python code." },
        { role: "user", content: `Fix the bug in ${taskId}.` },
      ],
      chosenSource: i % 3 === 0 ? "teacher" : "reference",
      chosenText: `\`\`\`python\ndef solve_${i}(x):\n    return x + 1\n\`\`\`\n`,
      rejectedSource: mutant ? "mutant" : "on_policy",
      rejectedModelKey: round === 0 ? "s1e2" : "dpo-s1r1e1",
      rejectedSample: i,
      rejectedText: `\`\`\`python\ndef solve_${i}(x):\n    return x - 1\n\`\`\`\n`,
      rejectedVerdict: VERDICT[layer],
      failingLayer: layer,
      failingTests: layer === "syntax" || layer === "limits" ? [] : [`tests/test_hidden.py::test_case_${i}`],
      marginBefore: margin(round, i),
      // round 0's last pair is above the threshold 0: the filter (mode downweight) kept it at ×0.25
      weight: margin(round, i) > 0 ? 0.25 : 1,
    };
  };
  const pairs = new Map<number, ScoredPair[]>([
    [0, Array.from({ length: 8 }, (_, i) => make(0, i))],
    [1, Array.from({ length: 12 }, (_, i) => make(1, i))],
  ]);
  for (const [round, ps] of pairs) await insertPreferencePairs(db, { experimentId: exp.id, round, pairs: ps });
  return { experimentId: exp.id, splitId, pairs };
}
