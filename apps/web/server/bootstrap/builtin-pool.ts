import { createReadStream, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { getPool, importPool, recordBuildTimeAudits } from "@agentlab/db";
import type { Services } from "../services";

export const BUILTIN_POOL_FILE = fileURLToPath(new URL("../../../../data/builtin-pool.jsonl.gz", import.meta.url));
export const BUILTIN_POOL_NAME = "builtin";
/** The synthetic "learnable" family: the demo's main experiment; see data/learnable-pool.LICENSE.md. */
export const LEARNABLE_POOL_FILE = fileURLToPath(new URL("../../../../data/learnable-pool.jsonl.gz", import.meta.url));
// "-v2": the family changed (36→30 declared shapes); a database holding the first family keeps it under its old name.
export const LEARNABLE_POOL_NAME = "builtin-learnable-v2";

/** Loads the built-in pools on first start, so a new lab has real tasks at once. */
export async function ensureBuiltinPool(
  services: Pick<Services, "db" | "log">,
  file = BUILTIN_POOL_FILE,
): Promise<void> {
  await ensurePool(
    services,
    file,
    BUILTIN_POOL_NAME,
    "Repair tasks synthesized from HumanEval (MIT) and MBPP (CC BY 4.0); see data/LICENSES.md",
  );
  await ensurePool(
    services,
    LEARNABLE_POOL_FILE,
    LEARNABLE_POOL_NAME,
    "Synthetic, generated here (CC0): short one-function repairs whose one bug is `<=` written as `<`, 30 shapes declared as clusters (a shape's tasks share their answer), each importing LIMIT from a dependency file; a family a tiny model can learn (see data/learnable-pool.LICENSE.md)",
  );
}

async function ensurePool(
  services: Pick<Services, "db" | "log">,
  file: string,
  name: string,
  description: string,
): Promise<void> {
  if (!existsSync(file)) return;
  const existing = await getPool(services.db, { name });
  // A pool loaded before build-time audits were recorded gets them now (idempotent).
  if (existing) return void (await recordBuildTimeAudits(services.db, existing.id));
  const res = await importPool(services.db, { name, description, builtin: true, lines: createReadStream(file) });
  if (!res.ok)
    throw new Error(
      `the built-in pool ${name} failed validation: ${res.problems
        .slice(0, 3)
        .map((p) => p.message)
        .join("; ")}`,
    );
  const audited = await recordBuildTimeAudits(services.db, res.poolId);
  services.log.info({ tasks: res.imported, audited, poolId: res.poolId, name }, "built-in pool loaded");
}
