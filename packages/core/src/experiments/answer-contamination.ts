import { canonicalJson, sha256Hex } from "../hash";
import type { TaskSpec } from "../tasks/spec";
import { referenceCode as codeOf } from "../tasks/clusters";
import { normalizePython, pythonTokens } from "../tasks/pynorm";
import { leakageReport, type LeakTask, type LeakageReport } from "../tasks/leakage";
import type { SplitPart } from "../tasks/split";
import { parseAnswer } from "../teacher/answer";

// Answer-side contamination: the question-side check (contamination.ts) compares what a model is
// asked; a test task whose *answer* the model was trained to write is contaminated all the same,
// whatever its question looks like. Test and dev references are compared with every answer the
// experiment trained on (SFT assistant turns, DPO chosen and rejected answers): exact, normalized
// (comments and whitespace stripped) and 13-gram overlap of Python tokens. Tasks whose references
// repeat across the pool (a family with a handful of distinct answers) are named as well.

export type AnswerSource = "sft" | "dpo_chosen" | "dpo_rejected";

/** One trained-on answer: its text as trained, and the main files of the task it answers (to parse it). */
export type TrainedAnswer = { source: AnswerSource; id: string; text: string; mains: readonly string[] };

type WithReference = Pick<TaskSpec, "id" | "reference"> & { cluster?: string | null };

function codeTask(id: string, code: string, part: SplitPart): LeakTask {
  return {
    taskId: id,
    part,
    tokens: pythonTokens(code),
    exactHash: sha256Hex(canonicalJson(["code", code])),
    normalizedHash: sha256Hex(canonicalJson(["code", normalizePython(code)])),
  };
}

/** The code an answer puts in the task's main files; the whole text when it does not parse (it was trained on as is). */
function answerCode(a: TrainedAnswer): string {
  const parsed = parseAnswer(a.text, a.mains);
  return parsed.ok ? codeOf(parsed.files) : a.text;
}

export type AnswerContamination = {
  /** How many trained-on answers of each source were compared. */
  answers: Record<AnswerSource, number>;
  test: LeakageReport;
  dev: LeakageReport;
};

/**
 * References of the checked tasks against the trained-on answers. Pairs name the answer as
 * `<source>:<id>` (an SFT sample `sft:<task>#<ordinal>`, a DPO pair `dpo_chosen:<pair key>`).
 */
export function answerContaminationCheck(input: {
  test: readonly WithReference[];
  dev: readonly WithReference[];
  answers: readonly TrainedAnswer[];
}): AnswerContamination {
  const trained = input.answers.map((a) => codeTask(`${a.source}:${a.id}`, answerCode(a), "train"));
  const check = (tasks: readonly WithReference[]) =>
    leakageReport([...trained, ...tasks.map((t) => codeTask(t.id, codeOf(t.reference), "test"))]);
  const answers: Record<AnswerSource, number> = { sft: 0, dpo_chosen: 0, dpo_rejected: 0 };
  for (const a of input.answers) answers[a.source] += 1;
  return { answers, test: check(input.test), dev: check(input.dev) };
}

/** One reference answer shared by several tasks (up to comments and whitespace). */
export type RepeatedAnswer = {
  /** The tasks' common cluster, else their common id prefix, else the first task id. */
  family: string;
  tasks: number;
  parts: Record<SplitPart, number>;
  sampleTaskIds: string[];
};

export type AnswerRepeats = {
  tasks: number;
  distinctAnswers: number;
  /** Test tasks whose reference is also the reference of a train task. */
  testSharedWithTrain: number;
  /** Largest first, at most 20. */
  repeated: RepeatedAnswer[];
  truncated: boolean;
};

function familyName(ids: readonly string[], clusters: readonly (string | null | undefined)[]): string {
  const c = clusters[0];
  if (c && clusters.every((x) => x === c)) return c;
  let prefix = ids[0] ?? "";
  for (const id of ids) while (!id.startsWith(prefix)) prefix = prefix.slice(0, -1);
  prefix = prefix.replace(/[^/._-]*$/, "").replace(/[/._-]+$/, "");
  return prefix || `${ids[0] ?? "?"}…`;
}

