import { z } from "zod";
import { DomainError } from "../errors";
import { GenerateSummary, TrainMethod } from "../trainer/schemas";
import type { EvalProtocol } from "./config";

// One protocol for every evaluation, dev included: what the generation actually ran
// under is recorded with each answer, checked against the recipe when the answers arrive, and
// checked for equality across every compared evaluation before selection and before the report.

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, "a sha256 hex digest");

/** The part of the trainer's generate summary (core trainer GenerateSummary) that makes up the protocol. */
export const ProtocolSummary = GenerateSummary.pick({
  backend: true,
  backend_version: true,
  dtype: true,
  device: true,
  decoding: true,
  stop: true,
  generation_config: true,
  chat_template_sha256: true,
  model: true,
  adapter_sha256: true,
  task_prompts_sha256: true,
});
export type ProtocolSummary = z.infer<typeof ProtocolSummary>;

// A `generate` job's result is GenerateJobResult in jobs/contracts.ts (its summary holds a ProtocolSummary).

/** The protocol recorded with every stored answer (the grader version joins it once graded). */
export const GenerationProtocol = z.object({
  promptTemplateHash: Sha256,
  chatTemplateSha256: Sha256.nullable(),
  decoding: z.object({ doSample: z.boolean(), temperature: z.number().positive(), topP: z.number().gt(0).max(1) }),
  maxNewTokens: z.number().int().min(1),
  /** Answers per task and the base seed of sampled decoding; records without it were one greedy answer. */
  samples: z.number().int().min(1).default(1),
  seed: z.number().int().min(0).default(0),
  stop: z.array(z.string()),
  generationConfig: z.enum(["recipe", "checkpoint"]),
  backend: z.string().min(1),
  backendVersion: z.string().min(1),
  dtype: z.string().min(1),
  device: z.string().min(1),
  /** revision: the resolved hub commit; weightsSha256: the hash of a local folder's weight files. */
  model: z.object({ ref: z.string(), revision: z.string().nullable(), weightsSha256: Sha256.nullable() }),
  /** Differs between models by design (null for the base); verified equal to the trained snapshot. */
  adapterSha256: Sha256.nullable(),
  trainingMethod: TrainMethod.nullable(),
  /**
   * This answer's rendered prompt (sha256 of its token ids, from the trainer's task_prompts_sha256).
   * Per task, so not one of the fields compared across models below: compared task by task
   * instead (promptMismatches). Absent in records made before it.
   */
  promptSha256: Sha256.nullable().optional(),
});
export type GenerationProtocol = z.infer<typeof GenerationProtocol>;

export const RecordedProtocol = GenerationProtocol.extend({ graderVersion: z.string().min(1) });
export type RecordedProtocol = z.infer<typeof RecordedProtocol>;

// Greedy decoding ignores temperature and top_p; the trainer reports them as 0 then, which is
// recorded canonically as "not used" so that greedy runs compare equal.
const canonicalDecoding = (d: ProtocolSummary["decoding"]): GenerationProtocol["decoding"] =>
  d.do_sample
    ? { doSample: true, temperature: d.temperature, topP: d.top_p }
    : { doSample: false, temperature: 1, topP: 1 };

export function generationProtocol(
  s: ProtocolSummary,
  fixed: { promptTemplateHash: string; trainingMethod: TrainMethod | null; samples: number },
): GenerationProtocol {
  return {
    promptTemplateHash: fixed.promptTemplateHash,
    chatTemplateSha256: s.chat_template_sha256,
    decoding: canonicalDecoding(s.decoding),
    maxNewTokens: s.decoding.max_new_tokens,
    samples: fixed.samples,
    // Greedy answers do not depend on a seed: recorded as 0 so that greedy runs compare equal.
    seed: s.decoding.do_sample ? s.decoding.seed : 0,
    stop: [...s.stop].sort(),
    generationConfig: s.generation_config,
    backend: s.backend,
    backendVersion: s.backend_version,
    dtype: s.dtype,
    device: s.device,
    model: { ref: s.model.ref, revision: s.model.revision, weightsSha256: s.model.weights_sha256 },
    adapterSha256: s.adapter_sha256,
    trainingMethod: fixed.trainingMethod,
  };
}

/**
 * The protocol of one task's answers: the job's protocol with that task's prompt hash. A summary
 * that carries prompt hashes but none for this task is refused (the answer cannot be checked).
 */
