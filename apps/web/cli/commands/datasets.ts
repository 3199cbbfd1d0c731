import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { DATA_QUALITIES, DATA_QUALITY_LABELS, DataQuality } from "@agentlab/core";
import { num, str, UsageError, writeLine, type Command } from "../command";

// SFT dataset snapshots from the command line: create from graded collections (of a chosen
// answer quality), export as JSONL, cut to a token budget, shuffle into a control.

const create: Command = {
  name: "datasets create",
  usage: `agentlab datasets create --split ID --collection ID[,ID…] --name NAME [--quality ${DATA_QUALITIES.join("|")}]`,
  summary:
    "snapshot the candidates of collections (the passing ones unless --quality says otherwise) as an immutable SFT dataset",
  options: {
    split: { type: "string" },
    collection: { type: "string" },
    name: { type: "string" },
    experiment: { type: "string" },
    quality: { type: "string" },
  },
  async run({ values }, ctx) {
    const quality = values.quality === undefined ? undefined : DataQuality.safeParse(values.quality);
    if (quality && !quality.success)
      throw new UsageError(`--quality: "${String(values.quality)}" is not one of ${DATA_QUALITIES.join(", ")}`);
    const d = await ctx.api().trpc.datasets.create.mutate({
      splitId: str(values.split, "--split"),
      collectionIds: str(values.collection, "--collection")
        .split(",")
        .map((s) => s.trim()),
      name: str(values.name, "--name"),
      experimentId: typeof values.experiment === "string" ? values.experiment : undefined,
      quality: quality?.data,
    });
    writeLine(
      ctx.out,
      `dataset ${d.id}: ${d.sampleCount} samples over ${d.taskCount} tasks, ${DATA_QUALITY_LABELS[d.quality]}`,
    );
    writeLine(ctx.out, `sha256 ${d.hash}`);
    if (d.oracleSamples > 0)
      writeLine(ctx.out, `note: ${d.oracleSamples} samples come from the reference ORACLE, not a teacher model`);
    return 0;
  },
};

const exportCmd: Command = {
  name: "datasets export",
  usage: "agentlab datasets export ID --out FILE",
  summary: "write an SFT dataset snapshot as JSONL; its sha256 is the snapshot hash",
  options: { out: { type: "string" } },
  async run({ positionals, values }, ctx) {
    const id = str(positionals[0], "ID");
    const out = resolve(ctx.cwd, str(values.out, "--out"));
    const res = await ctx.api().trpc.datasets.export.query({ id });
    await writeFile(out, res.jsonl, "utf8");
    writeLine(ctx.out, `wrote ${res.sampleCount} samples to ${out}`);
    writeLine(ctx.out, `sha256 ${res.hash}`);
    if (res.oracleSamples > 0)
      writeLine(ctx.out, `note: ${res.oracleSamples} samples come from the reference ORACLE, not a teacher model`);
    return 0;
  },
};

const budgetCmd: Command = {
  name: "datasets budget",
  usage: "agentlab datasets budget ID --tokens B --seed S [--name NAME]",
  summary: "a child snapshot of whole tasks holding B ± 0.5% supervised tokens (token matching for study arms)",
  options: { tokens: { type: "string" }, seed: { type: "string" }, name: { type: "string" } },
  async run({ positionals, values }, ctx) {
    const r = await ctx.api().trpc.datasets.budget.mutate({
      id: str(positionals[0], "ID"),
      tokens: num(values.tokens, "--tokens"),
      seed: num(values.seed, "--seed"),
      name: typeof values.name === "string" ? values.name : undefined,
    });
    const d = r.dataset;
    writeLine(ctx.out, `dataset ${d.id}: ${d.sampleCount} samples over ${d.taskCount} tasks (parent ${d.parentId})`);
    writeLine(
      ctx.out,
      `supervised tokens ${r.budget.tokens} for B = ${r.budget.target} (${(100 * r.budget.gap).toFixed(2)}%, tolerance ±${(100 * r.budget.tolerance).toFixed(1)}%)`,
    );
    writeLine(ctx.out, `sha256 ${d.hash}`);
    return 0;
  },
};

const shuffleCmd: Command = {
  name: "datasets shuffle",
  usage: "agentlab datasets shuffle ID --seed S",
  summary: "a child snapshot whose prompts are answered with other tasks' answers (a study's negative control)",
  options: { seed: { type: "string" } },
  async run({ positionals, values }, ctx) {
    const d = await ctx
      .api()
      .trpc.datasets.shuffle.mutate({ id: str(positionals[0], "ID"), seed: num(values.seed, "--seed") });
    writeLine(ctx.out, `dataset ${d.id}: ${d.sampleCount} samples over ${d.taskCount} tasks (parent ${d.parentId})`);
    writeLine(ctx.out, `quality: ${DATA_QUALITY_LABELS[d.quality]}`);
    writeLine(ctx.out, `sha256 ${d.hash}`);
    return 0;
  },
};

export const datasetCommands = [create, exportCmd, budgetCmd, shuffleCmd];
