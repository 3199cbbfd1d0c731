import { createReadStream, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { getPool, importPool, recordBuildTimeAudits } from "@agentlab/db";
import type { Services } from "../services";

export const BUILTIN_POOL_FILE = fileURLToPath(new URL("../../../../data/builtin-pool.jsonl.gz", import.meta.url));
export const BUILTIN_POOL_NAME = "builtin";

/** Loads the built-in pool (synthesized from HumanEval and MBPP) on first start, so a new lab has real tasks at once. */
export async function ensureBuiltinPool(services: Pick<Services, "db" | "log">, file = BUILTIN_POOL_FILE): Promise<void> {
  if (!existsSync(file)) return;
  const existing = await getPool(services.db, { name: BUILTIN_POOL_NAME });
  // A pool loaded before build-time audits were recorded gets them now (idempotent).
  if (existing) return void (await recordBuildTimeAudits(services.db, existing.id));
  const res = await importPool(services.db, {
    name: BUILTIN_POOL_NAME,
    description: "Repair tasks synthesized from HumanEval (MIT) and MBPP (CC BY 4.0); see data/LICENSES.md",
    builtin: true,
    lines: createReadStream(file),
  });
  if (!res.ok) throw new Error(`the built-in pool failed validation: ${res.problems.slice(0, 3).map((p) => p.message).join("; ")}`);
  const audited = await recordBuildTimeAudits(services.db, res.poolId);
  services.log.info({ tasks: res.imported, audited, poolId: res.poolId }, "built-in pool loaded");
}
