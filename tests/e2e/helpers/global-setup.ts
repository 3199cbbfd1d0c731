import type { TestProject } from "vitest/node";
import { ensureBuiltinPool } from "../../../apps/web/server/bootstrap/builtin-pool";
import { createLogger } from "../../../apps/web/server/logger";
import { createSeededTemplate } from "../../integration/helpers/db";
import { ensureNextBuild } from "./app";

declare module "vitest" {
  // Declaration merging (how vitest types `inject`) needs an interface.
  // eslint-disable-next-line @typescript-eslint/consistent-type-definitions
  export interface ProvidedContext {
    /** The database every product of this run is cloned from: migrated, built-in pools loaded. */
    e2eTemplate: string;
  }
}

// Once per e2e run, before the files: the dashboard build (each file used to check it) and a
// database template with what every product loads on its first start (the built-in pools: ≈ 10 s
// a start on the 2-core box). A product cloned from it finds its pools and skips the import, as a
// restarted lab does. The template lives for this run only, so it never outlives the code that
// loaded it.
export default async function setup(project: TestProject) {
  ensureNextBuild();
  const template = await createSeededTemplate("e2e", (database) =>
    ensureBuiltinPool({ db: database.db, log: createLogger("silent") }),
  );
  project.provide("e2eTemplate", template.name);
  return () => template.drop();
}
