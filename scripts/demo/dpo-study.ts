// `npm run demo -- --dpo-study`: "does same-state DPO add a gain over SFT?" as ONE study on the CPU
// family, through the product (collection, verified snapshot, study, shared SFT, pairs, DPO, dev
// selection, one test claim, Holm). Arms, 3 training seeds each, every one from the same SFT adapter
// per seed (the study shares the train job the arms have in common):
//   sft            the reference: the SFT model alone;
//   rft            the SFT term alone on the near-miss pairs' chosen answers, same steps, tokens and
//                  rate (a DPO win over it is a win of the preference term, not of more training);
//   dpo-near-miss  chosen = the verified answer, rejected = the buggy file or a killed mutant;
//   dpo-on-policy  (pass, fail) samples of the SFT policy on one prompt (T = 1.0, 4 per task);
//   dpo-swapped    the near-miss pairs with chosen and rejected exchanged: the negative control;
//   the dev sweep  near-miss at the DPO rate ×3 and ÷3, and at β 0.5 and 0.02 (β 0.1 elsewhere)
//                  (secondary arms: read on dev, no contrast); source: near-miss against on-policy.
// The outcome is whatever it is; the last line is one JSON object naming the study report's file,
// with each DPO arm's per-epoch Δ log-prob of the chosen and rejected answers on train and on
// held-out dev pairs.
import {
  cpuDemoRecipe,
  parseJobResult,
  parseStageOutput,
  type DpoRecipeInput,
  type StudyDefinitionInput,
  type StudyReport,
} from "@agentlab/core";
import { getJob, listStages, listStudyArms } from "@agentlab/db";
import { createDataset } from "../../apps/web/server/teacher/datasets";
import { createStudy } from "../../apps/web/server/studies/service";
import { DISCLAIMER, say } from "./options";
import type { DemoWorld } from "./setup";
import { collectTrain, endStudyDemo, studyReportOf } from "./study-run";

const SEEDS = (process.env.AGENTLAB_DEMO_STUDY_SEEDS ?? "1,2,3").split(",").map(Number);

/**
 * AGENTLAB_DEMO_GPU_BASE=<a local model folder>: the same study on a GPU (scripts/gpu-dpo-study.sh):
 * bf16 LoRA at a typical 1.5–7B SFT rate, generation on CUDA in bf16, answers up to 512 tokens.
 * Unset: the tiny CPU base and the CPU demo's preset.
 */
const GPU_BASE = process.env.AGENTLAB_DEMO_GPU_BASE;

function modelParts(w: DemoWorld) {
  const preset = cpuDemoRecipe();
  // Shared answers: the arms' evaluations of one SFT adapter are generated and graded once.
  const evaluation = { ...preset.evaluation, answerCache: "shared" as const };
  if (!GPU_BASE) return { base: w.tiny.path, training: preset.training, evaluation };
  return {
    base: GPU_BASE,
    training: {
      ...preset.training,
      method: "lora-bf16" as const,
      learningRate: 2e-4,
      epochs: 3,
      batchSize: 4,
      maxLength: 2048,
      lora: { r: 16, alpha: 32, dropout: 0, targets: ["q_proj", "k_proj", "v_proj", "o_proj"] },
    },
    evaluation: { ...evaluation, maxNewTokens: 512, device: "cuda" as const, dtype: "bfloat16" as const },
  };
}

/** The DPO rate: the SFT rate ÷ 30 (the recipe's default), written out so the sweep arms can scale it. */
const dpoRate = (w: DemoWorld) => modelParts(w).training.learningRate / 30;

/** What every preference arm shares: the start policy's samples on train, the schedule, the SFT term. */
const dpoBase = (lr: number): DpoRecipeInput => ({
  samples: 4,
  temperature: 1,
  epochs: 2,
  batchSize: 4,
  sftWeight: 1,
  learningRate: lr,
  pairSources: ["near_miss"],
});

