import type { TestProject } from "vitest/node";
import { ensureBuiltinPool } from "../../../apps/web/server/bootstrap/builtin-pool";
import { createLogger } from "../../../apps/web/server/logger";
import { createSeededTemplate } from "../../integration/helpers/db";
import { ensureNextBuild } from "./product-process";
import { filesOfThisRun, productService, productsNamedIn, serveProducts, type ProductName } from "./products";

declare module "vitest" {
  // Declaration merging (how vitest types `inject`) needs an interface.
  // eslint-disable-next-line @typescript-eslint/consistent-type-definitions
  export interface ProvidedContext {
    /** Where the files ask for their products (helpers/products.ts). */
    e2eProducts: string;
  }
}

// Once per e2e run, before the files: the dashboard build, a database template with what every
// product loads on its first start (the built-in pools: ≈ 10 s a start on the 2-core box; a
// product cloned from it finds its pools and skips the import, as a restarted lab does), and the
// products the files share (helpers/products.ts), started ahead while the first files run. The
// template and the products live for this run only, so they never outlive the code that made them.
export default async function setup(project: TestProject) {
  ensureNextBuild();
  const template = await createSeededTemplate("e2e", (database) =>
    ensureBuiltinPool({ db: database.db, log: createLogger("silent") }),
  );
  const service = productService(template.name);
  const endpoint = await serveProducts(service);
  project.provide("e2eProducts", endpoint.url);
  const wanted = new Set<ProductName>();
  for (const file of await filesOfThisRun(project)) for (const name of productsNamedIn(file)) wanted.add(name);
  service.prestart([...wanted]);
  return async () => {
    await endpoint.close();
    await service.stopAll();
    await template.drop();
  };
}
