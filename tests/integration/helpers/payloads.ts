import { randomUUID } from "node:crypto";
import type { JobPayloadInput } from "@agentlab/core";

// The smallest payloads that satisfy their job type's contract, for tests about routing and
// lifecycle rather than about what the job computes.

export const gradePayload = (): JobPayloadInput<"grade"> => ({
  task: {
    id: "routing/t0",
    source_group: "routing",
    language: "python",
    instruction: "Fix f.",
    files: [{ path: "solution.py", role: "main", content: "def f():\n    return 0\n" }],
    public_tests: [],
    hidden_tests: [
      { path: "test_hidden.py", content: "from solution import f\n\ndef test_f():\n    assert f() == 1\n" },
    ],
    reference: [{ path: "solution.py", content: "def f():\n    return 1\n" }],
  },
  candidate: [{ path: "solution.py", content: "def f():\n    return 1\n" }],
});

export const tokenizePayload = (): JobPayloadInput<"tokenize"> => ({
  datasetId: randomUUID(),
  datasetSha256: "0".repeat(64),
  model: "tiny",
});