function definition(w: DemoWorld, datasetId: string): StudyDefinitionInput {
  const m = modelParts(w);
  const lr = dpoRate(w);
  const arm = (name: string, method: "sft+dpo" | "sft+rft", dpo: DpoRecipeInput = {}) => ({
    name,
    factor: "method",
    recipe: { method, dpo: { ...dpoBase(lr), ...dpo } },
  });
  return {
    name: `DPO study ${new Date().toISOString().slice(0, 16)}: does same-state DPO add a gain over SFT?`,
    splitId: w.split.id,
    baseModel: { source: "path", ref: m.base },
    evaluation: m.evaluation,
    seeds: SEEDS,
    reference: {
      name: "sft",
      recipe: {
        teacher: { providerId: w.oracle.id, n: 1 },
        datasetId,
        training: m.training,
        bootstrap: { iterations: 2000, seed: 0 },
        disclaimer: GPU_BASE
          ? `Synthetic one-bug task family; base model ${GPU_BASE} (bf16 LoRA on a GPU); the teacher is the reference oracle.`
          : DISCLAIMER + w.baseNote,
      },
    },
    arms: [
      arm("rft", "sft+rft"),
      arm("dpo-near-miss", "sft+dpo"),
      arm("dpo-on-policy", "sft+dpo", { pairSources: ["on_policy"] }),
      arm("dpo-swapped", "sft+dpo", { labels: "swapped" }),
      arm("dpo-nm-lr-x3", "sft+dpo", { learningRate: lr * 3 }),
      arm("dpo-nm-lr-div3", "sft+dpo", { learningRate: lr / 3 }),
      arm("dpo-nm-beta-0.5", "sft+dpo", { beta: 0.5 }),
      arm("dpo-nm-beta-0.02", "sft+dpo", { beta: 0.02 }),
    ],
    contrasts: [
      { arms: ["dpo-near-miss", "sft"] },
      { arms: ["dpo-on-policy", "sft"] },
      { arms: ["dpo-near-miss", "rft"] },
      { arms: ["dpo-on-policy", "rft"] },
      { arms: ["dpo-swapped", "sft"] },
    ],
  };
}

type Dynamics = { seed: number; epoch: number; train: [number, number] | null; heldOut: [number, number] | null };

/** Each preference arm's per-epoch Δ log-prob (chosen, rejected) on its train pairs and on held-out dev pairs. */
async function dynamicsOf(w: DemoWorld, studyId: string) {
  const db = w.app.services.db;
  const out: Record<string, { pairs: number[]; epochs: Dynamics[] }> = {};
  for (const a of await listStudyArms(db, studyId)) {
    const stages = (await listStages(db, a.experimentId)).filter((s) => s.kind === "dpo");
    if (!stages.length) continue;
    const row: { pairs: number[]; epochs: Dynamics[] } = { pairs: [], epochs: [] };
    for (const s of stages) {
      const o = parseStageOutput("dpo", s.key, s.output);
      const seed = Number(/:s(\d+)/.exec(s.key)?.[1]);
      const job = o?.jobId ? await getJob(db, o.jobId) : undefined;
      const record = job ? parseJobResult("dpo", job.result) : null;
      row.pairs.push(o?.pairCount ?? 0);
      for (const snap of record?.snapshots ?? []) {
        const held = o?.heldOut?.epochs?.find((e) => e.epoch === snap.epoch);
        row.epochs.push({
          seed,
          epoch: snap.epoch,
          train:
            snap.chosen_logp_delta === undefined || snap.rejected_logp_delta === undefined
              ? null
              : [snap.chosen_logp_delta, snap.rejected_logp_delta],
          heldOut: held ? [held.chosenLogpDelta, held.rejectedLogpDelta] : null,
        });
      }
    }
    out[a.name] = row;
  }
  return out;
}

export async function runDpoStudyDemo(w: DemoWorld, runDir: string): Promise<void> {
  const { services } = w.app;
  let run: { studyId: string; report: StudyReport; dynamics: Awaited<ReturnType<typeof dynamicsOf>> };
  try {
    const collectionId = await collectTrain(w, w.oracle.id, "DPO study: reference teacher, train");
    const data = await createDataset(services, {
      splitId: w.split.id,
      collectionIds: [collectionId],
      createdBy: w.adminId,
      name: "DPO study: verified answers",
    });
    const created = await createStudy(services.db, definition(w, data.id), w.adminId);
    const studyId = created.study.id;
    say(`study ${studyId}: ${created.experimentIds.length} arms × ${SEEDS.length} seeds, one SFT train job per seed`);
    const report = await studyReportOf(w, studyId);
    run = { studyId, report, dynamics: await dynamicsOf(w, studyId) };
  } finally {
    await w.agent.stop();
  }
  const { studyId, report, dynamics } = run;
  for (const [name, d] of Object.entries(dynamics))
    for (const e of d.epochs)
      say(
        `${name} s${e.seed} epoch ${e.epoch}: Δ log p chosen/rejected train ${e.train?.map((x) => x.toFixed(2)).join(" / ") ?? "—"}, held-out ${e.heldOut?.map((x) => x.toFixed(2)).join(" / ") ?? "—"}`,
      );
  await endStudyDemo(w, runDir, "dpo-study", studyId, report, {
    seeds: SEEDS,
    base: GPU_BASE ?? "tiny CPU base",
    dpoLearningRate: dpoRate(w),
    dynamics,
  });
}
