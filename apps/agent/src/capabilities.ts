import { execFile } from "node:child_process";
import { cpus, platform, release, totalmem } from "node:os";
import { promisify } from "node:util";
import type { Capabilities, GpuInfo, SandboxBackend } from "@agentlab/core";

const run = promisify(execFile);
export const AGENT_VERSION = "0.1.0";

/** GPUs as nvidia-smi reports them; none when the tool is absent. */
export async function detectGpus(): Promise<GpuInfo[]> {
  const out = await run("nvidia-smi", ["--query-gpu=name,memory.total,uuid,driver_version", "--format=csv,noheader,nounits"], { timeout: 10_000 }).catch(() => null);
  if (!out) return [];
  return out.stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [name = "", mem = "0", uuid = "", driver = ""] = line.split(",").map((s) => s.trim());
      return { name, memoryMb: Number.parseInt(mem, 10) || 0, uuid, driver };
    });
}

export type PythonInfo = { python: string | null; torch: string | null; cuda: string | null };

export async function detectPython(python: string | null): Promise<PythonInfo> {
  if (!python) return { python: null, torch: null, cuda: null };
  const script = "import json,sys\ntry:\n import torch; t=torch.__version__; c=torch.version.cuda\nexcept Exception: t=None; c=None\nprint(json.dumps({'python': sys.version.split()[0], 'torch': t, 'cuda': c}))";
  const out = await run(python, ["-c", script], { timeout: 60_000 }).catch(() => null);
  if (!out) return { python: null, torch: null, cuda: null };
  return JSON.parse(out.stdout.trim().split("\n").pop() ?? "{}") as PythonInfo;
}

export async function collectCapabilities(opts: { python: string | null; sandbox: { backend: SandboxBackend; selfTestPassed: boolean; detail: string }; labels: string[] }): Promise<Capabilities> {
  const [gpus, py] = await Promise.all([detectGpus(), detectPython(opts.python)]);
  return {
    agentVersion: AGENT_VERSION,
    os: `${platform()} ${release()}`,
    cpuCores: cpus().length,
    ramMb: Math.round(totalmem() / 1024 / 1024),
    gpus,
    ...py,
    sandbox: opts.sandbox,
    labels: opts.labels,
  };
}
