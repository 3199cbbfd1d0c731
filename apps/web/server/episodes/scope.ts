import { DomainError } from "@agentlab/core";
import { getCollection, getExperiment, type Db } from "@agentlab/db";

// Episodes carry their task, not the experiment or collection that asked for them: "the episodes
// of an experiment (a collection)" are those on the tasks of its split. One scope at a time, so a
// list never silently intersects two.

export async function episodeScopeSplit(
  db: Db,
  scope: { experimentId?: string; collectionId?: string; splitId?: string },
): Promise<string | undefined> {
  const named = [scope.experimentId, scope.collectionId, scope.splitId].filter((x) => x !== undefined);
  if (named.length > 1)
    throw new DomainError("BAD_REQUEST", "name one of experimentId, collectionId or splitId, not several");
  if (scope.experimentId) {
    const e = await getExperiment(db, scope.experimentId);
    if (!e) throw new DomainError("NOT_FOUND", "no such experiment");
    return e.splitId;
  }
  if (scope.collectionId) {
    const c = await getCollection(db, scope.collectionId);
    if (!c) throw new DomainError("NOT_FOUND", "no such collection");
    return c.splitId;
  }
  return scope.splitId;
}
