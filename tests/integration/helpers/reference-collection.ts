import { and, eq } from "drizzle-orm";
import { getSplit, insertProvider, schema, type Db } from "@agentlab/db";
import { formatAnswer, type TaskSpec } from "@agentlab/core";

/**
 * A finished teacher collection with one passing reference answer per given task, written as the
 * teacher runner would (provider, collection, candidates, items); returns the collection's id.
 * Tests build verified SFT snapshots from it without a teacher or a grader.
 */
export async function referenceCollection(
  db: Db,
  opts: {
    splitId: string;
    tasks: ReadonlyMap<string, TaskSpec>;
    taskIds: readonly string[];
    parts?: ("train" | "dev" | "test")[];
  },
): Promise<string> {
  const split = await getSplit(db, opts.splitId);
  const provider = await insertProvider(db, {
    name: `reference ${crypto.randomUUID()}`,
    kind: "reference",
    baseUrl: null,
    model: "reference",
    apiKeySealed: null,
    extraParams: {},
  });
  const [col] = await db
    .insert(schema.teacherCollections)
    .values({
      name: "ref",
      splitId: opts.splitId,
      providerId: provider.id,
      providerKind: "reference",
      model: "reference",
      parts: opts.parts ?? ["train"],
      nSamples: 1,
      params: { temperature: 0, top_p: 1, max_tokens: 64 },
      paramsHash: "p",
      promptHash: "h",
      concurrency: 1,
      maxRetries: 0,
      timeoutMs: 1000,
      state: "done",
    })
    .returning();
  if (!col || !split) throw new Error("no collection");
  for (const id of opts.taskIds) {
    const [row] = await db
      .select()
      .from(schema.tasks)
      .where(and(eq(schema.tasks.poolId, split.poolId), eq(schema.tasks.taskId, id)));
    const spec = opts.tasks.get(id);
    if (!row || !spec) throw new Error(`no task ${id}`);
    const files = spec.reference.map((r) => ({ path: r.path, content: r.content }));
    const [cand] = await db
      .insert(schema.teacherCandidates)
      .values({
        cacheKey: crypto.randomUUID(),
        fingerprint: row.fingerprint,
        promptHash: "h",
        model: "reference",
        paramsHash: "p",
        sampleIndex: 0,
        providerKind: "reference",
        oracle: true,
        originTaskRowId: row.id,
        answer: formatAnswer(files),
        files,
        verdict: "pass",
      })
      .returning();
    if (!cand) throw new Error("no candidate");
    await db
      .insert(schema.teacherCollectionItems)
      .values({ collectionId: col.id, taskRowId: row.id, sampleIndex: 0, candidateId: cand.id, reused: false });
  }
  return col.id;
}
