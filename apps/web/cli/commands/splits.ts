import { str, num, writeLine, type Command } from "../command";
import { resolvePoolId } from "./pools";

const create: Command = {
  name: "splits create",
  usage: "agentlab splits create POOL --seed N --dev 0.1 --test 0.2 [--name NAME]",
  summary: "create a frozen train/dev/test split by source group",
  options: { seed: { type: "string" }, dev: { type: "string" }, test: { type: "string" }, name: { type: "string" } },
  async run({ positionals, values }, ctx) {
    const poolId = await resolvePoolId(ctx, str(positionals[0], "POOL"));
    const res = await ctx.api().trpc.splits.create.mutate({
      poolId,
      seed: num(values.seed, "--seed"),
      devRatio: num(values.dev, "--dev", 0.1),
      testRatio: num(values.test, "--test", 0.2),
      name: values.name as string | undefined,
    });
    writeLine(ctx.out, `${res.created ? "created" : "exists"} split ${res.id}`);
    writeLine(ctx.out, `manifest ${res.manifestHash}`);
    for (const part of ["train", "dev", "test"] as const)
      writeLine(ctx.out, `${part}\t${res.counts[part].tasks} tasks\t${res.counts[part].groups} groups`);
    return 0;
  },
};

const show: Command = {
  name: "splits show",
  usage: "agentlab splits show ID [--json]",
  summary: "sizes, manifest hash and leakage report of a split",
  options: { json: { type: "boolean" } },
  async run({ positionals, values }, ctx) {
    const s = await ctx.api().trpc.splits.byId.query({ id: str(positionals[0], "ID") });
    if (values.json) {
      writeLine(ctx.out, JSON.stringify(s));
      return 0;
    }
    writeLine(ctx.out, `split ${s.id} (${s.name}) of pool ${s.poolName}, ${s.frozen ? "frozen" : "NOT frozen"}`);
    writeLine(ctx.out, `seed ${s.seed}, dev ${s.devRatio}, test ${s.testRatio}`);
    writeLine(ctx.out, `pool snapshot ${s.poolSnapshotHash}`);
    writeLine(ctx.out, `manifest ${s.manifestHash}`);
    for (const part of ["train", "dev", "test"] as const)
      writeLine(ctx.out, `${part}\t${s.counts[part].tasks} tasks\t${s.counts[part].groups} groups`);
    const l = s.leakage;
    writeLine(
      ctx.out,
      `leakage: ${l.testTasksWithLeak}/${l.testTasks} test tasks overlap train/dev (exact ${l.exactPairs}, normalized ${l.normalizedPairs}, ${l.n}-gram ${l.ngramPairs} pairs)`,
    );
    for (const p of l.pairs.slice(0, 20)) {
      const kinds = [
        p.exact && "exact",
        p.normalized && "normalized",
        p.sharedNgrams > 0 && `${p.sharedNgrams} ${l.n}-grams (${Math.round(p.overlap * 100)}%)`,
      ]
        .filter(Boolean)
        .join(", ");
      writeLine(ctx.out, `  ${p.testTaskId} ~ ${p.otherTaskId} [${p.otherPart}]: ${kinds}`);
    }
    if (l.pairs.length > 20 || l.truncated) writeLine(ctx.out, "  … (use --json for every pair)");
    return 0;
  },
};

export const splitCommands = [create, show];
