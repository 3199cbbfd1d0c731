import type { Capabilities } from "../protocol/capabilities";
import { SANDBOXED_JOB_TYPES, type JobType, type SandboxBackend } from "./schemas";

// "Why is it stuck": the same rules as the claim (packages/db claimJob), run against the agents
// that are online, to say in words why queued jobs have nobody to run them and what fixes it.
// A newcomer whose sandbox self-test failed otherwise sees a green, idle agent and a job that
// "requires any agent", and thinks the lab hung.

export type JobNeeds = {
  type: JobType;
  labels: readonly string[];
  gpus: number;
  gpuMemoryMb: number;
  sandbox: SandboxBackend | null;
  /** A GPU job that may share its GPUs; without it the claim waits for GPUs no other GPU job holds. */
  gpuShare?: boolean;
};

export type AgentOffer = {
  name: string;
  online: boolean;
  revoked: boolean;
  drain: boolean;
  labels: readonly string[];
  capabilities: Capabilities | null;
};

export type Unclaimable = { reason: string; fix: string };

export const INSTALL_BWRAP = "sudo apt-get install -y bubblewrap";
const BWRAP_MISSING = /spawn bwrap ENOENT|bwrap(: command)? not found|bubblewrap[^.;]*(missing|not installed)/i;
/** Whether a failed self-test's detail says the bwrap binary itself is missing. */
export const bwrapMissing = (detail: string): boolean => BWRAP_MISSING.test(detail);

const needsSandbox = (n: JobNeeds) => SANDBOXED_JOB_TYPES.includes(n.type) || n.sandbox !== null;

/** The job's real requirement, as the claim applies it. */
export function requirementText(n: JobNeeds): string {
  const parts: string[] = [];
  if (needsSandbox(n))
    parts.push(n.sandbox ? `a passing ${n.sandbox} sandbox self-test` : "a passing sandbox self-test");
  if (n.type === "shell") parts.push("the shell-jobs opt-in (--allow-shell-jobs and AGENTLAB_ALLOW_SHELL_JOBS=1)");
  if (n.labels.length) parts.push(`label${n.labels.length > 1 ? "s" : ""} ${n.labels.join(", ")}`);
  if (n.gpus > 0)
    parts.push(
      `${n.gpus} GPU${n.gpus > 1 ? "s" : ""}${n.gpuMemoryMb > 0 ? ` with ≥ ${n.gpuMemoryMb} MiB each` : ""}${n.gpuShare ? " (shared)" : " no other GPU job holds"}`,
    );
  else if (n.gpuMemoryMb > 0) parts.push(`GPU memory ≥ ${n.gpuMemoryMb} MiB`);
  return parts.length ? `an online agent with ${parts.join("; ")}` : "any online agent";
}

const sandboxOk = (a: AgentOffer, n: JobNeeds) => {
  const s = a.capabilities?.sandbox;
  return !needsSandbox(n) || (s !== undefined && s.selfTestPassed && (n.sandbox === null || s.backend === n.sandbox));
};
const gpuOk = (a: AgentOffer, n: JobNeeds) => {
  const gpus = a.capabilities?.gpus ?? [];
  const minMem = gpus.length ? Math.min(...gpus.map((g) => g.memoryMb)) : 0;
  return gpus.length >= n.gpus && minMem >= n.gpuMemoryMb;
};
const labelsOk = (a: AgentOffer, n: JobNeeds) => {
  const have = new Set([...a.labels, ...(a.capabilities?.labels ?? [])]);
  return n.labels.every((l) => have.has(l));
};
const shellOk = (a: AgentOffer, n: JobNeeds) => n.type !== "shell" || a.capabilities?.shellJobs === true;

const names = (agents: readonly AgentOffer[]) => agents.map((a) => a.name).join(", ");

/** Null when some online agent can claim such a job now; otherwise the first unmet condition and its fix. */
export function whyUnclaimable(n: JobNeeds, agents: readonly AgentOffer[]): Unclaimable | null {
  let pool = agents.filter((a) => a.online && !a.revoked && a.capabilities !== null);
  if (pool.length === 0) {
    return {
      reason: "no agent is online",
      fix: "start one: `npm start` runs a local agent (unless AGENTLAB_LOCAL_AGENT=0); on another machine enroll an agent (Agents page) and run `agentlab-agent run`",
    };
  }
  const step = (
    keep: (a: AgentOffer) => boolean,
    fail: (left: readonly AgentOffer[]) => Unclaimable,
  ): Unclaimable | null => {
    const next = pool.filter(keep);
    if (next.length === 0) return fail(pool);
    pool = next;
    return null;
  };
  return (
    step(
      (a) => sandboxOk(a, n),
      (left) => {
        const details = left.map(
          (a) =>
            `${a.name}: ${a.capabilities?.sandbox.selfTestPassed ? `passes only with ${a.capabilities.sandbox.backend}` : a.capabilities?.sandbox.detail.trim() || "self-test failed"}`,
        );
        // Only a missing binary gets the install command; other failures (a missing grader
        // directory, no user namespaces) get doctor, which says what it is.
        const missing = left.some((a) => bwrapMissing(a.capabilities?.sandbox.detail ?? ""));
        return {
          reason: `no online agent has a passing ${n.sandbox ?? ""}${n.sandbox ? " " : ""}sandbox self-test (${details.join("; ")})`,
          fix: `${missing ? `install bubblewrap on the agent's machine (\`${INSTALL_BWRAP}\`), then ` : "fix the sandbox on the agent's machine (`agentlab-agent doctor` says what is missing), then "}re-run the self-test from the Agents page`,
        };
      },
    ) ??
    step(
      (a) => shellOk(a, n),
      (left) => ({
        reason: `no online agent accepts shell jobs (${names(left)} did not opt in, or is not registered for them)`,
        fix: "an admin registers the agent for shell jobs (agents.register, or an enrollment token with shell jobs), and it runs with `agentlab-agent run --allow-shell-jobs` and AGENTLAB_ALLOW_SHELL_JOBS=1 (its commands run outside the sandbox)",
      }),
    ) ??
    step(
      (a) => labelsOk(a, n),
      () => ({
        reason: `no online agent has the label${n.labels.length > 1 ? "s" : ""} ${n.labels.join(", ")}`,
        fix: "enroll an agent with these labels (Agents page; or AGENTLAB_LABELS set at its first start), or have an admin register them (agents.register)",
      }),
    ) ??
    step(
      (a) => gpuOk(a, n),
      () => ({
        reason: `no online agent has ${n.gpus} GPU${n.gpus === 1 ? "" : "s"}${n.gpuMemoryMb ? ` with ≥ ${n.gpuMemoryMb} MiB` : ""}`,
        fix: "run an agent on a machine with such GPUs (`agentlab-agent doctor` there shows what it detects)",
      }),
    ) ??
    step(
      (a) => !a.drain,
      (left) => ({
        reason: `every agent that could run it is draining (${names(left)})`,
        fix: "turn drain off (restart the agent without --drain) or add an agent",
      }),
    )
  );
}
