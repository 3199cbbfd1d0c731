import { DomainError, ToolResult, type TrajectoryTurn } from "@agentlab/core";
import { getEpisode, getEpisodeBlobs, type Db, type EpisodeRow } from "@agentlab/db";

// Stored episodes read back as trajectory turns (each step's result from its blob), for the
// training data built from them: trajectory SFT (./sft.ts) and same-state DPO pairs
// (../experiments/episode-pairs.ts).

export type IndexedTurn = TrajectoryTurn & { index: number };

export async function turnsOf(db: Db, ids: string[]): Promise<Map<string, IndexedTurn[]>> {
  const out = new Map<string, IndexedTurn[]>();
  for (const id of ids) {
    const found = await getEpisode(db, id);
    if (!found) throw new DomainError("NOT_FOUND", `episode ${id} not found`);
    const blobs = new Map(
      (
        await getEpisodeBlobs(
          db,
          found.steps.map((s) => s.resultHash),
        )
      ).map((b) => [b.sha256, b]),
    );
    out.set(
      id,
      found.steps.map((s) => {
        const raw = blobs.get(s.resultHash)?.content;
        const result = raw === undefined ? null : ToolResult.safeParse(JSON.parse(raw));
        if (!result?.success) throw new DomainError("INTERNAL", `episode ${id} step ${s.index}: its result is missing`);
        return {
          index: s.index,
          role: s.role,
          tool: s.tool,
          args: s.args,
          status: s.status,
          output: result.data.output,
          changed: s.snapshotBefore !== s.snapshotAfter,
        };
      }),
    );
  }
  return out;
}

/**
 * The full transcript of each episode. A continuation numbers its steps on from the state it
 * resumed, so its prefix is its parent's steps before its own first index.
 */
export async function transcripts(
  db: Db,
  chosen: readonly Pick<EpisodeRow, "id" | "parentEpisodeId">[],
): Promise<Map<string, TrajectoryTurn[]>> {
  const parents = chosen.flatMap((c) => (c.parentEpisodeId ? [c.parentEpisodeId] : []));
  const all = await turnsOf(db, [...new Set([...chosen.map((c) => c.id), ...parents])]);
  return new Map(
    chosen.map((c) => {
      const own = all.get(c.id) ?? [];
      const from = own[0]?.index ?? 0;
      const prefix = c.parentEpisodeId ? (all.get(c.parentEpisodeId) ?? []).filter((s) => s.index < from) : [];
      if (prefix.length !== from)
        throw new DomainError("INTERNAL", `episode ${c.id}: its parent's steps before ${from} are incomplete`);
      return [c.id, [...prefix, ...own].map(({ index: _index, ...turn }) => turn)];
    }),
  );
}
