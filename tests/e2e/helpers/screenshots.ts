import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// Where e2e tests save their screenshots. By default an ignored folder (test-results/screenshots),
// so `npm test` leaves `git status` clean; `npm run screenshots` sets AGENTLAB_SCREENSHOT_DIR to
// docs/screenshots to refresh the pictures the README links, on purpose.
const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const scratch = join(ROOT, "test-results", "screenshots");

function inDir(dir: string, name: string): string {
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}

/** A screenshot the docs show (docs/screenshots when refreshing them, else test-results). */
export const docScreenshot = (name: string): string =>
  inDir(process.env.AGENTLAB_SCREENSHOT_DIR ? join(ROOT, process.env.AGENTLAB_SCREENSHOT_DIR) : scratch, name);

/** A screenshot taken to debug a failure: never into the docs. */
export const debugScreenshot = (name: string): string => inDir(scratch, name);
