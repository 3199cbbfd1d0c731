import {
  DomainError,
  initialObservation,
  startingPaths,
  trainsOn,
  type BranchContinuation,
  type BranchState,
  type TaskSpec,
} from "@agentlab/core";
import { branchContinuations, toTaskSpec, type Db } from "@agentlab/db";
import { turnsOf } from "../episodes/turns";

// The inputs of same-state pairs (core episodeBranchPairs): every stored branch point of a main
// episode on the given tasks of the split's TRAIN part, with its continuations, the transcript to
// the state (the main episode's steps before it) and each continuation's own steps. Whatever
// tasks a caller names, only train-part rows are read (`part` is fixed here, not a parameter of
// the pairs stage); the preference_pairs triggers refuse any other pair as well.

export async function episodeBranchStates(
  db: Db,
  opts: { splitId: string; tasks: readonly Pick<TaskSpec, "id">[]; part?: "train" | "dev" | "test" },
): Promise<BranchState[]> {
  const rows = await branchContinuations(db, {
    splitId: opts.splitId,
    part: opts.part ?? "train",
    taskKeys: opts.tasks.map((t) => t.id),
  });
  if (rows.length === 0) return [];
  const turns = await turnsOf(db, [...new Set(rows.flatMap((r) => [r.main.id, r.continuation.id]))]);
  const states = new Map<string, BranchState & { continuations: BranchContinuation[] }>();
  for (const r of rows) {
    const own = turns.get(r.continuation.id) ?? [];
    // A continuation numbers its steps on from the state it resumed: its first index is the state's t.
    const t = own[0]?.index ?? 0;
    const key = r.branch.id;
    let state = states.get(key);
    if (!state) {
      const prefix = (turns.get(r.main.id) ?? []).filter((s) => s.index < t);
      if (prefix.length !== t)
        throw new DomainError(
          "INTERNAL",
          `episode ${r.main.id}: its steps before branch state t = ${t} are incomplete`,
        );
      state = {
        taskId: r.task.taskId,
        stateHash: r.branch.stateHash,
        first: initialObservation(r.task, startingPaths(toTaskSpec(r.task))),
        prefix: prefix.map(({ index: _index, ...turn }) => turn),
        continuations: [],
      };
      states.set(key, state);
    }
    const c = r.continuation;
    state.continuations.push({
      episodeId: c.id,
      policyName: c.policyName,
      seed: c.seed,
      verdict: c.verdict,
      failingTests: c.grade.tests.filter((x) => x.outcome === "failed" || x.outcome === "error").map((x) => x.id),
      submittedBy: c.submittedBy,
      // Neither label rests on an in-process verdict (forgeable by the code it grades).
      trusted: trainsOn(c.grade.isolation) && trainsOn(r.task.gradingIsolation),
      turns: own.map(({ index: _index, ...turn }) => turn),
    });
  }
  return [...states.values()];
}
