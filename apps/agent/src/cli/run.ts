import { parseArgs } from "node:util";
import { join } from "node:path";
import pino from "pino";
import { loadConfig } from "../config";
import type { AgentEnv } from "../env";
import { findPython } from "../trainer/python";
import { collectCapabilities } from "../capabilities";
import { jobHandlers } from "../jobs";
import { shellJobsAllowed } from "../jobs/shell";
import { Supervisor } from "../supervisor";

import { sandboxConfig, sandboxStatus } from "../sandbox-status";
import { Grader } from "../grading/grader";
import { cpus } from "node:os";

/** Connects, reports capabilities, pulls and runs jobs until SIGINT/SIGTERM. */
export async function runCommand(argv: string[], env: AgentEnv): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { drain: { type: "boolean", default: false }, server: { type: "string" }, "allow-shell-jobs": { type: "boolean", default: false } } });
  const log = pino({ level: env.LOG_LEVEL, base: { app: "agentlab-agent" }, redact: { paths: ["credential", "*.credential", "token"], censor: "[redacted]" } });
  const config = await loadConfig(env.AGENTLAB_AGENT_HOME);
  const python = findPython(env.AGENTLAB_PYTHON);
  const stateDir = join(env.AGENTLAB_AGENT_HOME, "state");
  const sandboxCfg = sandboxConfig({ backend: env.AGENTLAB_SANDBOX, graderDir: env.AGENTLAB_GRADER_DIR, uid: env.AGENTLAB_SANDBOX_UID, stateDir });
  const sandbox = await sandboxStatus(sandboxCfg);
  if (!sandbox.selfTestPassed) log.warn({ sandbox }, "sandbox self-test failed: this agent will not grade");
  const grader = sandbox.selfTestPassed ? new Grader(sandboxCfg, { workers: Math.min(env.AGENTLAB_CONCURRENCY, cpus().length) }) : null;
  const allowShellJobs = shellJobsAllowed(values["allow-shell-jobs"], env.AGENTLAB_ALLOW_SHELL_JOBS);
  if (values["allow-shell-jobs"] !== (env.AGENTLAB_ALLOW_SHELL_JOBS === "1")) log.warn("shell jobs stay disabled: they need both --allow-shell-jobs and AGENTLAB_ALLOW_SHELL_JOBS=1");
  if (allowShellJobs) log.warn("shell jobs enabled: admins can run any command on this machine as this user, outside the sandbox");
  const labels = env.AGENTLAB_LABELS.split(",").map((s) => s.trim()).filter(Boolean);
  const capabilities = await collectCapabilities({ python, sandbox, labels, shellJobs: allowShellJobs });
  const supervisor = new Supervisor({
    serverUrl: values.server ?? config.server,
    credential: config.credential,
    stateDir,
    concurrency: env.AGENTLAB_CONCURRENCY,
    capabilities,
    handlers: jobHandlers({ graceMs: env.AGENTLAB_CANCEL_GRACE_MS, allowShellJobs, grading: grader ? { grader, sandbox: sandboxCfg } : undefined }),
    runtime: { python, sandboxBackend: sandbox.backend, sandboxOk: sandbox.selfTestPassed },
    log,
    drain: values.drain,
  });
  await supervisor.start();
  log.info({ agentId: config.agentId, server: config.server, drain: values.drain }, "agent running");

  // Graceful on the first signal (finish or interrupt the running job, deliver results), forced on the second.
  return new Promise((resolve) => {
    let signals = 0;
    const shutdown = (sig: string) => {
      if (++signals > 1) {
        log.warn("forced shutdown");
        process.exit(1);
      }
      log.info({ sig }, "shutting down");
      supervisor
        .stop(env.AGENTLAB_CANCEL_GRACE_MS)
        .finally(() => grader?.close())
        .then(() => resolve(0), () => resolve(1));
    };
    process.on("SIGINT", () => shutdown("SIGINT"));
    process.on("SIGTERM", () => shutdown("SIGTERM"));
    // Drain: finish the current job and take no new one.
    process.on("SIGUSR2", () => {
      log.info("drain mode on");
      supervisor.setDrain(true);
    });
  });
}
