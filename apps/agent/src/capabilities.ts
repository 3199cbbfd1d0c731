import { execFile } from "node:child_process";
import { cpus, platform, release, totalmem } from "node:os";
import { promisify } from "node:util";
import type { Capabilities, GpuInfo, SandboxBackend } from "@agentlab/core";
import { pythonDoctor, type PythonDoctor } from "./trainer/python";

const run = promisify(execFile);
export const AGENT_VERSION = "0.1.0";

/** GPUs as nvidia-smi reports them; none when the tool is absent. */
export async function detectGpus(): Promise<GpuInfo[]> {
  const out = await run(
    "nvidia-smi",
    ["--query-gpu=name,memory.total,uuid,driver_version", "--format=csv,noheader,nounits"],
    { timeout: 10_000 },
  ).catch(() => null);
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

export async function collectCapabilities(opts: {
  python: string | null;
  sandbox: { backend: SandboxBackend; selfTestPassed: boolean; detail: string };
  labels: string[];
  shellJobs?: boolean;
}): Promise<Capabilities & { pythonStack: PythonDoctor | null }> {
  const [gpus, stack] = await Promise.all([
    detectGpus(),
    opts.python ? pythonDoctor(opts.python) : Promise.resolve(null),
  ]);
  return {
    agentVersion: AGENT_VERSION,
    os: `${platform()} ${release()}`,
    cpuCores: cpus().length,
    ramMb: Math.round(totalmem() / 1024 / 1024),
    gpus,
    python: stack?.python ?? null,
    torch: stack?.torch ?? null,
    cuda: stack?.cuda ?? null,
    sandbox: opts.sandbox,
    labels: opts.labels,
    shellJobs: opts.shellJobs === true,
    pythonStack: stack,
  };
}
