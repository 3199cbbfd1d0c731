import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { SandboxBackend } from "@agentlab/core";
import { selfTest } from "./sandbox/selftest";
import type { SandboxConfig } from "./sandbox/types";

export type SandboxStatus = { backend: SandboxBackend; selfTestPassed: boolean; detail: string };

export const DEFAULT_GRADER_DIR = fileURLToPath(new URL("../grader", import.meta.url));

export function sandboxConfig(opts: {
  backend: SandboxBackend;
  graderDir?: string;
  uid: number;
  stateDir: string;
  candidateTemplate?: boolean;
}): SandboxConfig {
  return {
    backend: opts.backend,
    graderDir: opts.graderDir ?? DEFAULT_GRADER_DIR,
    uid: opts.uid,
    gid: opts.uid,
    scratchDir: join(opts.stateDir, "scratch"),
    candidateTemplate: opts.candidateTemplate ?? true,
  };
}

/** Runs the backend's escape probes; the agent grades only when they all fail to escape. */
export async function sandboxStatus(cfg: SandboxConfig): Promise<SandboxStatus> {
  const st = await selfTest(cfg).catch((err: unknown) => ({
    ok: false,
    detail: `self-test could not run: ${err instanceof Error ? err.message : String(err)}`,
  }));
  return { backend: cfg.backend, selfTestPassed: st.ok, detail: st.detail };
}
