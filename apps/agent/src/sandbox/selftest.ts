import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TaskSpec } from "@agentlab/core";
import { Grader } from "../grading/grader";
import { KEYRING_REACHABLE, probeKernelState } from "./kernel-probe";
import { run } from "./run";
import { DEFAULT_SANDBOX_LIMITS, type SandboxConfig } from "./types";

// The agent runs this at start and refuses to grade when it fails (brief §5). Each probe is a
// known escape; the sandboxed script reports which ones worked. Not being able to run the probe
// at all is a failure too. Then the limits: a candidate, graded like any other, tries to fork
// more processes and allocate more memory than its limits allow; a limit that does not hold
// (no writable cgroup and no working fallback) fails the self-test, so the agent never grades
// unbounded code. A baseline test (a few processes, a little memory) must pass, or the probe
// itself is broken and proves nothing.

const PROBE = String.raw`
import json, os, socket, ctypes
KEYRING_REACHABLE
r = {}
def attempt(name, fn):
    try:
        fn(); r[name] = True
    except Exception:
        r[name] = False
attempt("read_shadow", lambda: open("/etc/shadow").read())
attempt("see_host_root_home", lambda: os.listdir("/root"))
attempt("see_agent_state", lambda: os.listdir(HOST_DIR))
attempt("write_usr", lambda: open("/usr/agentlab-escape", "w").write("x"))
def net():
    s = socket.socket(); s.settimeout(1); s.connect(("127.0.0.1", 5432))
attempt("network", net)
def userns():
    if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0: raise OSError()
attempt("new_user_namespace", userns)
r["root_uid"] = os.getuid() == 0 or os.geteuid() == 0
r["capabilities"] = [l for l in open("/proc/self/status") if l.startswith("CapEff")][0].split()[1] != "0000000000000000"
r["env_leak"] = any(k.startswith("AGENTLAB") or "SECRET" in k or "TOKEN" in k for k in os.environ)
r[CONTROL] = keyring_reachable()
print(json.dumps(r))
`;
// Not an escape: this plain sandbox has no seccomp filter, so the keyring answering here is the
// positive control of the graded kernel-state probe.
const CONTROL = "keyring_control";

export type LimitReport = { processes: boolean; memory: boolean; detail: string };
export type SelfTestResult = {
  ok: boolean;
  sandboxed: boolean;
  detail: string;
  escapes: string[];
  limits?: LimitReport;
};

const PROBE_LIMITS = { pids: 32, memoryMb: 128, wallTimeoutS: 20, testTimeoutS: 15 };
const OVER = { procs: 96, memoryMb: 1024 };
const LIMIT_PROBE = `import os, time
def procs(n):
    made = 0
    for _ in range(n):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        made += 1
    return made
def memory(mb):
    blocks = []
    try:
        for _ in range(mb // 16):
            b = bytearray(16 << 20)
            b[::4096] = b"\\x01" * len(range(0, len(b), 4096))
            blocks.append(b)
    except MemoryError:
        pass
    return 16 * len(blocks)
`;
const limitTask = (): TaskSpec => ({
  id: "agentlab-selftest-limits",
  source_group: "agentlab-selftest",
  language: "python",
  instruction: "",
  metadata: {},
  files: [{ path: "probe.py", role: "main", content: LIMIT_PROBE }],
  public_tests: [
    {
      path: "test_baseline.py",
      content:
        "from probe import procs, memory\n\ndef test_baseline():\n    assert procs(4) == 4\n    assert memory(32) == 32\n",
    },
  ],
  hidden_tests: [
    {
      path: "test_procs.py",
      content: `from probe import procs\n\ndef test_procs():\n    assert procs(${OVER.procs}) == ${OVER.procs}\n`,
    },
    {
      path: "test_memory.py",
      content: `from probe import memory\n\ndef test_memory():\n    assert memory(${OVER.memoryMb}) == ${OVER.memoryMb}\n`,
    },
  ],
  reference: [{ path: "probe.py", content: LIMIT_PROBE }],
});