export function answerProtocol(
  p: GenerationProtocol,
  s: Pick<ProtocolSummary, "task_prompts_sha256">,
  taskId: string,
): GenerationProtocol {
  if (!s.task_prompts_sha256) return { ...p, promptSha256: null };
  const hash = s.task_prompts_sha256[taskId];
  if (!hash)
    throw new DomainError("PRECONDITION_FAILED", `the generate summary has no task_prompts_sha256 entry for ${taskId}`);
  return { ...p, promptSha256: hash };
}

/**
 * Differences between what a generation ran under and what the recipe (resolved at creation)
 * asks for, plus the adapter it had to load. Empty when the run is admissible.
 */
export function recipeMismatches(
  p: GenerationProtocol,
  recipe: EvalProtocol,
  expected: { promptTemplateHash: string; adapterSha256: string | null },
): string[] {
  const out: string[] = [];
  const want = recipe.decoding.doSample ? recipe.decoding : { doSample: false, temperature: 1, topP: 1 };
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  if (p.promptTemplateHash !== expected.promptTemplateHash)
    out.push(`promptTemplateHash ${p.promptTemplateHash} ≠ ${expected.promptTemplateHash}`);
  if (!same(p.decoding, want)) out.push(`decoding ${JSON.stringify(p.decoding)} ≠ ${JSON.stringify(want)}`);
  if (p.maxNewTokens !== recipe.maxNewTokens) out.push(`maxNewTokens ${p.maxNewTokens} ≠ ${recipe.maxNewTokens}`);
  if (p.samples !== recipe.samples) out.push(`samples ${p.samples} ≠ ${recipe.samples}`);
  const wantSeed = recipe.decoding.doSample ? recipe.seed : 0;
  if (p.seed !== wantSeed) out.push(`seed ${p.seed} ≠ ${wantSeed}`);
  if (p.backend !== recipe.backend) out.push(`backend ${p.backend} ≠ ${recipe.backend}`);
  if (recipe.device !== "auto" && p.device !== recipe.device) out.push(`device ${p.device} ≠ ${recipe.device}`);
  if (recipe.dtype !== "auto" && p.dtype !== recipe.dtype) out.push(`dtype ${p.dtype} ≠ ${recipe.dtype}`);
  const wantConfig = recipe.checkpointGenerationConfig ? "checkpoint" : "recipe";
  if (p.generationConfig !== wantConfig) out.push(`generationConfig ${p.generationConfig} ≠ ${wantConfig}`);
  if (p.adapterSha256 !== expected.adapterSha256)
    out.push(
      `adapter hash mismatch: generated with ${p.adapterSha256 ?? "no adapter"}, trained snapshot is ${expected.adapterSha256 ?? "none"}`,
    );
  if (!p.model.revision && !p.model.weightsSha256)
    out.push("the base model is identified by neither a resolved revision nor a weights hash");
  return out;
}

// Fields that must be identical for base and adapters to be compared. The adapter hash and the
// training method differ between base and adapters by design; they are checked elsewhere
// (adapter hash against the snapshot before generating, method across seeds at training).
const fields: Array<[string, (p: RecordedProtocol) => string]> = [
  ["promptTemplateHash", (p) => p.promptTemplateHash],
  ["chatTemplateSha256", (p) => String(p.chatTemplateSha256)],
  ["decoding", (p) => JSON.stringify([p.decoding.doSample, p.decoding.temperature, p.decoding.topP])],
  ["maxNewTokens", (p) => String(p.maxNewTokens)],
  ["samples", (p) => String(p.samples)],
  ["seed", (p) => String(p.seed)],
  ["stop", (p) => JSON.stringify(p.stop)],
  ["generationConfig", (p) => p.generationConfig],
  ["backend", (p) => `${p.backend} ${p.backendVersion}`],
  ["dtype", (p) => p.dtype],
  ["device", (p) => p.device],
  ["model", (p) => JSON.stringify(p.model)],
  ["graderVersion", (p) => p.graderVersion],
];

export type ProtocolMismatch = { field: string; values: Record<string, string> };
export type ProtocolCheck = { ok: boolean; protocol: RecordedProtocol | null; mismatches: ProtocolMismatch[] };

