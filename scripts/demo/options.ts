// The demo's settings: its disclaimer, the sampling and DPO switches read from the environment,
// the data dir kept across runs, and the timestamped log line.
import { join, resolve } from "node:path";
import type { ExperimentConfigInput } from "@agentlab/core";
import { cacheRoot } from "../tiny-base-cache";

export const ROOT = resolve(import.meta.dirname, "../..");
export const DISCLAIMER =
  "Synthetic demo: the tasks are a generated one-bug family (`<=` written as `<`) and the base is a tiny model built and warmed up on this machine from train tasks only; " +
  "the teacher is the reference oracle. These numbers show that the pipeline detects a real gain (and no gain in the control); they say nothing about real models.";

// AGENTLAB_DEMO_SAMPLES=n: n sampled answers per task (temperature AGENTLAB_DEMO_TEMPERATURE,
// default 0.7) instead of one greedy answer, so the report compares per-task pass rates.
const DEMO_SAMPLES = Number(process.env.AGENTLAB_DEMO_SAMPLES ?? "1");
export const SAMPLING =
  DEMO_SAMPLES > 1
    ? {
        samples: DEMO_SAMPLES,
        decoding: { doSample: true, temperature: Number(process.env.AGENTLAB_DEMO_TEMPERATURE ?? "0.7"), topP: 1 },
      }
    : {};

// AGENTLAB_DEMO_DPO=1: the main experiment is `sft+dpo` (DPO from the SFT start on pairs
// of the reference fix against the start policy's own graded failures on train); the control is
// skipped. AGENTLAB_DEMO_DPO_{BETA,LR,EPOCHS,ROUNDS,SAMPLES,SFT_WEIGHT} override its settings.
export const DEMO_DPO = process.env.AGENTLAB_DEMO_DPO === "1";
const dpoNum = (key: string, fallback: number) => Number(process.env[`AGENTLAB_DEMO_DPO_${key}`] ?? String(fallback));
export const DPO_RECIPE: Pick<ExperimentConfigInput, "method" | "dpo"> = DEMO_DPO
  ? {
      method: "sft+dpo",
      dpo: {
        beta: dpoNum("BETA", 0.1),
        // Unset: the SFT rate ÷ DPO_LR_DIVISOR, the recipe's own default (a larger DPO rate
        // displaces the chosen answers' likelihood on this model).
        ...(process.env.AGENTLAB_DEMO_DPO_LR ? { learningRate: dpoNum("LR", 0) } : {}),
        epochs: dpoNum("EPOCHS", 2),
        rounds: dpoNum("ROUNDS", 1),
        samples: dpoNum("SAMPLES", 2),
        sftWeight: dpoNum("SFT_WEIGHT", 1),
        temperature: 0.7,
        batchSize: 4,
      },
    }
  : {};

// `npm run demo -- --grpo` (or AGENTLAB_DEMO_GRPO=1): the main experiment is `sft+grpo` (online RL
// from the dev-selected start among base and SFT, the judge's verdicts as reward) and the control
// is the same recipe with each group's rewards shuffled among its completions
// (grpo.rewardControl): the same reward statistics, no link to the answer. No A/A.
// AGENTLAB_DEMO_GRPO_{STEPS,LR,GENERATIONS} override its settings.
export const DEMO_GRPO = process.argv.includes("--grpo") || process.env.AGENTLAB_DEMO_GRPO === "1";
if (DEMO_GRPO && DEMO_DPO) throw new Error("the demo runs DPO or GRPO, not both");

// `npm run demo -- --study` (or AGENTLAB_DEMO_STUDY=1): study.ts instead of the experiments.
export const DEMO_STUDY = process.argv.includes("--study") || process.env.AGENTLAB_DEMO_STUDY === "1";
if (DEMO_STUDY && (DEMO_GRPO || DEMO_DPO)) throw new Error("the study demo runs SFT arms only");
// `npm run demo -- --dpo-study` (or AGENTLAB_DEMO_DPO_STUDY=1): dpo-study.ts, the DPO question as one study.
export const DEMO_DPO_STUDY = process.argv.includes("--dpo-study") || process.env.AGENTLAB_DEMO_DPO_STUDY === "1";
if (DEMO_DPO_STUDY && (DEMO_STUDY || DEMO_GRPO || DEMO_DPO)) throw new Error("the DPO study demo runs alone");
const grpoNum = (key: string, fallback: number) => Number(process.env[`AGENTLAB_DEMO_GRPO_${key}`] ?? String(fallback));
export const grpoRecipe = (control: boolean): Pick<ExperimentConfigInput, "method" | "grpo"> => ({
  method: "sft+grpo",
  grpo: {
    steps: grpoNum("STEPS", 30),
    snapshotEverySteps: 10,
    numGenerations: grpoNum("GENERATIONS", 4),
    promptsPerStep: 2,
    learningRate: grpoNum("LR", 1e-4),
    rewardControl: control ? "shuffle_within_group" : "none",
  },
});

// One data dir (database, artifacts) for every demo run of this machine, in the cache outside the
// clone: the split's test-read ledger keeps counting across runs, as it would in a real lab that
// reran the same evaluation. Each run's report files go to runs/<time>/. AGENTLAB_DEMO_DIR moves it.
export const DEMO_DIR = process.env.AGENTLAB_DEMO_DIR || join(cacheRoot(), "demo");

export const t0 = Date.now();
export const say = (msg: string) => console.log(`[demo +${((Date.now() - t0) / 1000).toFixed(0)}s] ${msg}`);
