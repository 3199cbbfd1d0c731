import { CPU_DEMO_SPLIT, DomainError, hasRole, type Role } from "@agentlab/core";
import { createSplit, getPool, referenceOracle } from "@agentlab/db";
import { LEARNABLE_POOL_NAME } from "../bootstrap/builtin-pool";
import { enqueueTinyModel } from "./jobs";
import type { Services } from "../services";

// The CPU demo preset's one click (the experiment form and the first-run checklist): the learnable
// pool's frozen split with the preset's parameters (createSplit returns the existing one for the
// same parameters), the reference oracle as teacher, and the warmed tiny base built on an agent
// (core demo/cpu-demo.ts is the recipe). The form then holds a recipe that learns in minutes on a
// CPU; the user still reads it and starts it.

export type CpuDemoSetup = { splitId: string; providerId: string; tinyModelJobId: string };

export async function prepareCpuDemo(
  services: Services,
  viewer: { userId: string; role: Role },
): Promise<CpuDemoSetup> {
  const pool = await getPool(services.db, { name: LEARNABLE_POOL_NAME });
  if (!pool)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `the built-in pool ${LEARNABLE_POOL_NAME} is not loaded (the server loads it at start from data/learnable-pool.jsonl.gz)`,
    );
  const { split } = await createSplit(services.db, { poolId: pool.id, ...CPU_DEMO_SPLIT, createdBy: viewer.userId });
  const providerId = await referenceProvider(services, viewer);
  const { jobId } = await enqueueTinyModel(services, split.id, "cpu-demo");
  services.log.info({ splitId: split.id, providerId, jobId }, "CPU demo prepared");
  return { splitId: split.id, providerId, tinyModelJobId: jobId };
}

/** The lab's reference oracle provider; an admin's click adds one when there is none. */
async function referenceProvider(services: Services, viewer: { userId: string; role: Role }): Promise<string> {
  const oracle = await referenceOracle(services.db, {
    createdBy: viewer.userId,
    create: hasRole(viewer.role, "admin"),
  });
  if (!oracle)
    throw new DomainError(
      "PRECONDITION_FAILED",
      "the CPU demo's teacher is the reference oracle, and this lab has none: an admin adds it (Providers, or this button)",
    );
  return oracle.id;
}
