import { randomUUID } from "node:crypto";
import type { JobPayloadInput, JobResult, TokenizeSummary } from "@agentlab/core";

// The smallest payloads and results that satisfy their job type's contract, for tests about routing
// and lifecycle rather than about what the job computes. A fake handler's success must fit its
// type's result contract: the server refuses one that does not at receipt (an infra_error).

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

/** `summary`: fields to set, e.g. a free-text one carrying a mark the test reads back from `jobs.result`. */
export const tokenizeResult = (summary: Partial<TokenizeSummary> = {}): JobResult<"tokenize"> => ({
  tokenize: {
    samples: 0,
    supervised_tokens: 0,
    total_tokens: 0,
    max_tokens: 0,
    per_sample_supervised: [],
    preflight_error: null,
    eot_token: "<|im_end|>",
    max_length: null,
    dataset_sha256: "0".repeat(64),
    chat_template_sha256: "c".repeat(64),
    ...summary,
  },
});

/** A passing grade of gradePayload()'s task. */
export const gradeResult = (): JobResult<"grade"> => ({
  verdict: "pass",
  backend: "process",
  isolation: "judge",
  unsandboxed: true,
  graderVersion: "test",
  reasons: [],
  tests: [],
  ignoredCandidatePaths: [],
  exitCode: 0,
  signal: null,
  stdoutTail: "",
  stderrTail: "",
  candidateOutputTail: "",
  wallTimeMs: 1,
  cpuTimeMs: null,
  peakMemoryKb: null,
  expectedTestIds: [],
});

export const shellResult = (): JobResult<"shell"> => ({ outputTruncated: false });