/** Which references repeat across the split's tasks (normalized): the family behind them is named in the report. */
export function answerRepeats(tasks: readonly (WithReference & { part: SplitPart })[], max = 20): AnswerRepeats {
  const groups = new Map<string, (WithReference & { part: SplitPart })[]>();
  for (const t of tasks) {
    const k = sha256Hex(normalizePython(codeOf(t.reference)));
    const g = groups.get(k);
    if (g) g.push(t);
    else groups.set(k, [t]);
  }
  const repeated = [...groups.values()]
    .filter((g) => g.length > 1)
    .sort((a, b) => b.length - a.length || (a[0]?.id ?? "").localeCompare(b[0]?.id ?? ""))
    .map((g) => {
      const ids = g.map((t) => t.id).sort();
      const parts: Record<SplitPart, number> = { train: 0, dev: 0, test: 0 };
      for (const t of g) parts[t.part] += 1;
      return {
        family: familyName(
          ids,
          g.map((t) => t.cluster),
        ),
        tasks: g.length,
        parts,
        sampleTaskIds: ids.slice(0, 5),
      };
    });
  const testSharedWithTrain = [...groups.values()]
    .filter((g) => g.some((t) => t.part === "train"))
    .reduce((n, g) => n + g.filter((t) => t.part === "test").length, 0);
  return {
    tasks: tasks.length,
    distinctAnswers: groups.size,
    testSharedWithTrain,
    repeated: repeated.slice(0, max),
    truncated: repeated.length > max,
  };
}

/** The header's line, or null when no answer repeats. */
export function answerRepeatsText(r: AnswerRepeats): string | null {
  if (r.repeated.length === 0) return null;
  const fams = [...new Set(r.repeated.map((x) => x.family))];
  const named = fams.slice(0, 3).join(", ") + (fams.length > 3 ? ", …" : "");
  return (
    `Answers repeat across tasks: ${r.tasks} tasks have ${r.distinctAnswers} distinct reference answers (family ${named}); ` +
    `${r.testSharedWithTrain} test task${r.testSharedWithTrain === 1 ? "" : "s"} share their answer with a train task, ` +
    "so tasks are not independent units and a model can pass them by recalling a train answer."
  );
}

/** Test or dev tasks whose reference is an exact or normalized copy of a trained-on answer. */
export const copiedAnswers = (r: LeakageReport): number =>
  new Set(r.pairs.filter((p) => p.exact || p.normalized).map((p) => p.testTaskId)).size;

export const CONTAMINATED_NOTE =
  "test tasks' reference answers are among the answers this model was trained on (Checks, answer-side contamination); the test result measures recall, not repair.";

/** Whether the test references were trained on: the report is then marked contaminated. */
export const answerContaminated = (a: AnswerContamination): boolean => copiedAnswers(a.test) > 0;

/** The report's lines for the answer-side check (pages and Markdown). */
export function answerContaminationLines(a: AnswerContamination): { text: string; contaminated: boolean }[] {
  const n = a.answers;
  const from = `${n.sft} SFT answers${n.dpo_chosen + n.dpo_rejected ? `, ${n.dpo_chosen} DPO chosen and ${n.dpo_rejected} DPO rejected answers` : ""}`;
  return (["test", "dev"] as const).map((split) => {
    const r = a[split];
    const copies = copiedAnswers(r);
    return {
      text:
        `Answer-side contamination (${split} references vs ${from}): ${copies} of ${r.testTasks} ${split} tasks' reference answers were trained on ` +
        `(exact ${r.exactPairs}, normalized ${r.normalizedPairs} pairs); ${r.testTasksWithLeak} overlap in any way (${r.n}-gram ${r.ngramPairs} pairs)`,
      contaminated: copies > 0,
    };
  });
}
