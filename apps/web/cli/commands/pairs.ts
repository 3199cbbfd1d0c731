import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { str, writeLine, type Command } from "../command";

// Preference pairs from the command line: export an experiment's stored pairs as JSONL.

const exportCmd: Command = {
  name: "pairs export",
  usage: "agentlab pairs export EXPERIMENT_ID --out FILE [--round N]",
  summary: "write an experiment's preference pairs (every round, or one) as JSONL",
  options: { out: { type: "string" }, round: { type: "string" } },
  async run({ positionals, values }, ctx) {
    const experimentId = str(positionals[0], "EXPERIMENT_ID");
    const out = resolve(ctx.cwd, str(values.out, "--out"));
    const round = typeof values.round === "string" ? Number(values.round) : undefined;
    if (round !== undefined && !(Number.isInteger(round) && round >= 0)) {
      writeLine(ctx.err, `--round must be an integer >= 0, got ${values.round}`);
      return 2;
    }
    const res = await ctx.api().trpc.pairs.export.query({ experimentId, round });
    await writeFile(out, res.jsonl, "utf8");
    writeLine(ctx.out, `wrote ${res.count} pairs to ${out}`);
    return 0;
  },
};

export const pairCommands = [exportCmd];
