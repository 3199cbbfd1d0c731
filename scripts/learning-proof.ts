// Pieces shared by `npm run demo` and tests/integration/learning-proof.test.ts: the
// synthetic learnable pool's split, the CPU demo preset's warmed tiny base built here into the
// machine's cache (the recipe is core's `cpu-demo.ts`; the experiment form builds the same base on
// an agent). The control's shuffled-answers snapshot is the product's (server teacher/shuffle.ts).
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { createSplit, schema, type Db } from "@agentlab/db";
import { eq } from "drizzle-orm";
import {
  CPU_DEMO_POSITIONS,
  CPU_DEMO_SHAPE,
  CPU_DEMO_SPLIT,
  CPU_DEMO_WARMUP_DESCRIPTION,
  cpuDemoWarmupSamples,
  promptTemplateText,
  sha256Hex,
  sftLine,
  sftSample,
  TaskSpec,
  type SftSample,
  type TinyModelSummary,
  type TinyShape,
} from "@agentlab/core";
import { LEARNABLE_POOL_FILE } from "../apps/web/server/bootstrap/builtin-pool";
import { runPython } from "../apps/agent/src/trainer/python";
import { cacheRoot, trainerSourceHash, withCacheLock } from "./tiny-base-cache";

const TRAINER_DIR = join(import.meta.dirname, "..", "apps", "agent", "python");

/**
 * The preset's frozen split of the learnable pool, with its tasks by part from the pool file (the
 * split assigns ids, the file holds the tasks); the demo and the learning-proof test make the same
 * one, so both read the same train tasks and share one cached base.
 */
export async function learnableSplit(db: Db, poolId: string) {
  const { split } = await createSplit(db, { poolId, ...CPU_DEMO_SPLIT });
  const rows = await db
    .select({ id: schema.splitAssignments.taskId, part: schema.splitAssignments.part })
    .from(schema.splitAssignments)
    .where(eq(schema.splitAssignments.splitId, split.id));
  const part = new Map(rows.map((r) => [r.id, r.part]));
  const all = learnableTasks();
  const of = (p: string) => all.filter((t) => part.get(t.id) === p);
  return { split, train: of("train"), dev: of("dev"), test: of("test") };
}

export function learnableTasks(): TaskSpec[] {
  return gunzipSync(readFileSync(LEARNABLE_POOL_FILE))
    .toString("utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => TaskSpec.parse(JSON.parse(l)));
}

/**
 * The tiny base: tokenizer fitted on the train tasks (and the fixed prompt template text), random
 * weights, then the echo warm-up on train tasks only. Built once per recipe into the machine's
 * cache (scripts/tiny-base-cache.ts): the folder is named by the hash of the shape, the train
 * tasks, the template and warm-up data, the pool file, the trainer code that builds it and the
 * pinned Python requirements; the trainer's own stamp in it checks the same inputs again.
 */
export async function buildWarmBase(opts: {
  python: string;
  train: readonly TaskSpec[];
  shape?: TinyShape;
  env?: NodeJS.ProcessEnv;
}): Promise<TinyModelSummary> {
  const shape = opts.shape ?? CPU_DEMO_SHAPE;
  const templateText = promptTemplateText(opts.train);
  const warmText = cpuDemoWarmupSamples(opts.train, shape).map(sftLine).join("\n") + "\n";
  const ids = opts.train.map((t) => t.id);
  const venvStamp = join(TRAINER_DIR, ".venv", ".agentlab-stamp");
  const recipe = sha256Hex(
    JSON.stringify({
      shape,
      ids,
      template: sha256Hex(templateText),
      warmup: sha256Hex(warmText),
      pool: sha256Hex(readFileSync(LEARNABLE_POOL_FILE)),
      code: trainerSourceHash(join(TRAINER_DIR, "src", "agentlab_trainer"), "tiny_model"),
      requirements: existsSync(venvStamp) ? readFileSync(venvStamp, "utf8").trim() : null,
    }),
  ).slice(0, 16);
  const dir = join(cacheRoot(), "tiny-base", recipe);
  return withCacheLock(dir, async () => {
    await mkdir(dir, { recursive: true });
    const template = join(dir, "prompt-template.txt");
    const warm = join(dir, "warmup.jsonl");
    await writeFile(template, templateText);
    await writeFile(warm, warmText);
    const s = shape;
    const res = await runPython(
      "tiny-model",
      {
        output_dir: join(dir, "tiny-model"),
        corpus: [LEARNABLE_POOL_FILE, template],
        train_task_ids: ids,
        vocab_size: s.vocab,
        hidden_size: s.hidden,
        intermediate_size: s.intermediate,
        num_layers: s.layers,
        max_position_embeddings: CPU_DEMO_POSITIONS,
        warmup: {
          dataset: warm,
          task_ids: ids,
          description: CPU_DEMO_WARMUP_DESCRIPTION,
          steps: s.warmupSteps,
          learning_rate: s.warmupLr,
          batch_size: s.warmupBatch,
        },
      },
      { python: opts.python, env: opts.env },
    );
    if (!res.tiny_model) throw new Error("tiny-model returned no summary");
    return res.tiny_model;
  });
}

/** The train tasks' SFT samples with the reference fix as the answer (what the reference teacher yields). */
export const referenceSamples = (train: readonly TaskSpec[]): SftSample[] =>
  train.map((t) => sftSample(t, t.reference));
