import type { SandboxBackend } from "@agentlab/core";

export type SandboxStatus = { backend: SandboxBackend; selfTestPassed: boolean; detail: string };

// Filled in by the grading sandbox (apps/agent/src/sandbox): until its self-test runs here,
// the agent reports the backend as untested, and the server gives it no grading work.
export async function sandboxStatus(backend: SandboxBackend): Promise<SandboxStatus> {
  return { backend, selfTestPassed: false, detail: "sandbox self-test not available in this build" };
}
