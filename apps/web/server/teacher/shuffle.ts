import { DomainError, derivedName, sampleHash, sftLine } from "@agentlab/core";
import { allDatasetSamples, childDatasetNamed, getDataset, type DatasetRow } from "@agentlab/db";
import type { Services } from "../services";
import { writeSnapshot, type Built } from "./datasets";

// The negative control of a data study: the same train prompts, each answered with ANOTHER
// sample's answer (a rotation by a seeded offset, skipping rows whose answer is the same, so no
// prompt keeps its answer). An adapter trained on it sees the answer format and the same
// supervised tokens (a permutation of the answers) but never the right repair for a prompt.
// The child records quality "shuffled_control" and is written once per (parent, seed).

export async function shuffleAnswers(
  services: Services,
  input: { datasetId: string; seed: number; createdBy: string | null },
): Promise<DatasetRow> {
  const ds = await getDataset(services.db, input.datasetId);
  if (!ds) throw new DomainError("NOT_FOUND", "no such dataset");
  const name = derivedName(ds.name, ` (answers shuffled across tasks, seed ${input.seed}: control)`);
  const existing = await childDatasetNamed(services.db, ds.id, name);
  if (existing) return existing;
  const rows = (await allDatasetSamples(services.db, ds.id)).map((r) => r.sample);
  if (rows.length < 2)
    throw new DomainError("PRECONDITION_FAILED", `dataset "${ds.name}": a shuffled control needs at least 2 samples`);
  // Single-shot samples only: an episode's turns answer each other and cannot be swapped whole.
  const single = rows.find(
    (r) => r.messages.at(-1)?.role !== "assistant" || r.messages.filter((m) => m.role === "assistant").length !== 1,
  );
  if (single)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `dataset "${ds.name}" sample ${single.ordinal} (task ${single.taskKey}) is not one prompt and one answer: only single-shot samples can be shuffled`,
    );
  // Checked above: every sample's last message is its one answer.
  const text = (r: (typeof rows)[number]) => r.messages.at(-1)?.content;
  const offset = 1 + (input.seed % (rows.length - 1));
  const built: Built[] = rows.map((r, i) => {
    // The next row from the offset on whose answer differs: tasks of one shape can share their
    // fix, and a shuffled sample must not keep the right answer by landing on one of them.
    let k = offset;
    while (k < offset + rows.length && text(rows[(i + k) % rows.length] ?? r) === text(r)) k++;
    const other = rows[(i + k) % rows.length] ?? r;
    if (text(other) === text(r))
      throw new DomainError(
        "PRECONDITION_FAILED",
        `dataset "${ds.name}": a shuffled control needs samples with different answers`,
      );
    const sample = { messages: [...r.messages.slice(0, -1), ...other.messages.slice(-1)] };
    return { ...r, ordinal: 0, hash: sampleHash(sample), messages: sample.messages, line: sftLine(sample) };
  });
  return writeSnapshot(
    services,
    {
      name,
      splitId: ds.splitId,
      // Not the parent's experiment's data: an experiment's own snapshots are found by its id.
      experimentId: null,
      sourceCollectionIds: ds.sourceCollectionIds,
      parentId: ds.id,
      createdBy: input.createdBy,
      promptHash: ds.promptHash,
      quality: "shuffled_control",
    },
    built,
  );
}
