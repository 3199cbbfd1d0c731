import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

// The only place the agent reads process.env.
const Env = z.object({
  AGENTLAB_AGENT_HOME: z
    .string()
    .default(join(process.env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "agentlab-agent")),
  AGENTLAB_SERVER: z.string().url().optional(),
  AGENTLAB_PYTHON: z.string().optional(),
  // The vLLM venv's interpreter (default apps/agent/python/vllm/.venv/bin/python); the trainer reads it too.
  AGENTLAB_VLLM_PYTHON: z.string().optional(),
  AGENTLAB_SANDBOX: z.enum(["bwrap", "process"]).default("bwrap"),
  // The unprivileged host account sandboxed code runs as (65534 = nobody).
  AGENTLAB_SANDBOX_UID: z.coerce.number().int().min(1).default(65534),
  AGENTLAB_GRADER_DIR: z.string().optional(),
  // 0: candidates never fork from a per-task template that imported the task's support modules
  // (docs/grading.md: the template imports task-author code while it still holds CAP_SYS_ADMIN).
  AGENTLAB_CANDIDATE_TEMPLATE: z.enum(["0", "1"]).default("1"),
  // Jobs run at once on this box; grading scales with cores, training wants the box alone.
  AGENTLAB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  AGENTLAB_CANCEL_GRACE_MS: z.coerce.number().int().min(0).default(5000),
  AGENTLAB_LABELS: z.string().default(""),
  // Half of the opt-in to `shell` jobs (unsandboxed commands); `run --allow-shell-jobs` is the other.
  AGENTLAB_ALLOW_SHELL_JOBS: z.enum(["0", "1"]).default("0"),
  // A train job with world_size N > 1 needs N GPUs here; "1" runs it as N gloo CPU processes
  // instead (the multi-rank path on a box without GPUs, for tests; slower than one).
  AGENTLAB_TRAIN_CPU_RANKS: z.enum(["0", "1"]).default("0"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});
export type AgentEnv = z.infer<typeof Env>;

export function loadAgentEnv(source: Record<string, string | undefined> = process.env): AgentEnv {
  const parsed = Env.safeParse(source);
  if (!parsed.success)
    throw new Error(
      `invalid environment: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  return parsed.data;
}

/** This agent's own environment, for a child that must see it with a few variables changed (GPU pinning). */
export const inheritedEnv = (): NodeJS.ProcessEnv => process.env;
