import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  comparePaired,
  mainPaths,
  parseAnswer,
  renderRepairPrompt,
  sftLine,
  sha256Hex,
  TrainerEvent,
  type PairedComparison,
  type TaskSpec,
} from "@agentlab/core";
import { Grader } from "../../apps/agent/src/grading/grader";
import { findPython, runPython } from "../../apps/agent/src/trainer/python";
import {
  buildWarmBase,
  learnableTasks,
  referenceSamples,
  LEARNING_SHAPE,
  LEARNING_TRAINING,
} from "../../scripts/learning-proof";
import { sandboxCfg } from "./helpers/judge";

// The chain data → assistant mask → training → adapter at generation → answer parsing →
// grading (the real judge) → the report's clustered statistics can detect a real gain, and
// deliberately broken variants of it do not "win". The winning run is the positive control of
// every broken one: same base, data, prompts, grader and statistics, one step broken.
// Synthetic tasks (the learnable pool) and a tiny model built here; nothing about real models.

const ROOT = process.cwd();
const python = findPython(null, { root: join(ROOT, "apps/agent") });
const BROKEN = join(ROOT, "tests/integration/helpers/broken_trainer.py");
const tasks = learnableTasks();
// A split by hashed source group (one task per group): 60% train, 20% test; the dev part is unused here.
const rank = (t: TaskSpec) => parseInt(sha256Hex(`proof:${t.source_group}`).slice(0, 8), 16) / 0xffffffff;
const train = tasks.filter((t) => rank(t) < 0.6);
const test = tasks.filter((t) => rank(t) >= 0.8).slice(0, 28);

let dir = "";
let grader: Grader;
let base = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentlab-proof-"));
  grader = new Grader(sandboxCfg(), { workers: 2 });
  // Built once per recipe into the machine's cache outside the clone (AGENTLAB_CACHE_DIR).
  base = (await buildWarmBase({ python, train, shape: LEARNING_SHAPE })).path;
}, 1_200_000);
afterAll(() => grader?.close());

type Events = TrainerEvent[];
function runBroken(args: string[]): Promise<{ code: number | null; stdout: string; events: Events }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [BROKEN, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", () => {});
    child.on("error", reject);
    child.on("close", (code) => {
      const events = out.split("\n").flatMap((l) => {
        const r = TrainerEvent.safeParse(
          (() => {
            try {
              return JSON.parse(l) as unknown;
            } catch {
              return null;
            }
          })(),
        );
        return r.success ? [r.data] : [];
      });
      resolve({ code, stdout: out, events });
    });
  });
}

const trainSpec = async (name: string) => {
  const dataset = join(dir, "sft.jsonl");
  await writeFile(dataset, referenceSamples(train).map(sftLine).join("\n") + "\n");
  return {
    base_model: base,
    dataset,
    output_dir: join(dir, name),
    lora: LEARNING_TRAINING.lora,
    epochs: LEARNING_TRAINING.epochs,
    learning_rate: LEARNING_TRAINING.learningRate,
    batch_size: LEARNING_TRAINING.batchSize,
    max_length: 1024,
    quantization: "none" as const,
    device: "cpu" as const,
    method: "lora-fp32" as const,
    seed: 1,
  };
};
const generateSpec = (adapter?: { path: string; sha256: string }) => ({
  base_model: base,
  prompts: test.map((t) => ({ task_id: t.id, messages: renderRepairPrompt(t) })),
  max_new_tokens: 80,
  backend: "transformers" as const,
  device: "cpu" as const,
  batch_size: 16,
  ...(adapter ? { adapter: adapter.path, expected_adapter_sha256: adapter.sha256 } : {}),
});
const texts = (events: Events) =>
  new Map(events.flatMap((e) => (e.event === "generation" ? [[e.task_id, e.text] as const] : [])));

async function generate(adapter?: { path: string; sha256: string }): Promise<Map<string, string>> {
  const events: Events = [];
  await runPython("generate", generateSpec(adapter), { python, onEvent: (e) => events.push(e) });
  return texts(events);
}

