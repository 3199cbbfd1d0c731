// The trainer's virtual environment, shared by `npm run test:py` and `npm run lint:py`:
// scripts/setup-python.sh creates it (a no-op when its stamp matches) before anything runs in it.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const trainerDir = join(root, "apps", "agent", "python");
export const python = join(trainerDir, ".venv", "bin", "python");

/** Runs setup-python.sh; exits the process with its code when it fails. */
export function ensureVenv(who) {
  const setup = spawnSync("bash", [join(root, "scripts", "setup-python.sh")], { stdio: "inherit" });
  if (setup.status !== 0) {
    console.error(`${who}: setup-python.sh failed (exit ${setup.status ?? setup.signal})`);
    process.exit(setup.status ?? 1);
  }
}
