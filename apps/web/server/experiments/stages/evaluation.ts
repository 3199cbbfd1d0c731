import { claimTestRun, getTestRun, listStages, recordTestClaim, updateStage } from "@agentlab/db";
import {
  DomainError,
  dpoKey,
  grpoKey,
  isDomainError,
  modelKey,
  modelLabel,
  parseStageOutput,
  recipeHash,
} from "@agentlab/core";
import { advanceEvaluation, emptyEval, type EvalModel } from "../evaluate";
import { splitTasks } from "../tasks";
import { ownOutput, type StageCtx, type StageResult } from "./context";
import { testModels } from "./select";
import { trainOutput } from "./train";
import { evalModelOf } from "./models";
import { dpoOutput } from "./dpo";
import { grpoOutput } from "./grpo";
import { studyTestHold } from "../../studies/test-hold";

// `dev_eval:*` and `test_eval`: generation + grading of one split (../evaluate.ts), for the base or
// one seed's snapshots on dev (SFT, one round's DPO epochs or GRPO snapshots), for the base and each
// seed's best dev epoch on test (with sft+dpo / sft+grpo also each seed's best DPO epoch / GRPO snapshot).

export async function devStage(c: StageCtx): Promise<StageResult<"dev_eval">> {
  const t = c.stage.target;
  let models: EvalModel[];
  if (!t || t.model === "base") models = [{ key: "base", adapter: null, trainingMethod: null }];
  else if (t.model === "dpo") {
    const out = dpoOutput(c, dpoKey(t.seed, t.round));
    models = (out?.snapshots ?? []).map((s) => ({
      key: modelKey({ model: "dpo", seed: t.seed, seedIndex: t.seedIndex, round: t.round, epoch: s.epoch }),
      adapter: { path: s.path, sha256: s.sha256, artifact: s.artifact ?? null },
      trainingMethod: out?.method ?? null,
    }));
  } else if (t.model === "grpo") {
    const out = grpoOutput(c, grpoKey(t.seed));
    models = (out?.snapshots ?? []).map((s) => ({
      key: modelKey({ model: "grpo", seed: t.seed, seedIndex: t.seedIndex, epoch: s.epoch }),
      adapter: { path: s.path, sha256: s.sha256, artifact: s.artifact ?? null },
      trainingMethod: out?.method ?? null,
    }));
  } else {
    const train = trainOutput(c, t.seed);
    models = (train.snapshots ?? []).map((s) => ({
      key: modelKey({ model: "adapter", seed: t.seed, seedIndex: t.seedIndex, epoch: s.epoch }),
      adapter: { path: s.path, sha256: s.sha256, artifact: s.artifact ?? null },
      trainingMethod: train.method ?? null,
    }));
  }
  const tasks = await splitTasks(c.services.db, c.config.splitId, "dev");
  const step = await advanceEvaluation(
    c.services,
    { experimentId: c.experimentId, config: c.config, split: "dev", tasks, models },
    { ...emptyEval(), ...ownOutput(c, "dev_eval") },
  );
  return { state: step.state, output: step.output, jobIds: step.jobIds };
}

export async function testStage(c: StageCtx): Promise<StageResult<"test_eval">> {
  const { db } = c.services;
  let output = ownOutput(c, "test_eval") ?? { generate: {}, done: {} };
  if (!output.models) {
    // A study's arm never claims the test set itself: it waits for the study's one claim covering
    // every arm, then evaluates the models that claim fixed (studies/test-hold.ts).
    const hold = await studyTestHold(c);
    if (hold === "waiting") return { state: "running", output };
    const models = hold ? hold.models : await testModels(c);
    // Claiming the run, its entry in the split's test-read ledger and recording it in the stage
    // happen together, so a crash in between cannot leave a claimed run that the resumed stage
    // would then be refused, and a refused ledger entry (a final split) claims nothing.
    const claimed = await db
      .transaction(async (tx) => {
        await claimTestRun(tx, c.experimentId, models);
        if (!hold)
          await recordTestClaim(tx, {
            experimentId: c.experimentId,
            recipeHash: recipeHash(c.config),
            models: models.map(modelLabel),
          });
        await updateStage(tx, c.experimentId, c.stage.key, { output: { ...output, models } });
      })
      .then(
        () => true,
        (err: unknown) => {
          if (isDomainError(err) && err.code === "CONFLICT") return false;
          throw err;
        },
      );
    if (claimed) output = { ...output, models };
    else output = await racedClaim(c);
  } else if (!(await getTestRun(db, c.experimentId))) {
    throw new DomainError("INTERNAL", "test stage recorded models but no test run is claimed");
  }
  const models: EvalModel[] = (output.models ?? []).map((m) => evalModelOf(c, m));
  const tasks = await splitTasks(db, c.config.splitId, "test");
  const step = await advanceEvaluation(
    c.services,
    { experimentId: c.experimentId, config: c.config, split: "test", tasks, models },
    { ...emptyEval(), ...output },
  );
  return { state: step.state, output: { ...step.output, models: output.models }, jobIds: step.jobIds };
}

/**
 * The claim was refused: the run is already claimed. Claim and stage record commit together, so
 * either another runner advancing this experiment at the same moment (a leadership hand-over, a
 * test driving its own runner beside the server's) claimed it and recorded its models in this
 * stage — then this runner continues that same run — or something claimed it outside the stage,
 * which stays a refusal. A second test run is never started either way.
 */
async function racedClaim(c: StageCtx) {
  const row = (await listStages(c.services.db, c.experimentId)).find((r) => r.key === c.stage.key);
  const recorded = row ? parseStageOutput("test_eval", c.stage.key, row.output) : undefined;
  if (!recorded?.models)
    throw new DomainError("CONFLICT", "the test evaluation of this experiment has already run; it runs once");
  return recorded;
}
