import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { createGzip } from "node:zlib";
import { resolve } from "node:path";
import type { Writable } from "node:stream";
import { SplitPart } from "@agentlab/core";
import { UsageError, str, writeLine, type CliContext, type Command } from "../command";

export async function resolvePoolId(ctx: CliContext, ref: string): Promise<string> {
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref);
  const pool = await ctx.api().trpc.pools.byId.query(isUuid ? { id: ref } : { name: ref });
  return pool.id;
}

const list: Command = {
  name: "pools list",
  usage: "agentlab pools list [--all] [--json]",
  summary: "list task pools with task, group and split counts (--all: archived ones too)",
  options: { json: { type: "boolean" }, all: { type: "boolean" } },
  async run({ values }, ctx) {
    const pools = await ctx.api().trpc.pools.list.query({ includeArchived: values.all === true });
    if (values.json) {
      writeLine(ctx.out, JSON.stringify(pools));
      return 0;
    }
    writeLine(ctx.out, ["NAME", "TASKS", "GROUPS", "SPLITS", "PENDING MERGES", "ORIGINS"].join("\t"));
    for (const p of pools) {
      const origins = p.origins.map((o) => `${o.origin || "-"}:${o.tasks}`).join(",");
      const name = p.archivedAt ? `${p.name} (archived)` : p.name;
      writeLine(ctx.out, [name, p.taskCount, p.groupCount, p.splits, p.pendingMerges, origins].join("\t"));
    }
    return 0;
  },
};

const exportPool: Command = {
  name: "pools export",
  usage: "agentlab pools export POOL [--split ID --part train|dev|test] [--out FILE(.jsonl|.jsonl.gz)]",
  summary: "write a pool (or one part of a split) back as Task spec v1",
  options: { split: { type: "string" }, part: { type: "string" }, out: { type: "string" } },
  async run({ positionals, values }, ctx) {
    const poolId = await resolvePoolId(ctx, str(positionals[0], "POOL"));
    const part = values.part === undefined ? undefined : SplitPart.safeParse(values.part);
    if (part && !part.success) throw new UsageError("--part must be train, dev or test");
    if (part && typeof values.split !== "string") throw new UsageError("--part needs --split");
    const outPath = typeof values.out === "string" ? resolve(ctx.cwd, values.out) : null;
    const file = outPath ? createWriteStream(outPath) : null;
    const gzip = outPath?.endsWith(".gz") ? createGzip() : null;
    if (gzip && file) gzip.pipe(file);
    const sink: Writable = gzip ?? file ?? ctx.out;
    let after: string | undefined;
    let count = 0;
    for (;;) {
      const page = await ctx.api().trpc.pools.exportPage.query({
        poolId,
        splitId: values.split as string | undefined,
        part: part?.data,
        after,
        limit: 500,
      });
      for (const t of page.items) if (!sink.write(`${JSON.stringify(t)}\n`)) await once(sink, "drain");
      count += page.items.length;
      if (!page.nextCursor) break;
      after = page.nextCursor;
    }
    if (file) {
      sink.end();
      await once(file, "finish");
      writeLine(ctx.err, `wrote ${count} tasks to ${outPath}`);
    }
    return 0;
  },
};

const archive: Command = {
  name: "pools archive",
  usage: "agentlab pools archive POOL [--restore]",
  summary: "hide a pool from lists and pickers (--restore shows it again); nothing in it changes",
  options: { restore: { type: "boolean" } },
  async run({ positionals, values }, ctx) {
    const poolId = await resolvePoolId(ctx, str(positionals[0], "POOL"));
    const archived = values.restore !== true;
    await ctx.api().trpc.pools.archive.mutate({ id: poolId, archived });
    writeLine(ctx.err, `pool ${positionals[0]} ${archived ? "archived" : "restored"}`);
    return 0;
  },
};

export const poolCommands = [list, exportPool, archive];