/** Do the process and memory limits hold for a graded candidate? (Each probe runs in its own grade.) */
export async function probeLimits(cfg: SandboxConfig, limits: Partial<typeof PROBE_LIMITS> = {}): Promise<LimitReport> {
  const grader = new Grader(cfg, { workers: 1, limits: { ...PROBE_LIMITS, ...limits } });
  try {
    const task = limitTask();
    const r = await grader.grade(task, task.reference, { expectedIds: null });
    const outcome = (id: string) => r.tests.find((t) => t.id === id)?.outcome ?? "missing";
    if (outcome("test_baseline::test_baseline") !== "passed") {
      return {
        processes: false,
        memory: false,
        detail: `limit probe broken (${r.verdict}: ${r.reasons.slice(0, 2).join("; ")})`,
      };
    }
    const processes = outcome("test_procs::test_procs") !== "passed";
    const memory = outcome("test_memory::test_memory") !== "passed";
    const held = [processes ? "processes" : null, memory ? "memory" : null].filter(Boolean).join(", ") || "none";
    const missing = [
      processes ? null : `processes (forked ${OVER.procs} under a limit of ${PROBE_LIMITS.pids})`,
      memory ? null : `memory (allocated ${OVER.memoryMb} MB under ${PROBE_LIMITS.memoryMb} MB)`,
    ].filter(Boolean);
    return {
      processes,
      memory,
      detail: missing.length ? `limits NOT enforced: ${missing.join("; ")}` : `limits enforced: ${held}`,
    };
  } finally {
    grader.close();
  }
}

export async function selfTest(cfg: SandboxConfig): Promise<SelfTestResult> {
  if (cfg.backend === "process") {
    return {
      ok: true,
      sandboxed: false,
      detail: "process backend: no isolation, every result is marked unsandboxed",
      escapes: [],
    };
  }
  const dir = mkdtempSync(join(tmpdir(), "agentlab-selftest-"));
  try {
    writeFileSync(
      join(dir, "probe.py"),
      PROBE.replace("KEYRING_REACHABLE", KEYRING_REACHABLE)
        .replace("CONTROL", JSON.stringify(CONTROL))
        .replace("HOST_DIR", JSON.stringify(cfg.graderDir.replace(/\/apps\/agent\/grader$/, "") || "/")),
    );
    const r = await run(cfg, dir, ["/usr/bin/python3", "-I", "probe.py"], {
      ...DEFAULT_SANDBOX_LIMITS,
      wallTimeoutS: 20,
    });
    if (r.exitCode !== 0)
      return {
        ok: false,
        sandboxed: true,
        detail: `probe did not run (exit ${String(r.exitCode ?? r.signal)}): ${r.stderr.slice(-300)}`,
        escapes: [],
      };
    const results = JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}") as Record<string, boolean>;
    const escapes = Object.entries(results)
      .filter(([k, v]) => v && k !== CONTROL)
      .map(([k]) => k);
    const contained = escapes.length === 0 && Object.keys(results).length >= 10;
    if (!contained)
      return {
        ok: false,
        sandboxed: true,
        detail: escapes.length ? `escapes: ${escapes.join(", ")}` : "escape probe incomplete",
        escapes,
      };
    const limits = await probeLimits(cfg);
    // Without a reachable keyring in the plain sandbox (a kernel without keys) there is nothing to filter.
    const kernel = results[CONTROL]
      ? await probeKernelState(cfg)
      : { ok: true, detail: "no kernel keyring on this machine" };
    const ok = limits.processes && limits.memory && kernel.ok;
    return {
      ok,
      sandboxed: true,
      detail: `all escape probes contained; ${limits.detail}; ${kernel.detail}`,
      escapes: kernel.ok ? escapes : [...escapes, "kernel_keyring"],
      limits,
    };
  } catch (e) {
    return {
      ok: false,
      sandboxed: true,
      detail: `self-test error: ${e instanceof Error ? e.message : String(e)}`,
      escapes: [],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
