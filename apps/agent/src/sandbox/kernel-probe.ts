import type { TaskSpec } from "@agentlab/core";
import { Grader } from "../grading/grader";
import type { SandboxConfig } from "./types";

// Kernel state that namespaces do not separate: every process of a warm sandbox shares its user
// namespace's keyrings, so one candidate could leave a key that a later one reads. The judge and
// the candidate install a seccomp filter against it (apps/agent/grader/agentlab_grader/seccomp.py);
// this grade proves it holds on this machine, from the candidate process and from the judge
// process (the test module itself). Its positive control is the self-test's plain sandbox run,
// where the same call must succeed: a keyring that is unreachable everywhere proves nothing.

/** Python: True when the user keyring answers keyctl (x86_64 and aarch64 numbers). */
export const KEYRING_REACHABLE = String.raw`
import ctypes, platform
def keyring_reachable():
    nr = {"x86_64": 250, "aarch64": 219}.get(platform.machine())
    if nr is None:
        return False
    return ctypes.CDLL(None, use_errno=True).syscall(nr, 0, -4, 0) >= 0
`;

const task = (): TaskSpec => ({
  id: "agentlab-selftest-kernel-state",
  source_group: "agentlab-selftest",
  language: "python",
  instruction: "",
  metadata: {},
  files: [{ path: "probe.py", role: "main", content: KEYRING_REACHABLE }],
  public_tests: [
    {
      path: "test_kernel_state.py",
      content: `${KEYRING_REACHABLE}\nfrom probe import keyring_reachable as candidate_reachable\n\ndef test_candidate():\n    assert candidate_reachable() is False\n\ndef test_judge():\n    assert keyring_reachable() is False\n`,
    },
  ],
  hidden_tests: [],
  reference: [{ path: "probe.py", content: KEYRING_REACHABLE }],
});

export type KernelStateReport = { ok: boolean; detail: string };

/** Grades the probe in the judge: both tests pass only when neither process reaches the keyring. */
export async function probeKernelState(cfg: SandboxConfig): Promise<KernelStateReport> {
  const grader = new Grader(cfg, { workers: 1, limits: { wallTimeoutS: 20, testTimeoutS: 15 } });
  try {
    const t = task();
    const r = await grader.grade(t, t.reference, { expectedIds: null });
    const outcome = (id: string) => r.tests.find((x) => x.id === id)?.outcome ?? "missing";
    const candidate = outcome("test_kernel_state::test_candidate") === "passed";
    const judge = outcome("test_kernel_state::test_judge") === "passed";
    if (candidate && judge) return { ok: true, detail: "keyring unreachable from judge and candidate" };
    const open = [candidate ? null : "candidate", judge ? null : "judge"].filter(Boolean).join(" and ");
    return {
      ok: false,
      detail: `keyring reachable from the ${open} (${r.verdict}: ${r.reasons.slice(0, 2).join("; ")})`,
    };
  } finally {
    grader.close();
  }
}
