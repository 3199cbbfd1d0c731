import { z } from "zod";
import { SandboxBackend } from "../jobs/schemas";

export const GpuInfo = z.object({
  name: z.string(),
  memoryMb: z.number().int().nonnegative(),
  uuid: z.string(),
  driver: z.string(),
});
export type GpuInfo = z.infer<typeof GpuInfo>;

export const Capabilities = z.object({
  agentVersion: z.string(),
  os: z.string(),
  cpuCores: z.number().int().positive(),
  ramMb: z.number().int().nonnegative(),
  gpus: z.array(GpuInfo).default([]),
  python: z.string().nullable().default(null),
  torch: z.string().nullable().default(null),
  cuda: z.string().nullable().default(null),
  sandbox: z.object({ backend: SandboxBackend, selfTestPassed: z.boolean(), detail: z.string().default("") }),
  labels: z.array(z.string()).default([]),
  /** Whether this agent runs `shell` jobs (unsandboxed commands): only with an explicit opt-in. */
  shellJobs: z.boolean().default(false),
});
export type Capabilities = z.infer<typeof Capabilities>;
