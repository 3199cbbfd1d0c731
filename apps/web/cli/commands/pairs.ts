import { writeFile } from "node:fs/promises";
import { PairSource } from "@agentlab/core";
import { resolve } from "node:path";
import { str, writeLine, type Command } from "../command";

// Preference pairs from the command line: export an experiment's stored pairs as JSONL.

const exportCmd: Command = {
  name: "pairs export",
  usage: `agentlab pairs export EXPERIMENT_ID --out FILE [--round N] [--source ${PairSource.options.join("|")}]`,
  summary: "write an experiment's preference pairs (every round, or one; every source, or one) as JSONL",
  options: { out: { type: "string" }, round: { type: "string" }, source: { type: "string" } },
  async run({ positionals, values }, ctx) {
    const experimentId = str(positionals[0], "EXPERIMENT_ID");
    const out = resolve(ctx.cwd, str(values.out, "--out"));
    const round = typeof values.round === "string" ? Number(values.round) : undefined;
    if (round !== undefined && !(Number.isInteger(round) && round >= 0)) {
      writeLine(ctx.err, `--round must be an integer >= 0, got ${values.round}`);
      return 2;
    }
    const source = PairSource.safeParse(values.source);
    if (values.source !== undefined && !source.success) {
      writeLine(ctx.err, `--source must be one of ${PairSource.options.join(", ")}, got ${String(values.source)}`);
      return 2;
    }
    const res = await ctx.api().trpc.pairs.export.query({ experimentId, round, pairSource: source.data });
    await writeFile(out, res.jsonl, "utf8");
    writeLine(ctx.out, `wrote ${res.count} pairs to ${out}`);
    return 0;
  },
};

export const pairCommands = [exportCmd];
