import { describe, expect, it } from "vitest";
import { formatAnswer } from "../teacher/answer";
import {
  answerContaminated,
  answerContaminationCheck,
  answerContaminationLines,
  answerRepeats,
  answerRepeatsText,
  copiedAnswers,
  type TrainedAnswer,
} from "./answer-contamination";

const program = (k: number) =>
  [
    `def solve_${k}(xs):`,
    `    total = 0`,
    `    for i, x in enumerate(xs):`,
    `        if x % ${k + 2} == 0:`,
    `            total += x * i - ${k}`,
    `    return total + len(xs) * ${k * 7 + 1}`,
    "",
  ].join("\n");
const task = (id: string, code: string) => ({ id, reference: [{ path: "solution.py", content: code }] });
const sft = (id: string, code: string): TrainedAnswer => ({
  source: "sft",
  id,
  text: `Here is the fix.\n\n${formatAnswer([{ path: "solution.py", content: code }])}`,
  mains: ["solution.py"],
});

describe("answer-side contamination", () => {
  const test = [task("t1", program(1)), task("t2", program(2))];
  const dev = [task("d1", program(3))];

  it("finds a test reference the SFT data trained on, exactly (positive control)", () => {
    const r = answerContaminationCheck({ test, dev, answers: [sft("a#0", program(1)), sft("b#0", program(9))] });
    expect(r.answers).toEqual({ sft: 2, dpo_chosen: 0, dpo_rejected: 0 });
    expect(r.test.exactPairs).toBe(1);
    expect(r.test.pairs[0]).toMatchObject({ testTaskId: "t1", otherTaskId: "sft:a#0", exact: true, normalized: true });
    expect(copiedAnswers(r.test)).toBe(1);
    expect(answerContaminated(r)).toBe(true);
    expect(copiedAnswers(r.dev)).toBe(0);
    expect(answerContaminationLines(r)[0]).toMatchObject({ contaminated: true });
  });

  it("sees through comments and whitespace (normalized), and counts shared 13-grams of a partial copy", () => {
    const edited = program(2).replace("    total = 0", "    total  =  0   # start").concat("# trailing note\n");
    const partial = program(1).split("\n").slice(0, 4).join("\n") + "\n    return None\n";
    const r = answerContaminationCheck({ test, dev, answers: [sft("x#0", edited), sft("y#0", partial)] });
    const t2 = r.test.pairs.find((p) => p.testTaskId === "t2");
    expect(t2).toMatchObject({ exact: false, normalized: true });
    const t1 = r.test.pairs.find((p) => p.testTaskId === "t1");
    expect(t1).toMatchObject({ exact: false, normalized: false });
    expect(t1?.sharedNgrams).toBeGreaterThan(0);
    expect(copiedAnswers(r.test)).toBe(1);
  });

  it("reports nothing when the trained answers are other programs (negative control), DPO answers included", () => {
    const dpo: TrainedAnswer[] = [
      { ...sft("p", program(11)), source: "dpo_chosen" },
      { ...sft("p", program(12)), source: "dpo_rejected" },
    ];
    const r = answerContaminationCheck({ test, dev, answers: [sft("a#0", program(10)), ...dpo] });
    expect(r.answers).toEqual({ sft: 1, dpo_chosen: 1, dpo_rejected: 1 });
    expect(r.test.exactPairs + r.test.normalizedPairs).toBe(0);
    expect(answerContaminated(r)).toBe(false);
    // The same DPO answer carrying a test reference does fire.
    const leak = answerContaminationCheck({ test, dev, answers: [{ ...sft("q", program(3)), source: "dpo_chosen" }] });
    expect(leak.dev.pairs[0]).toMatchObject({ testTaskId: "d1", otherTaskId: "dpo_chosen:q", exact: true });
  });

  it("an answer that does not parse is compared as trained, whole", () => {
    const r = answerContaminationCheck({
      test,
      dev: [],
      answers: [{ source: "sft", id: "raw", text: program(1), mains: ["solution.py"] }],
    });
    expect(r.test.pairs[0]).toMatchObject({ testTaskId: "t1", exact: true });
  });
});

describe("answer repeats", () => {
  it("names a family whose tasks share a handful of answers, and counts test answers shared with train", () => {
    // 16 tasks, 2 shapes: every answer is one of two programs (the learnable family's situation).
    const tasks = Array.from({ length: 16 }, (_, i) => ({
      ...task(`learnable/shape${i % 2}/t${i}`, program(i % 2)),
      cluster: `shape${i % 2}`,
      part: (i < 10 ? "train" : i < 13 ? "dev" : "test") as "train" | "dev" | "test",
    }));
    const r = answerRepeats(tasks);
    expect(r).toMatchObject({ tasks: 16, distinctAnswers: 2, testSharedWithTrain: 3, truncated: false });
    expect(r.repeated.map((x) => x.family)).toEqual(["shape0", "shape1"]);
    expect(r.repeated[0]?.parts).toEqual({ train: 5, dev: 2, test: 1 });
    expect(answerRepeatsText(r)).toContain("16 tasks have 2 distinct reference answers (family shape0, shape1)");
    // Without clusters the family is the tasks' common id prefix.
    const bare = answerRepeats(tasks.map((t) => ({ ...t, cluster: null })));
    expect(bare.repeated[0]?.family).toBe("learnable/shape0");
  });

  it("says nothing when every task has its own answer", () => {
    const r = answerRepeats([0, 1, 2].map((k) => ({ ...task(`t${k}`, program(k)), part: "test" as const })));
    expect(r).toMatchObject({ distinctAnswers: 3, repeated: [] });
    expect(answerRepeatsText(r)).toBeNull();
  });
});
