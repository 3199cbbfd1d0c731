import { JobType, SandboxBackend } from "@agentlab/core/jobs/schemas";
import type { JobNeeds } from "@agentlab/core/jobs/eligibility";

type JobRequirementRow = {
  type: string;
  requiredLabels: string[];
  minGpus: number;
  minGpuMemoryMb: number;
  sandbox: string | null;
  gpuShare?: boolean;
};

/** A job row's requirement as the claim applies it (type included: grade and audit need a sandbox). */
export function jobNeeds(job: JobRequirementRow): JobNeeds {
  const type = JobType.safeParse(job.type);
  const sandbox = SandboxBackend.safeParse(job.sandbox);
  return {
    type: type.success ? type.data : "shell",
    labels: job.requiredLabels,
    gpus: job.minGpus,
    gpuMemoryMb: job.minGpuMemoryMb,
    sandbox: sandbox.success ? sandbox.data : null,
    gpuShare: job.gpuShare ?? false,
  };
}
