import { spawn } from "node:child_process";
import { createReadStream } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  answerContaminated,
  answerContaminationCheck,
  answerContaminationLines,
  comparePaired,
  mainPaths,
  parseAnswer,
  promptMismatches,
  protocolsByModel,
  sftLine,
  sftSample,
  TrainerEvent,
  type PairedComparison,
  CPU_DEMO_WARM_CLUSTERS,
  cpuDemoRecipe,
  type RecordedProtocol,
  type SftSample,
  type TaskSpec,
} from "@agentlab/core";
import { importPool } from "@agentlab/db";
import { LEARNABLE_POOL_FILE, LEARNABLE_POOL_NAME } from "../../apps/web/server/bootstrap/builtin-pool";
import { Grader } from "../../apps/agent/src/grading/grader";
import { findPython, runPython } from "../../apps/agent/src/trainer/python";
import { LEARNABLE_SHAPES, learnableCluster } from "../../apps/agent/src/synth/learnable";
import { buildWarmBase, learnableSplit, referenceSamples } from "../../scripts/learning-proof";
import {
  answersOf,
  compareOutcomes,
  generate,
  generateSpec,
  grade,
  pairOutcomes,
  passRateOf,
  type Outcomes,
  type Snapshot,
} from "../../scripts/learning-proof-eval";
import { sandboxCfg } from "./helpers/judge";
import { createTestDatabase } from "./helpers/db";

// The chain data → assistant mask → training → adapter at generation → answer parsing → grading
// (the real judge) → the report's clustered statistics detects a real gain, and every arm that must
// not "win" does not: broken steps (false negatives of the chain), and the false-positive controls
// (shuffled answers, A/A, held-out shapes, a leak the answer-side check must flag, mispaired rows a
// guard must refuse). The base is warmed up on a quarter of the shapes' train repairs and starts
// above 0% (a fifth of test: see CPU_DEMO_SHAPE), so a control can regress and a mispaired row can
// show. One base and one main adapter serve every arm.
// Synthetic tasks (the learnable pool) and a tiny model built here; nothing about real models.

const ROOT = process.cwd();
const python = findPython(null, { root: join(ROOT, "apps/agent") });
const BROKEN = join(ROOT, "tests/integration/helpers/broken_trainer.py");
// Shapes whose train tasks the main adapter never sees (none of them warm; each with dev or test
// tasks in this split): the held-out arm evaluates on their dev and test tasks.
const HELD_OUT = new Set(LEARNABLE_SHAPES.filter((_, i) => i % 10 === 3).map((s) => learnableCluster(s.fn)));
const held = (t: TaskSpec) => HELD_OUT.has(t.cluster ?? "");
const clusters = (ts: readonly TaskSpec[]) => new Set(ts.map((t) => t.cluster)).size;
// The demo's split (same pool file and parameters), so both share one cached base.
let train: TaskSpec[] = [];
let mainTrain: TaskSpec[] = [];
let test: TaskSpec[] = [];
let heldTest: TaskSpec[] = [];

let dir = "";
let grader: Grader;
let base = "";
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "agentlab-proof-"));
  const db = await createTestDatabase();
  try {
    const pool = await importPool(db.db, {
      name: LEARNABLE_POOL_NAME,
      builtin: true,
      lines: createReadStream(LEARNABLE_POOL_FILE),
    });
    if (!pool.ok) throw new Error("the learnable pool did not import");
    const parts = await learnableSplit(db.db, pool.poolId);
    train = parts.train;
    mainTrain = train.filter((t) => !held(t));
    test = parts.test.filter((t) => !held(t));
    heldTest = [...parts.dev, ...parts.test].filter(held);
  } finally {
    await db.drop();
  }
  grader = new Grader(sandboxCfg(), { workers: 2 });
  // Built once per recipe into the machine's cache outside the clone (AGENTLAB_CACHE_DIR).
  base = (await buildWarmBase({ python, train })).path;
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

