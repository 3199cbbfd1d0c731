import type { SandboxBackend } from "@agentlab/core";

export type { SandboxBackend };

export type SandboxLimits = {
  wallTimeoutS: number;
  cpuSeconds: number;
  memoryMb: number;
  pids: number;
  openFiles: number;
  /** Size of the fresh tmpfs workspace and the largest file a process may write. */
  tmpfsMb: number;
  /** Per stream; what is beyond it is dropped and `outputTruncated` is set. */
  maxOutputBytes: number;
};

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  wallTimeoutS: 10,
  cpuSeconds: 10,
  memoryMb: 512,
  pids: 64,
  openFiles: 256,
  tmpfsMb: 64,
  maxOutputBytes: 64 << 10,
};

export type SandboxResult = {
  backend: SandboxBackend;
  unsandboxed: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  outputTruncated: boolean;
  stdout: string;
  stderr: string;
  peakMemoryKb: number | null;
  cpuTimeMs: number | null;
  wallTimeMs: number;
  /** What the cgroup saw: a pid or memory limit that was hit. */
  limitEvents: string[];
};

/** Where the sandbox finds its fixed inputs; the agent's env.ts decides, tests pass their own. */
export type SandboxConfig = {
  backend: SandboxBackend;
  /** Directory with runner.py, pytest.ini and .venv (apps/agent/grader). */
  graderDir: string;
  /** Host uid/gid the sandbox runs as (an unprivileged account; 65534 = nobody). */
  uid: number;
  gid: number;
  /** Parent for per-run scratch directories of the process backend. */
  scratchDir: string;
  /** false: never create cgroups (what an agent without root sees); rlimits must then hold. */
  cgroups?: boolean;
  /** false: every candidate starts cold (runner.py --no-candidate-template). */
  candidateTemplate?: boolean;
};
