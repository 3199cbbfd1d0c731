// `npm run bench -- gpu`: the prepared GPU check (scripts/gpu-smoke.sh); ends with its one JSON line.
// Exits 2 without CUDA, as the script does.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const run = spawnSync("bash", [join(root, "scripts", "gpu-smoke.sh"), ...process.argv.slice(3)], {
  cwd: root,
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"],
  maxBuffer: 64 * 1024 * 1024,
});
const last = run.stdout.trim().split("\n").pop() ?? "";
if (last) console.log(JSON.stringify(JSON.parse(last)));
process.exit(run.status ?? 1);