// The CPU demo preset's training (what the demo and the form's preset run).
const { training } = cpuDemoRecipe();
const { lora } = training;
const trainSpec = async (name: string, samples: readonly SftSample[] = referenceSamples(mainTrain)) => {
  const dataset = join(dir, `${name}.jsonl`);
  await writeFile(dataset, samples.map(sftLine).join("\n") + "\n");
  return {
    base_model: base,
    dataset,
    output_dir: join(dir, name),
    lora: { r: lora.r, alpha: lora.alpha, dropout: lora.dropout, target_modules: lora.targets },
    epochs: training.epochs,
    learning_rate: training.learningRate,
    batch_size: training.batchSize,
    max_length: 1024,
    quantization: "none" as const,
    device: "cpu" as const,
    method: "lora-fp32" as const,
    seed: 1,
  };
};
async function trained(name: string, samples?: readonly SftSample[]): Promise<Snapshot> {
  const res = await runPython("train", await trainSpec(name, samples), { python });
  const last = res.record?.snapshots?.at(-1);
  if (!last) throw new Error("no snapshot");
  return { path: last.path, sha256: last.sha256 };
}
const evaluate = async (
  ts: readonly TaskSpec[],
  adapter?: Snapshot,
  sampling?: { seed: number; temperature: number },
) => grade(grader, ts, await generate(python, generateSpec(base, ts, adapter, sampling)));

// A "win" is what the report would claim: significant by its own rule, with a positive Δ.
const wins = (c: PairedComparison) => c.significant && c.delta > 0;
const show = (name: string, c: PairedComparison) =>
  console.log(
    `learning-proof ${name}`,
    JSON.stringify({
      base: c.basePass,
      treated: c.treatedPass,
      delta: c.delta,
      ci: c.ci,
      p: c.p,
      test: c.test,
      interval: c.intervalMethod,
      unit: c.unit,
      units: c.units,
      n: c.n,
      improved: c.improved,
      regressed: c.regressed,
    }),
  );

