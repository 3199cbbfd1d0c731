// `npm run bench -- train`: supervised tokens/s of our trainer vs TRL's SFTTrainer on the same
// models, data and settings (CPU), the same timed scope, alternating repetitions with median and
// spread (bench/train_bench.py). Ends with exactly one JSON line.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const setup = spawnSync("bash", [join(root, "scripts", "setup-python.sh")], {
  stdio: ["ignore", "inherit", "inherit"],
});
if (setup.status !== 0) throw new Error(`setup-python.sh failed (exit ${setup.status ?? setup.signal})`);

const python = join(root, "apps", "agent", "python", ".venv", "bin", "python");
const run = spawnSync(python, [join(root, "bench", "train_bench.py")], {
  cwd: root,
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"],
  maxBuffer: 64 * 1024 * 1024,
});
if (run.status !== 0) throw new Error(`bench/train_bench.py failed (exit ${run.status ?? run.signal})`);
const last = run.stdout.trim().split("\n").pop() ?? "";
// Per model (tiny, m20): median and min-max of ours / TRL supervised tokens/s and of their ratio.
const result = JSON.parse(last) as { bench: string; reps: number; tiny: unknown; m20: unknown };
if (result.bench !== "train") throw new Error(`unexpected bench output: ${last.slice(0, 200)}`);
console.log(JSON.stringify(result));
