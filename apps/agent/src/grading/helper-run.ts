import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GRADER_MOUNT } from "../sandbox/bwrap";
import { run } from "../sandbox/run";
import { DEFAULT_SANDBOX_LIMITS, type SandboxConfig } from "../sandbox/types";

// One of the grader's small Python helpers (mutate.py, cross_file.py) run once in the sandbox with
// a request on stdin. Task files may be hostile (an uploaded pool), so even parsing them happens
// inside the sandbox, with the grader's own interpreter.

export async function runGraderHelper(
  cfg: SandboxConfig,
  script: string,
  request: string,
  opts: { what: string; wallTimeoutS: number; maxOutputBytes: number },
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "agentlab-helper-"));
  try {
    writeFileSync(join(dir, "request.json"), request);
    const base = cfg.backend === "bwrap" ? GRADER_MOUNT : cfg.graderDir;
    const r = await run(
      cfg,
      dir,
      ["/bin/sh", "-c", `exec "$0" -I "$1" < request.json`, join(base, ".venv/bin/python"), join(base, script)],
      { ...DEFAULT_SANDBOX_LIMITS, wallTimeoutS: opts.wallTimeoutS, maxOutputBytes: opts.maxOutputBytes },
    );
    if (r.exitCode !== 0)
      throw new Error(`${opts.what} failed (${String(r.exitCode ?? r.signal)}): ${r.stderr.slice(-500)}`);
    return r.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
