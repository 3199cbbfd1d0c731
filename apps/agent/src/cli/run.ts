import { parseArgs } from "node:util";
import { join } from "node:path";
import pino from "pino";
import { loadConfig } from "../config";
import type { AgentEnv } from "../env";
import { findPython } from "../trainer/python";
import { collectCapabilities } from "../capabilities";
import { jobHandlers } from "../jobs";
import { shellJobsAllowed } from "../jobs/shell";
import { EXIT_CREDENTIAL_REFUSED, Supervisor } from "../supervisor";
import { failJobsOnUnhandledRejections } from "../background-failures";

import { sandboxConfig, sandboxStatus } from "../sandbox-status";
import { Grader } from "../grading/grader";
import { cpus } from "node:os";
import { GpuPool } from "../gpu-pool";

/** Connects, reports capabilities, pulls and runs jobs until SIGINT/SIGTERM. */
export async function runCommand(argv: string[], env: AgentEnv): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      drain: { type: "boolean", default: false },
      server: { type: "string" },
      "allow-shell-jobs": { type: "boolean", default: false },
    },
  });
  const log = pino({
    level: env.LOG_LEVEL,
    base: { app: "agentlab-agent" },
    redact: { paths: ["credential", "*.credential", "token"], censor: "[redacted]" },
  });
  const config = await loadConfig(env.AGENTLAB_AGENT_HOME);
  const python = findPython(env.AGENTLAB_PYTHON);
  const stateDir = join(env.AGENTLAB_AGENT_HOME, "state");
  const sandboxCfg = sandboxConfig({
    backend: env.AGENTLAB_SANDBOX,
    graderDir: env.AGENTLAB_GRADER_DIR,
    uid: env.AGENTLAB_SANDBOX_UID,
    stateDir,
    candidateTemplate: env.AGENTLAB_CANDIDATE_TEMPLATE === "1",
  });
  const sandbox = await sandboxStatus(sandboxCfg);
  if (!sandbox.selfTestPassed) log.warn({ sandbox }, "sandbox self-test failed: this agent will not grade");
  const newGrader = () => new Grader(sandboxCfg, { workers: Math.min(env.AGENTLAB_CONCURRENCY, cpus().length) });
  let grader = sandbox.selfTestPassed ? newGrader() : null;
  const allowShellJobs = shellJobsAllowed(values["allow-shell-jobs"], env.AGENTLAB_ALLOW_SHELL_JOBS);
  if (values["allow-shell-jobs"] !== (env.AGENTLAB_ALLOW_SHELL_JOBS === "1"))
    log.warn("shell jobs stay disabled: they need both --allow-shell-jobs and AGENTLAB_ALLOW_SHELL_JOBS=1");
  if (allowShellJobs)
    log.warn("shell jobs enabled: admins can run any command on this machine as this user, outside the sandbox");
  const labels = env.AGENTLAB_LABELS.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const capabilities = await collectCapabilities({ python, sandbox, labels, shellJobs: allowShellJobs });
  const makeHandlers = () =>
    jobHandlers({
      graceMs: env.AGENTLAB_CANCEL_GRACE_MS,
      allowShellJobs,
      grading: grader ? { grader, sandbox: sandboxCfg } : undefined,
      training: { gpus: capabilities.gpus.length, cpuRanks: env.AGENTLAB_TRAIN_CPU_RANKS === "1" },
    });
  // The supervisor reads these per job, so a re-test (below) changes what the next job gets.
  const handlers = makeHandlers();
  // One pool for every claim loop: concurrent GPU jobs get disjoint GPUs (CUDA_VISIBLE_DEVICES).
  const gpus = new GpuPool(capabilities.gpus.length);
  const runtime = { python, sandboxBackend: sandbox.backend, sandboxOk: sandbox.selfTestPassed, gpus };
  // Asked from the Agents page (after installing bubblewrap, say): test again, start grading if it
  // now passes, stop if it no longer does; the supervisor then says hello with the new result.
  const retestSandbox = async () => {
    const st = await sandboxStatus(sandboxCfg);
    if (st.selfTestPassed && !grader) grader = newGrader();
    runtime.sandboxOk = st.selfTestPassed;
    for (const key of Object.keys(handlers)) delete handlers[key];
    Object.assign(handlers, makeHandlers());
    log.info(
      { sandbox: st },
      st.selfTestPassed
        ? "sandbox self-test passed: grading on"
        : "sandbox self-test failed: this agent will not grade",
    );
    return { ...capabilities, sandbox: st };
  };
  const supervisor = new Supervisor({
    serverUrl: values.server ?? config.server,
    credential: config.credential,
    stateDir,
    concurrency: env.AGENTLAB_CONCURRENCY,
    capabilities,
    handlers,
    runtime,
    retestSandbox,
    log,
    drain: values.drain,
    // A handler gets the cancel grace (SIGTERM → SIGKILL of its process group) plus slack to report.
    abandonAfterMs: env.AGENTLAB_CANCEL_GRACE_MS + 2000,
  });
  failJobsOnUnhandledRejections(process, supervisor, log);
  await supervisor.start();
  log.info({ agentId: config.agentId, server: config.server, drain: values.drain }, "agent running");

  // On the first signal the running jobs are interrupted at once (they are requeued; SIGUSR2 drains
  // instead), results are delivered or left in the spool; the second signal forces the exit.
  return new Promise((resolve) => {
    let signals = 0;
    supervisor.onCredentialRefused((err) => {
      // Distinct exit code, so that a service manager (RestartPreventExitStatus=3) stops restarting it.
      console.error(
        `agentlab-agent: ${err.message}. Not retrying; enroll again with a new token to bring this box back.`,
      );
      supervisor
        .stop(0)
        .finally(() => grader?.close())
        .then(
          () => resolve(EXIT_CREDENTIAL_REFUSED),
          () => resolve(EXIT_CREDENTIAL_REFUSED),
        );
    });
    const shutdown = (sig: string) => {
      if (++signals > 1) {
        log.warn("forced shutdown");
        process.exit(1);
      }
      log.info({ sig }, "shutting down");
      supervisor
        .stop(0)
        .finally(() => grader?.close())
        .then(
          () => resolve(0),
          () => resolve(1),
        );
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
