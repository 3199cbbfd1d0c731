import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { formatProblem, validateTaskStream, type ImportResponse, type TaskProblem } from "@agentlab/core";
import { num, str, writeLine, type CliContext, type Command } from "../command";
import { readTaskDir } from "../taskdir";
import { resolvePoolId } from "./pools";

const validate: Command = {
  name: "tasks validate",
  usage: "agentlab tasks validate FILE [--json]",
  summary: "check a .jsonl/.jsonl.gz task file offline (exit 0 valid, 1 invalid)",
  options: { json: { type: "boolean" } },
  async run({ positionals, values }, ctx) {
    const file = str(positionals[0], "FILE");
    const res = await validateTaskStream(createReadStream(resolve(ctx.cwd, file)));
    const valid = res.problems.length === 0;
    if (values.json) {
      writeLine(
        ctx.out,
        JSON.stringify({ file, valid, tasks: res.tasks.length, lines: res.lines, problems: res.problems }),
      );
    } else {
      for (const p of res.problems) writeLine(ctx.out, formatProblem(p, file));
      writeLine(
        valid ? ctx.out : ctx.err,
        valid
          ? `${file}: ${res.tasks.length} tasks, valid`
          : `${file}: ${res.problems.length} problem(s); the file is invalid`,
      );
    }
    return valid ? 0 : 1;
  },
};

function progress(ctx: CliContext, total: number | null) {
  let last = 0;
  return (sent: number) => {
    const now = Date.now();
    if (now - last < 250 && sent !== total) return;
    last = now;
    ctx.err.write(
      `\ruploading ${(sent / 1048576).toFixed(1)} MiB${total ? ` / ${(total / 1048576).toFixed(1)} MiB (${Math.round((sent / total) * 100)}%)` : ""}`,
    );
  };
}

function report(ctx: CliContext, res: ImportResponse, format: (p: TaskProblem) => string): number {
  ctx.err.write("\n");
  if (res.ok) {
    writeLine(ctx.out, `imported ${res.imported} tasks into pool ${res.poolId}`);
    writeLine(
      ctx.out,
      `exact duplicates: ${res.exactDuplicates}, normalized-code duplicates: ${res.normalizedDuplicates}, group merge proposals: ${res.mergeProposals}`,
    );
    writeLine(ctx.out, `pool snapshot: ${res.snapshotHash}`);
    if (res.duplicatesOfExisting > 0)
      writeLine(
        ctx.err,
        `warning: ${res.duplicatesOfExisting} of the imported tasks duplicate tasks already in the pool (same fingerprint); they were added as separate tasks (review the merge proposals before making a split)`,
      );
    const clusters = res.clusterProposals;
    if (clusters && clusters.total > 0)
      writeLine(
        ctx.err,
        `warning: ${clusters.total} families of tasks in different source groups share one reference answer (${clusters.proposals
          .slice(0, 3)
          .map((p) => `${p.cluster}: ${p.tasks} tasks`)
          .join(
            ", ",
          )}${clusters.total > 3 ? ", …" : ""}); declare a cluster per family in the task file, or the report counts them as independent units`,
      );
    return 0;
  }
  for (const p of res.problems) writeLine(ctx.out, format(p));
  if (res.problemCount > res.problems.length)
    writeLine(ctx.out, `… and ${res.problemCount - res.problems.length} more`);
  writeLine(ctx.err, `${res.problemCount} problem(s); nothing was imported`);
  return 1;
}

type Values = Record<string, string | boolean | undefined>;
const importOptions = { pool: { type: "string" }, description: { type: "string" } } as const;

/** Uploads a body to the pool named by --pool, showing progress, and prints the outcome. */
async function upload(
  ctx: CliContext,
  values: Values,
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  size: number,
  format: (p: TaskProblem) => string,
) {
  const res = await ctx.api().importTasks({
    pool: str(values.pool, "--pool"),
    description: values.description as string | undefined,
    body,
    onProgress: progress(ctx, size),
  });
  return report(ctx, res, format);
}

const importFile: Command = {
  name: "tasks import",
  usage: "agentlab tasks import FILE --pool NAME [--description TEXT]",
  summary: "upload a task file into a pool (all or nothing)",
  options: importOptions,
  async run({ positionals, values }, ctx) {
    const name = str(positionals[0], "FILE");
    const file = resolve(ctx.cwd, name);
    return upload(ctx, values, createReadStream(file), (await stat(file)).size, (p) => formatProblem(p, name));
  },
};

const importDir: Command = {
  name: "tasks import-dir",
  usage: "agentlab tasks import-dir DIR --pool NAME [--description TEXT]",
  summary: "upload a directory of task folders (see docs/task-format.md)",
  options: importOptions,
  async run({ positionals, values }, ctx) {
    const dir = resolve(ctx.cwd, str(positionals[0], "DIR"));
    const tasks = await readTaskDir(dir);
    if (tasks.length === 0) {
      writeLine(ctx.err, `${dir}: no task folders found`);
      return 1;
    }
    const body = new TextEncoder().encode(tasks.map((t) => t.line).join("\n") + "\n");
    // Line N of the generated file is folder N: problems are reported against the folder.
    return upload(
      ctx,
      values,
      [body],
      body.length,
      (p) => `${tasks[p.line - 1]?.folder ?? "?"}: ${p.field ? `${p.field}: ` : ""}${p.message} [${p.code}]`,
    );
  },
};

const search: Command = {
  name: "tasks search",
  usage: 'agentlab tasks search POOL TEXT [--limit N] [--offset N] [--json]   (TEXT: words, "a phrase", or, -word)',
  summary: "full-text search in the instructions of a pool's tasks, best match first",
  options: { limit: { type: "string" }, offset: { type: "string" }, json: { type: "boolean" } },
  async run({ positionals, values }, ctx) {
    const poolId = await resolvePoolId(ctx, str(positionals[0], "POOL"));
    const text = str(positionals.slice(1).join(" "), "TEXT");
    const offset = num(values.offset, "--offset", 0);
    const page = await ctx
      .api()
      .trpc.tasks.search.query({ poolId, text, offset, limit: num(values.limit, "--limit", 20) });
    if (values.json) {
      writeLine(ctx.out, JSON.stringify(page));
      return 0;
    }
    for (const h of page.items) writeLine(ctx.out, [h.taskId, h.groupKey, h.snippet.replace(/\s+/g, " ")].join("\t"));
    writeLine(
      ctx.err,
      page.total === 0
        ? `no instruction matches "${text}"`
        : `${offset + 1}-${offset + page.items.length} of ${page.total} matching tasks`,
    );
    return 0;
  },
};

export const taskCommands = [validate, importFile, importDir, search];
