import { describe, expect, it } from "vitest";
import type { EarlierArtifact } from "@agentlab/core";
import { resumePoint } from "./train-resume";

const sha = (c: string) => c.repeat(64);
const adapter = (epoch: number, c: string): EarlierArtifact => ({
  name: `adapter-epoch-${epoch}`,
  kind: "adapter",
  sha256: sha(c),
  meta: { epoch, snapshotSha256: sha("f"), trainLoss: 1, evalLoss: null, step: epoch * 5 },
});
const state = (epoch: number, c: string): EarlierArtifact => ({
  name: `trainer-state-epoch-${epoch}`,
  kind: "trainer_state",
  sha256: sha(c),
  meta: { epoch },
});

describe("resumePoint", () => {
  it("resumes after the last epoch with its state and every adapter before it", () => {
    const p = resumePoint([adapter(1, "a"), state(1, "b"), adapter(2, "c"), state(2, "d"), adapter(3, "e")], 4);
    expect(p?.epoch).toBe(2);
    expect(p?.state.sha256).toBe(sha("d"));
    expect(p?.adapters.map((a) => a.artifact.sha256)).toEqual([sha("a"), sha("c")]);
  });

  it("never resumes after the last epoch, and not past a missing adapter", () => {
    expect(resumePoint([adapter(1, "a"), state(1, "b")], 1)).toBeNull(); // a one-epoch run has nothing to resume
    expect(resumePoint([adapter(2, "c"), state(2, "d")], 3)).toBeNull(); // epoch 1's adapter is missing
    expect(resumePoint([adapter(1, "a")], 3)).toBeNull(); // no state: from step 0
  });

  it("takes the newest upload of an epoch (a second lost attempt re-trained it)", () => {
    const p = resumePoint([adapter(1, "a"), state(1, "b"), adapter(1, "c"), state(1, "d")], 2);
    expect([p?.adapters[0]?.artifact.sha256, p?.state.sha256]).toEqual([sha("c"), sha("d")]);
  });
});
