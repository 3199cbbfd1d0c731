import { getSplit, insertExperiment, type Db, type ExperimentRow } from "@agentlab/db";
import { DomainError, ExperimentConfig, stagePlan, type ExperimentConfigInput } from "@agentlab/core";

/** Validates the recipe against its frozen split and writes the experiment with its pending stages; the runner picks it up. */
export async function createExperiment(db: Db, input: ExperimentConfigInput, createdBy: string | null): Promise<ExperimentRow> {
  const config = ExperimentConfig.parse(input);
  const split = await getSplit(db, config.splitId);
  if (!split) throw new DomainError("NOT_FOUND", "no such split");
  const stages = stagePlan(config).map((s) => ({ key: s.key, kind: s.kind }));
  return insertExperiment(db, { name: config.name, splitId: config.splitId, config: config as unknown as Record<string, unknown>, createdBy, stages });
}
