import type { GradeVerdict } from "../grading/schemas";
import { branchPrompt, continuationText, type TrajectoryTurn } from "../episodes/trajectory-sft";
import { failingLayer, type PairSkip, type PreferencePair } from "./pairs";

// Same-state pairs from episode branches: K continuations ran from one stored state (the start,
// or after a failed public-test run) to the judge's verdict; one that passed and one that failed
// make a pair whose prompt is the transcript to that state (core branchPrompt) and whose answers
// are the two continuations (continuationText). Both sides share the state by construction, so
// the pair holds only what the policy did from there. The labels are the judge's verdicts.

/** The most pairs one state gives: a state with many continuations must not dominate the set. */
export const EPISODE_BRANCH_PAIRS_PER_STATE = 4;

/** One continuation from the state: its own turns only (the transcript to the state is the state's). */
export type BranchContinuation = {
  episodeId: string;
  policyName: string;
  seed: number;
  verdict: GradeVerdict;
  /** Failed or errored hidden/public test ids of its grade. */
  failingTests: readonly string[];
  /** policy: the policy submitted; budget: the environment did, its budget spent. */
  submittedBy: "policy" | "budget";
  /** Graded in the isolated judge (an in-process verdict is forgeable: never a label). */
  trusted: boolean;
  turns: readonly TrajectoryTurn[];
};

export type BranchState = {
  taskId: string;
  stateHash: string;
  /** The environment's first message of the episode. */
  first: string;
  /** The transcript to the state: the turns before it. */
  prefix: readonly TrajectoryTurn[];
  continuations: readonly BranchContinuation[];
};

const bySeed = (a: BranchContinuation, b: BranchContinuation) =>
  a.seed - b.seed || (a.episodeId < b.episodeId ? -1 : a.episodeId > b.episodeId ? 1 : 0);

/**
 * Per state (in task, then state order), the continuations by seed: chosen = the distinct passing
 * answers the policy submitted itself, rejected = the distinct model failures (a budget's submit is
 * a failure of the policy too); each failing answer is paired once, with the passing ones in turn,
 * up to `maxPerState`. A state with no pass or no failure gives no pair; a failing answer with the
 * text of a passing one is no pair (the calls alone do not separate them).
 */
export function episodeBranchPairs(input: { states: readonly BranchState[]; maxPerState?: number }): {
  pairs: PreferencePair[];
  skipped: PairSkip[];
} {
  const max = input.maxPerState ?? EPISODE_BRANCH_PAIRS_PER_STATE;
  const pairs: PreferencePair[] = [];
  const skipped: PairSkip[] = [];
  // One state is one prompt: the same state reached by several episodes (content-addressed, so the
  // same transcript, tree, counters and seed) pools its continuations.
  const byHash = new Map<string, BranchState>();
  for (const s of input.states) {
    const held = byHash.get(s.stateHash);
    if (!held) byHash.set(s.stateHash, s);
    else {
      const known = new Set(held.continuations.map((c) => c.episodeId));
      const more = s.continuations.filter((c) => !known.has(c.episodeId));
      byHash.set(s.stateHash, { ...held, continuations: [...held.continuations, ...more] });
    }
  }
  const states = [...byHash.values()].sort((a, b) =>
    a.taskId !== b.taskId ? (a.taskId < b.taskId ? -1 : 1) : a.stateHash < b.stateHash ? -1 : 1,
  );
  for (const s of states) {
    const rendered = [...s.continuations]
      .filter((c) => c.trusted)
      .sort(bySeed)
      .map((c) => ({ c, text: continuationText(c.turns) }))
      .filter((x) => x.text !== "");
    const passing = distinct(rendered.filter((x) => x.c.verdict === "pass" && x.c.submittedBy === "policy"));
    const passTexts = new Set(passing.map((x) => x.text));
    const failing = distinct(rendered.filter((x) => failingLayer(x.c.verdict) !== null));
    if (passing.length === 0 || failing.length === 0) continue;
    const prompt = branchPrompt(s.first, s.prefix);
    let made = 0;
    for (const [i, r] of failing.entries()) {
      const c = passing[i % passing.length];
      const layer = failingLayer(r.c.verdict);
      if (!c || !layer) continue;
      const where = `${s.stateHash.slice(0, 12)} ${r.c.policyName}#${r.c.seed}`;
      if (passTexts.has(r.text)) {
        skipped.push({ taskId: s.taskId, reason: "same_text", detail: `${where} makes the calls of a passing one` });
        continue;
      }
      if (made >= max) {
        skipped.push({ taskId: s.taskId, reason: "task_cap", detail: `${where}: the state has ${max} pairs` });
        continue;
      }
      made += 1;
      pairs.push({
        // Episode ids, not seeds: continuations of two jobs from one state may share their seeds.
        pairKey: `${s.taskId}:episode_branch:${s.stateHash}:${c.c.episodeId}:${r.c.episodeId}`,
        taskId: s.taskId,
        pairSource: "episode_branch",
        prompt,
        chosenSource: "episode",
        chosenText: c.text,
        rejectedSource: "episode",
        rejectedModelKey: r.c.policyName,
        rejectedSample: r.c.seed,
        rejectedText: r.text,
        rejectedVerdict: r.c.verdict,
        failingLayer: layer,
        failingTests: [...r.c.failingTests],
        weight: 1,
        stateHash: s.stateHash,
        chosenEpisodeId: c.c.episodeId,
        rejectedEpisodeId: r.c.episodeId,
      });
    }
  }
  return { pairs, skipped };
}

/** The first continuation of each distinct answer text, in order. */
function distinct<T extends { text: string }>(xs: readonly T[]): T[] {
  const seen = new Set<string>();
  return xs.filter((x) => (seen.has(x.text) ? false : (seen.add(x.text), true)));
}
