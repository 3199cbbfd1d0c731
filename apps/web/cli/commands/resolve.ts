import { UsageError, type CliContext } from "../command";

// Names accepted wherever ids are: each resolver takes a uuid as it is and looks a name up,
// refusing an unknown or ambiguous one with the candidates it saw.

export const isUuid = (s: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);

function pick<T extends { id: string }>(what: string, ref: string, matches: T[]): string {
  const [one, ...more] = matches;
  if (!one) throw new UsageError(`no ${what} named "${ref}"`);
  if (more.length)
    throw new UsageError(
      `${matches.length} ${what}s are named "${ref}"; use an id: ${matches.map((m) => m.id).join(", ")}`,
    );
  return one.id;
}

export async function resolveExperiment(ctx: CliContext, ref: string): Promise<string> {
  if (isUuid(ref)) return ref;
  const api = ctx.api().trpc.runs.list;
  const rows = [
    ...(await api.query({ q: ref, limit: 200 })).rows,
    ...(await api.query({ q: ref, limit: 200, archived: true })).rows,
  ];
  return pick(
    "experiment",
    ref,
    rows.filter((r) => r.name === ref),
  );
}

/** A split by name, or "POOL/SPLIT" when names repeat across pools. */
export async function resolveSplit(ctx: CliContext, ref: string): Promise<string> {
  if (isUuid(ref)) return ref;
  // Archived rows keep their names: a name typed on purpose still resolves.
  const splits = await ctx.api().trpc.splits.list.query({ includeArchived: true });
  return pick(
    "split",
    ref,
    splits.filter((s) => s.name === ref || `${s.poolName}/${s.name}` === ref),
  );
}

export async function resolveProvider(ctx: CliContext, ref: string): Promise<string> {
  if (isUuid(ref)) return ref;
  return pick(
    "provider",
    ref,
    (await ctx.api().trpc.providers.list.query({ includeArchived: true })).filter((p) => p.name === ref),
  );
}

export async function resolveDataset(ctx: CliContext, ref: string): Promise<string> {
  if (isUuid(ref)) return ref;
  return pick(
    "dataset",
    ref,
    (await ctx.api().trpc.datasets.list.query({ includeArchived: true })).filter((d) => d.name === ref),
  );
}