describe("the learning proof on the synthetic learnable family (tiny settings)", () => {
  let baseOutcomes: Outcomes = new Map();
  let baseHeld: Outcomes = new Map();
  let good: Snapshot = { path: "", sha256: "" };
  let goodOutcomes: Outcomes = new Map();
  let goodDelta = 0;

  it("the split declares its shapes as clusters, ≥ 20 of them in the main test, none held out trained on", () => {
    expect(clusters(test)).toBeGreaterThanOrEqual(20);
    expect(test.every((t) => t.cluster !== undefined)).toBe(true);
    expect(heldTest.length).toBeGreaterThan(0);
    expect(mainTrain.some(held)).toBe(false);
  });

  it("the warmed-up base answers in the parseable format", {
    timeout: 600_000,
  }, async () => {
    const evaluated = [...test, ...heldTest];
    const answers = await generate(python, generateSpec(base, evaluated));
    const parsed = evaluated.filter((t) => parseAnswer(answers.get(t.id)?.text ?? "", mainPaths(t)).ok).length;
    const all = await grade(grader, evaluated, answers);
    baseOutcomes = new Map(test.map((t) => [t.id, all.get(t.id) ?? { pass: 0, promptSha256: null }]));
    baseHeld = new Map(heldTest.map((t) => [t.id, all.get(t.id) ?? { pass: 0, promptSha256: null }]));
    const warm = test.filter((t) => CPU_DEMO_WARM_CLUSTERS.has(t.cluster ?? ""));
    console.log(
      "learning-proof base",
      JSON.stringify({ pass: passRateOf(baseOutcomes), warmTasks: warm.length, tasks: test.length, parsed }),
    );
    expect(parsed).toBeGreaterThanOrEqual(Math.ceil(evaluated.length / 2));
    // It starts well above 0% and at most 40% of test (the warm shapes' repairs), so regressions
    // can show: a base at 0% leaves a control nothing to lose. The same recipe's 750 float32
    // warm-up steps gave a base solving 8 of 36 on the machine the preset was tuned on and 5 of 36
    // on another (an AVX-512 box, 2026-12-07; float kernels differ by CPU), hence 10%, not 15%.
    expect(passRateOf(baseOutcomes)).toBeGreaterThanOrEqual(0.1);
    expect(passRateOf(baseOutcomes)).toBeLessThanOrEqual(0.4);
  });

  it("main: SFT on the train tasks' fixes wins on unseen test groups", { timeout: 900_000 }, async () => {
    good = await trained("good");
    goodOutcomes = await evaluate(test, good);
    const c = compareOutcomes(test, baseOutcomes, goodOutcomes);
    show("main", c);
    goodDelta = c.delta;
    expect(c.unit).toBe("cluster");
    expect(wins(c)).toBe(true);
  });

  it("held-out shapes: the same adapter on shapes it never trained on (the honest Δ, not the main's)", {
    timeout: 600_000,
  }, async () => {
    const c = compareOutcomes(heldTest, baseHeld, await evaluate(heldTest, good));
    show("held-out-shapes", c);
    // The honest Δ of shapes the adapter never trained on (their buggy files were echoed in the
    // base's warm-up, so the one repair can transfer: measured +77.8 pp over 3 units, 7 of 9
    // improved, p = 0.5), counted in its own units (few: marked unreliable, never significant) and
    // never folded into the main's figure.
    expect(c.units).toBe(clusters(heldTest));
    expect(c.reliable).toBe(false);
    expect(wins(c)).toBe(false);
    console.log("learning-proof held-out vs main delta", JSON.stringify({ heldOut: c.delta, main: goodDelta }));
  });

  it("A/A: the main adapter against itself, two sampling seeds at T = 0.7, is not significant", {
    timeout: 600_000,
  }, async () => {
    const spec = (seed: number) => generateSpec(base, test, good, { seed, temperature: 0.7 });
    const [a, b] = [await generate(python, spec(1)), await generate(python, spec(2))];
    // The two sides did sample differently (else the A/A would be trivially null).
    expect(test.some((t) => a.get(t.id)?.text !== b.get(t.id)?.text)).toBe(true);
    const c = compareOutcomes(test, await grade(grader, test, a), await grade(grader, test, b));
    show("aa", c);
    expect(c.significant).toBe(false);
  });

  it("shuffled answers (each prompt trained on another task's fix) gives no gain", {
    timeout: 900_000,
  }, async () => {
    const samples = referenceSamples(mainTrain);
    // Each prompt gets the fix of the next task (7 on) of ANOTHER shape: same-shape tasks share their fix.
    const other = (i: number) => {
      let k = 7;
      while (mainTrain[(i + k) % mainTrain.length]?.cluster === mainTrain[i]?.cluster) k++;
      return samples[(i + k) % samples.length];
    };
    const shuffled = samples.map((s, i) => ({
      messages: [
        ...s.messages.filter((m) => m.role !== "assistant"),
        ...(other(i)?.messages ?? []).filter((m) => m.role === "assistant"),
      ],
    }));
    const c = compareOutcomes(test, baseOutcomes, await evaluate(test, await trained("shuffled", shuffled)));
    show("shuffled", c);
    expect(wins(c)).toBe(false);
    expect(c.delta).toBeLessThanOrEqual(0);
    // With a base above 0% the control has something to lose: at least one discordant pair, so the
    // test and the interval are exercised (with the base at 0% there were none, exact-no-discordance).
    expect(c.improved + c.regressed).toBeGreaterThan(0);
    expect(c.intervalMethod).not.toBe("exact-no-discordance");
  });

  it("leak-positive: the held-out tasks' own samples in SFT are flagged by the answer-side check", () => {
    // Same-shape tasks share their answer (the family's design, declared as clusters), so the
    // main's data already holds the answers of the test tasks of its shapes; the held-out shapes'
    // answers it does not hold. Leaking three held-out tasks' own samples must flag exactly them.
    const asTrained = (ts: readonly TaskSpec[]) =>
      ts.map((t, i) => ({
        source: "sft" as const,
        id: `${t.id}#${i}`,
        text: sftSample(t, t.reference).messages.find((m) => m.role === "assistant")?.content ?? "",
        mains: mainPaths(t),
      }));
    const leakedTasks = heldTest.slice(0, 3);
    const check = (answers: ReturnType<typeof asTrained>) =>
      answerContaminationCheck({ test: heldTest, dev: [], answers });
    // positive control: the main's own data leaves the held-out tasks clean
    expect(answerContaminated(check(asTrained(mainTrain)))).toBe(false);
    const flagged = check([...asTrained(mainTrain), ...asTrained(leakedTasks)]);
    expect(answerContaminated(flagged)).toBe(true);
    expect(answerContaminationLines(flagged)[0]?.contaminated).toBe(true);
    const copied = new Set(flagged.test.pairs.filter((p) => p.exact).map((p) => p.testTaskId));
    // Exactly the leaked tasks, and any held-out task of the same shape (its answer is the same).
    for (const t of leakedTasks) expect(copied.has(t.id)).toBe(true);
    for (const id of copied)
      expect(leakedTasks.some((t) => t.cluster === heldTest.find((h) => h.id === id)?.cluster)).toBe(true);
  });

  it("mispairing: adapter answers shifted by one task are refused; unguarded, they change the result", () => {
    const ids = test.map((t) => t.id);
    const shifted: Outcomes = new Map(
      ids.map((id, i) => [id, goodOutcomes.get(ids[(i + 1) % ids.length] ?? id) ?? { pass: 0, promptSha256: null }]),
    );
    expect(() => pairOutcomes(test, baseOutcomes, shifted)).toThrow(/refusing to pair task/);
    // The product's guard on stored evaluations refuses the same rows: each stored answer carries
    // the hash of the prompt it was generated for (real hashes from the trainer here).
    const stored = (modelKey: string, o: Outcomes, adapterSha256: string | null) =>
      ids.map((taskId) => ({
        split: "test",
        modelKey,
        taskId,
        protocol: { ...PROTOCOL, adapterSha256, promptSha256: o.get(taskId)?.promptSha256 ?? null },
      }));
    const rows = (o: Outcomes) => [...stored("base", baseOutcomes, null), ...stored("s1e4", o, good.sha256)];
    expect(promptMismatches(rows(goodOutcomes))).toEqual([]);
    expect(() => protocolsByModel(rows(shifted))).toThrow(/rendered prompts differ between models on \d+ task/);
    // positive control: unguarded, the shifted rows are read as a different result
    const unguarded = comparePaired(
      test.map((t) => ({
        group: t.source_group,
        cluster: t.cluster,
        base: baseOutcomes.get(t.id)?.pass ?? 0,
        treated: shifted.get(t.id)?.pass ?? 0,
      })),
      { iterations: 2000, seed: 0 },
    );
    const honest = compareOutcomes(test, baseOutcomes, goodOutcomes);
    show("mispaired-unguarded", unguarded);
    const read = (c: PairedComparison) => [c.improved, c.regressed, c.p, c.ci];
    expect(read(unguarded)).not.toEqual(read(honest));
  });

  it("broken: generation ignoring the adapter does not win", { timeout: 600_000 }, async () => {
    const spec = join(dir, "gen-ignore.json");
    await writeFile(spec, JSON.stringify(generateSpec(base, test, good)));
    const r = await runBroken(["ignore-adapter", "generate", "--spec", spec]);
    expect(r.code).toBe(0);
    const c = compareOutcomes(test, baseOutcomes, await grade(grader, test, answersOf(r.events, hashesOf(r.events))));
    show("ignore-adapter", c);
    expect(wins(c)).toBe(false);
  });

  it("broken: evaluating an untrained epoch (LoRA as initialised) does not win", { timeout: 600_000 }, async () => {
    const spec = join(dir, "untrained.json");
    await writeFile(spec, JSON.stringify(await trainSpec("untrained")));
    const r = await runBroken(["untrained-adapter", spec]);
    expect(r.code).toBe(0);
    const snap = JSON.parse(r.stdout.trim().split("\n").at(-1) ?? "{}") as Snapshot;
    const c = compareOutcomes(test, baseOutcomes, await evaluate(test, snap));
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
    const c = compareOutcomes(test, baseOutcomes, await evaluate(test, { path: last.path, sha256: last.sha256 }));
    show("labels-on-prompt", c);
    expect(wins(c)).toBe(false);
  });
});

// A stored evaluation's protocol record as the product writes it (only the prompt hash varies here).
const PROTOCOL: Omit<RecordedProtocol, "adapterSha256" | "promptSha256"> = {
  promptTemplateHash: "1".repeat(64),
  chatTemplateSha256: "c".repeat(64),
  decoding: { doSample: false, temperature: 1, topP: 1 },
  maxNewTokens: 80,
  samples: 1,
  seed: 0,
  stop: ["<|im_end|>"],
  generationConfig: "recipe",
  backend: "transformers",
  backendVersion: "test",
  dtype: "float32",
  device: "cpu",
  model: { ref: "tiny", revision: null, weightsSha256: null },
  trainingMethod: null,
  graderVersion: "test",
};

function hashesOf(events: Events): Record<string, string> {
  const r = events.find((e) => e.event === "result");
  return (r?.event === "result" ? r.generate?.task_prompts_sha256 : undefined) ?? {};
}
