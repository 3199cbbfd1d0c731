import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { run } from "./run";
import { DEFAULT_SANDBOX_LIMITS, type SandboxConfig } from "./types";

// The agent runs this at start and refuses to grade when it fails (brief §5). Each probe is a
// known escape; the sandboxed script reports which ones worked. Not being able to run the probe
// at all is a failure too.

const PROBE = String.raw`
import json, os, socket, ctypes
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
print(json.dumps(r))
`;

export type SelfTestResult = { ok: boolean; sandboxed: boolean; detail: string; escapes: string[] };

export async function selfTest(cfg: SandboxConfig): Promise<SelfTestResult> {
  if (cfg.backend === "process") {
    return { ok: true, sandboxed: false, detail: "process backend: no isolation, every result is marked unsandboxed", escapes: [] };
  }
  const dir = mkdtempSync(join(tmpdir(), "agentlab-selftest-"));
  try {
    writeFileSync(join(dir, "probe.py"), PROBE.replace("HOST_DIR", JSON.stringify(cfg.graderDir.replace(/\/apps\/agent\/grader$/, "") || "/")));
    const r = await run(cfg, dir, ["/usr/bin/python3", "-I", "probe.py"], { ...DEFAULT_SANDBOX_LIMITS, wallTimeoutS: 20 });
    if (r.exitCode !== 0) return { ok: false, sandboxed: true, detail: `probe did not run (exit ${String(r.exitCode ?? r.signal)}): ${r.stderr.slice(-300)}`, escapes: [] };
    const results = JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}") as Record<string, boolean>;
    const escapes = Object.entries(results).filter(([, v]) => v).map(([k]) => k);
    return { ok: escapes.length === 0 && Object.keys(results).length >= 9, sandboxed: true, detail: escapes.length ? `escapes: ${escapes.join(", ")}` : "all escape probes contained", escapes };
  } catch (e) {
    return { ok: false, sandboxed: true, detail: `self-test error: ${e instanceof Error ? e.message : String(e)}`, escapes: [] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