/** 1 when the answer parses and the real judge passes it. All at once: the grader's two sandboxes share the queue. */
async function grade(outputs: Map<string, string>): Promise<Map<string, number>> {
  const scores = await Promise.all(
    test.map(async (t) => {
      const parsed = parseAnswer(outputs.get(t.id) ?? "", mainPaths(t));
      if (!parsed.ok) return [t.id, 0] as const;
      const r = await grader.grade(t, parsed.files, { expectedIds: null });
      return [t.id, r.verdict === "pass" ? 1 : 0] as const;
    }),
  );
  return new Map(scores);
}

const compare = (b: Map<string, number>, a: Map<string, number>): PairedComparison =>
  comparePaired(
    test.map((t) => ({ group: t.source_group, base: b.get(t.id) ?? 0, treated: a.get(t.id) ?? 0 })),
    { iterations: 2000, seed: 0 },
  );
// A "win" is what the report would claim: significant by its own rule, with a positive Δ.
const wins = (c: PairedComparison) => c.significant && c.delta > 0;
const show = (name: string, c: PairedComparison) =>
  console.log(`learning-proof ${name}`, JSON.stringify({ delta: c.delta, ci: c.ci, p: c.p, test: c.test, n: c.n }));

describe("the learning proof on the synthetic learnable family (tiny settings)", () => {
  let baseOutcomes = new Map<string, number>();
  let trained = { path: "", sha256: "" };

  it("the warmed-up base answers in the parseable format, copies, and fails (it never saw a repair)", {
    timeout: 600_000,
  }, async () => {
    const out = await generate();
    const parsed = test.filter((t) => parseAnswer(out.get(t.id) ?? "", mainPaths(t)).ok).length;
    baseOutcomes = await grade(out);
    expect(parsed).toBeGreaterThanOrEqual(Math.ceil(test.length / 2));
    expect([...baseOutcomes.values()].reduce((s, x) => s + x, 0)).toBeLessThanOrEqual(2);
  });

  it("SFT on the train tasks' fixes wins on unseen test groups (positive control)", { timeout: 900_000 }, async () => {
    const res = await runPython("train", await trainSpec("good"), { python });
    const last = res.record?.snapshots?.at(-1);
    if (!last) throw new Error("no snapshot");
    trained = { path: last.path, sha256: last.sha256 };
    const c = compare(baseOutcomes, await grade(await generate(trained)));
    show("good", c);
    expect(wins(c)).toBe(true);
  });

  it("broken: generation ignoring the adapter does not win", { timeout: 600_000 }, async () => {
    const spec = join(dir, "gen-ignore.json");
    await writeFile(spec, JSON.stringify(generateSpec(trained)));
    const r = await runBroken(["ignore-adapter", "generate", "--spec", spec]);
    expect(r.code).toBe(0);
    const c = compare(baseOutcomes, await grade(texts(r.events)));
    show("ignore-adapter", c);
    expect(wins(c)).toBe(false);
  });

  it("broken: evaluating an untrained epoch (LoRA as initialised) does not win", { timeout: 600_000 }, async () => {
    const spec = join(dir, "untrained.json");
    await writeFile(spec, JSON.stringify(await trainSpec("untrained")));
    const r = await runBroken(["untrained-adapter", spec]);
    expect(r.code).toBe(0);
    const snap = JSON.parse(r.stdout.trim().split("\n").at(-1) ?? "{}") as { path: string; sha256: string };
    const c = compare(baseOutcomes, await grade(await generate(snap)));
    show("untrained-epoch", c);
    expect(wins(c)).toBe(false);
  });

  it("broken: labels on the prompt instead of the answer does not win", { timeout: 900_000 }, async () => {
    const spec = join(dir, "labels.json");
    await writeFile(spec, JSON.stringify(await trainSpec("labels-on-prompt")));
    const r = await runBroken(["labels-on-prompt", "train", "--spec", spec]);
    expect(r.code).toBe(0);
    const result = r.events.find((e) => e.event === "result");
    const last = result?.event === "result" ? result.record?.snapshots?.at(-1) : undefined;
    if (!last) throw new Error("the broken trainer produced no snapshot");
    const c = compare(baseOutcomes, await grade(await generate({ path: last.path, sha256: last.sha256 })));
    show("labels-on-prompt", c);
    expect(wins(c)).toBe(false);
  });
});