/** `runs` maps a label (e.g. "base", "seed 1 · epoch 2") to the protocol its evaluation actually used. */
export function checkProtocol(runs: Readonly<Record<string, RecordedProtocol>>): ProtocolCheck {
  const entries = Object.entries(runs);
  const mismatches: ProtocolMismatch[] = [];
  for (const [field, get] of fields) {
    const values = Object.fromEntries(entries.map(([label, p]) => [label, get(p)]));
    if (new Set(Object.values(values)).size > 1) mismatches.push({ field, values });
  }
  const first = entries[0]?.[1] ?? null;
  return {
    ok: mismatches.length === 0 && entries.length > 0,
    protocol: mismatches.length === 0 ? first : null,
    mismatches,
  };
}

export function assertSameProtocol(runs: Readonly<Record<string, RecordedProtocol>>): RecordedProtocol {
  const check = checkProtocol(runs);
  if (!check.ok || !check.protocol) {
    const what = check.mismatches
      .map(
        (m) =>
          `${m.field} (${Object.entries(m.values)
            .map(([k, v]) => `${k}=${v}`)
            .join(", ")})`,
      )
      .join("; ");
    throw new DomainError(
      "PRECONDITION_FAILED",
      `refusing to compare evaluations run under different protocols: ${what || "no evaluations"}`,
      check,
    );
  }
  return check.protocol;
}

type StoredRow = { split: string; modelKey: string; taskId: string; protocol: unknown };

function parseRecorded(r: StoredRow): RecordedProtocol {
  const parsed = RecordedProtocol.safeParse(r.protocol);
  if (!parsed.success)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `the ${r.split} evaluation of ${r.modelKey} on ${r.taskId} has an unreadable protocol record`,
    );
  return parsed.data;
}

export type PromptMismatch = { split: string; taskId: string; values: Record<string, string> };

/**
 * Tasks whose rendered prompt differs between the models (or the samples) evaluated on them: a
 * changed chat template, date string or tokenizer between the base's and an adapter's evaluation.
 * Records without a prompt hash (made before it) are not compared.
 */
export function promptMismatches(rows: readonly StoredRow[]): PromptMismatch[] {
  const byTask = new Map<string, { split: string; taskId: string; values: Record<string, string> }>();
  const distinct = new Map<string, Set<string>>();
  for (const r of rows) {
    const hash = parseRecorded(r).promptSha256;
    if (!hash) continue;
    const key = `${r.split}\u0000${r.taskId}`;
    const entry = byTask.get(key) ?? { split: r.split, taskId: r.taskId, values: {} };
    const seen = entry.values[r.modelKey];
    entry.values[seen && seen !== hash ? `${r.modelKey} (another sample)` : r.modelKey] = hash;
    byTask.set(key, entry);
    distinct.set(key, (distinct.get(key) ?? new Set()).add(hash));
  }
  return [...byTask.entries()].filter(([key]) => (distinct.get(key)?.size ?? 0) > 1).map(([, m]) => m);
}

/**
 * The protocols of stored evaluations by model key (one entry per distinct protocol, the per-task
 * prompt hash left out), refusing unreadable records and tasks whose rendered prompts differ
 * between the compared models (promptMismatches).
 */
export function protocolsByModel(rows: readonly StoredRow[]): Record<string, RecordedProtocol> {
  const prompts = promptMismatches(rows);
  if (prompts.length) {
    const [m] = prompts;
    const shown = m
      ? `${m.split} task ${m.taskId}: ${Object.entries(m.values)
          .map(([k, v]) => `${k}=${v.slice(0, 12)}…`)
          .join(", ")}`
      : "";
    throw new DomainError(
      "PRECONDITION_FAILED",
      `refusing to compare evaluations whose rendered prompts differ between models on ${prompts.length} task(s), e.g. ${shown}: the chat template, its date string or the tokenizer changed between them`,
      { promptMismatches: prompts },
    );
  }
  const out: Record<string, RecordedProtocol> = {};
  for (const r of rows) {
    const { promptSha256: _perTask, ...protocol } = parseRecorded(r);
    const label = `${r.split}:${r.modelKey}`;
    const seen = out[label];
    if (!seen) out[label] = protocol;
    else if (JSON.stringify(seen) !== JSON.stringify(protocol)) out[`${label} (task ${r.taskId})`] = protocol;
  }
  return out;
}
