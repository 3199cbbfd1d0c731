// `npm run bench -- dpo`: throughput of the DPO trainer on the tiny CPU model: pairs/s
// and supervised tokens/s (chosen + rejected) of the optimizer steps, from the run record's
// train_time_s (the reference scoring pass and the snapshot saves are outside it), and the time
// outside the steps (wall − train: loading, tokenizing, the reference pass, snapshots, the run
// record). 3 repetitions, median and min-max, one thread.
// Ends with exactly one JSON line.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeFileSync } from "node:fs";
import { DpoRecord } from "@agentlab/core";
import { findPython, runPython } from "../apps/agent/src/trainer/python";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const python = findPython(null, { root: join(root, "apps", "agent") });
const REPS = 3;
const PAIRS = 32;
const EPOCHS = 2;
const dir = mkdtempSync(join(tmpdir(), "agentlab-bench-dpo-"));
const model = join(dir, "model");
await runPython(
  "tiny-model",
  { output_dir: model, corpus: [join(root, "apps/agent/python/tests/fixtures/corpus.py.txt")], vocab_size: 1024 },
  { python },
);
const prompt = (i: number) => [
  { role: "user" as const, content: `Fix add_${i}:\ndef add_${i}(a, b):\n    return a - b` },
];
const body = (i: number, op: string) => `\`\`\`python\ndef add_${i}(a, b):\n    return a ${op} b\n\`\`\``;
const pairsFile = join(dir, "pairs.jsonl");
writeFileSync(
  pairsFile,
  Array.from({ length: PAIRS }, (_, i) =>
    JSON.stringify({ pair_id: `p${i}`, prompt: prompt(i), chosen: body(i, "+"), rejected: body(i, "-") }),
  ).join("\n"),
);

const runs: Array<{ pairsPerS: number; tokensPerS: number; referenceS: number }> = [];
for (let r = 0; r < REPS; r++) {
  const res = await runPython(
    "dpo",
    {
      base_model: model,
      pairs: pairsFile,
      output_dir: join(dir, `out-${r}`),
      epochs: EPOCHS,
      batch_size: 4,
      max_length: 256,
      torch_threads: 1,
      local_files_only: true,
      lora: { r: 16, alpha: 32, dropout: 0.05, target_modules: ["q_proj", "k_proj", "v_proj", "o_proj"] },
    },
    { python },
  );
  const rec = DpoRecord.parse(res.dpo);
  runs.push({
    pairsPerS: (PAIRS * EPOCHS) / rec.train_time_s,
    tokensPerS: rec.supervised_tokens_per_s,
    referenceS: rec.wall_time_s - rec.train_time_s,
  });
}
const stat = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return {
    median: Number((s[s.length >> 1] ?? 0).toFixed(2)),
    min: Number((s[0] ?? 0).toFixed(2)),
    max: Number((s[s.length - 1] ?? 0).toFixed(2)),
  };
};
console.log(
  JSON.stringify({
    bench: "dpo",
    reps: REPS,
    pairs: PAIRS,
    epochs: EPOCHS,
    pairs_per_s: stat(runs.map((x) => x.pairsPerS)),
    supervised_tokens_per_s: stat(runs.map((x) => x.tokensPerS)),
    outside_steps_s: stat(runs.map((x) => x.referenceS)),
  }),
);
