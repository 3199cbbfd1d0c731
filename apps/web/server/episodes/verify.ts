import {
  canonicalJson,
  DomainError,
  sha256Hex,
  stateHash,
  transcriptHashOf,
  treeHash,
  type EpisodeJobResult,
  type EpisodeRun,
  type EpisodeStep,
} from "@agentlab/core";

// An episode job's result is checked before it is stored: every content address must be the
// hash of what it names (a blob of its text, a tree of its manifest, a state of its fields, a
// step's result of its canonical JSON), every reference must resolve inside the result, and each
// run's transcript must chain to the states it claims. Data that fails is refused with the field
// named; nothing of it is written.

const bad = (field: string, why: string): never => {
  throw new DomainError("BAD_REQUEST", `episode result: ${field} ${why}`);
};

export function verifyEpisodeResult(r: EpisodeJobResult): void {
  for (const [h, content] of Object.entries(r.blobs))
    if (sha256Hex(content) !== h) bad(`blobs.${h}`, "does not hash to its address");
  for (const [h, manifest] of Object.entries(r.snapshots)) {
    if (treeHash(manifest) !== h) bad(`snapshots.${h}`, "does not hash to its address");
    for (const f of manifest.files)
      if (!(f.sha256 in r.blobs)) bad(`snapshots.${h}`, `names a missing blob for ${f.path}`);
  }
  const states = new Map(r.states.map((s) => [s.hash, s]));
  for (const s of r.states) {
    const { hash, ...fields } = s;
    if (stateHash(fields) !== hash) bad(`states.${hash}`, "does not hash to its address");
    if (!(s.treeHash in r.snapshots)) bad(`states.${hash}`, "names a missing snapshot");
  }
  const mainSteps = r.episode.steps;
  verifyRun(r, "episode", r.episode, [], states);
  for (const v of r.values) if (!states.has(v.state)) bad(`values.${v.state}`, "names a missing state");
  for (const [i, b] of r.branches.entries()) {
    const from = b.run.fromState ? states.get(b.run.fromState) : undefined;
    if (!from) bad(`branches.${i}.run.fromState`, "names no stored state");
    else if (!r.values.some((v) => v.state === from.hash)) bad(`branches.${i}.run.fromState`, "is not a branch point");
    verifyRun(r, `branches.${i}.run`, b.run, mainSteps.slice(0, from?.t ?? 0), states);
  }
}

function verifyRun(
  r: EpisodeJobResult,
  field: string,
  run: EpisodeRun,
  prefix: readonly EpisodeStep[],
  states: Map<string, EpisodeJobResult["states"][number]>,
): void {
  for (const [i, s] of run.steps.entries()) {
    if (sha256Hex(canonicalJson(s.result)) !== s.resultHash)
      bad(`${field}.steps.${i}.resultHash`, "is not its result's");
    for (const h of [s.snapshotBefore, s.snapshotAfter])
      if (!(h in r.snapshots)) bad(`${field}.steps.${i}`, "names a missing snapshot");
    if (s.index !== prefix.length + i) bad(`${field}.steps.${i}.index`, `is ${s.index}, not ${prefix.length + i}`);
  }
  const final = states.get(run.finalState);
  if (!final) return bad(`${field}.finalState`, "names no stored state");
  const transcript = [...prefix, ...run.steps];
  if (final.t !== transcript.length || final.transcriptHash !== transcriptHashOf(transcript))
    bad(`${field}.finalState`, "does not chain to the run's transcript");
  for (const p of run.branchPoints) if (!states.has(p.state)) bad(`${field}.branchPoints`, "names a missing state");
}
