import { parseArgs } from "node:util";
import { configPath, loadConfig } from "../config";
import type { AgentEnv } from "../env";
import { findPython, findVllmPython, pythonDoctor } from "../trainer/python";
import { collectCapabilities } from "../capabilities";
import { join } from "node:path";
import { sandboxConfig, sandboxStatus } from "../sandbox-status";

/** What this box offers and what is missing, for a human (or --json). Exit 1 when something needed is missing. */
export async function doctorCommand(argv: string[], env: AgentEnv): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { json: { type: "boolean", default: false } } });
  const config = await loadConfig(env.AGENTLAB_AGENT_HOME).catch((err: Error) => err);
  const sandbox = await sandboxStatus(
    sandboxConfig({
      backend: env.AGENTLAB_SANDBOX,
      graderDir: env.AGENTLAB_GRADER_DIR,
      uid: env.AGENTLAB_SANDBOX_UID,
      stateDir: join(env.AGENTLAB_AGENT_HOME, "state"),
    }),
  );
  const caps = await collectCapabilities({ python: findPython(env.AGENTLAB_PYTHON), sandbox, labels: [] });
  // The second environment: vLLM's venv (optional; only CUDA boxes have it).
  const vllmPython = findVllmPython(env.AGENTLAB_VLLM_PYTHON);
  const vllmEnv = vllmPython ? { path: vllmPython, ...(await pythonDoctor(vllmPython)) } : null;
  const check = config instanceof Error ? null : await checkServer(config.server, config.credential);
  const server = check ? check.line : "not enrolled";
  const problems = [
    config instanceof Error ? config.message : null,
    check?.problem ?? null,
    sandbox.selfTestPassed ? null : `sandbox ${sandbox.backend}: ${sandbox.detail}`,
    caps.python ? null : "no Python for the trainer (set AGENTLAB_PYTHON or run scripts/setup-python.sh)",
  ].filter((p): p is string => p !== null);
  const report = {
    config:
      config instanceof Error
        ? null
        : { path: configPath(env.AGENTLAB_AGENT_HOME), agentId: config.agentId, server: config.server },
    server,
    capabilities: caps,
    vllmEnvironment: vllmEnv,
    problems,
  };
  if (values.json) console.log(JSON.stringify(report, null, 2));
  else {
    console.log(`agent:    ${report.config ? `${report.config.agentId} (${report.config.path})` : "not enrolled"}`);
    console.log(`server:   ${server}`);
    console.log(`system:   ${caps.os}, ${caps.cpuCores} cores, ${caps.ramMb} MiB RAM`);
    console.log(
      `gpus:     ${caps.gpus.length ? caps.gpus.map((g) => `${g.name} ${g.memoryMb} MiB (driver ${g.driver})`).join("; ") : "none (nvidia-smi not found or no GPU)"}`,
    );
    const st = caps.pythonStack;
    console.log(
      `python:   ${caps.python ?? "missing"}; torch ${caps.torch ?? "missing"}; CUDA ${caps.cuda ?? "none"}${st?.cudaAvailable ? " (available)" : ""}`,
    );
    console.log(
      `ml stack: transformers ${st?.transformers ?? "missing"}, peft ${st?.peft ?? "missing"}, trl ${st?.trl ?? "missing"}, bitsandbytes ${st?.bitsandbytes ?? "missing"}, vllm ${st?.vllm ?? "missing"}, agentlab_trainer ${st?.agentlabTrainer ?? "missing"}`,
    );
    console.log(
      `vllm env: ${vllmEnv ? `${vllmEnv.path} (python ${vllmEnv.python ?? "?"}); vllm ${vllmEnv.vllm ?? "missing"}, torch ${vllmEnv.torch ?? "missing"}, transformers ${vllmEnv.transformers ?? "missing"}${vllmEnv.error ? ` (${vllmEnv.error})` : ""}` : "none (generation uses transformers; scripts/setup-python.sh makes it on CUDA boxes)"}`,
    );
    console.log(
      `sandbox:  ${sandbox.backend} — ${sandbox.selfTestPassed ? "self-test passed" : `NOT usable: ${sandbox.detail}`}`,
    );
    console.log(problems.length ? `missing:\n${problems.map((p) => `  - ${p}`).join("\n")}` : "all good");
  }
  return problems.length ? 1 : 0;
}

const TIMEOUT_MS = 5000;

/** Reachability (health) and the credential itself (the server says ok, revoked or unknown). */
async function checkServer(url: string, credential: string): Promise<{ line: string; problem: string | null }> {
  const health = await fetch(new URL("/api/health", url), { signal: AbortSignal.timeout(TIMEOUT_MS) }).catch(
    () => null,
  );
  if (!health)
    return {
      line: `${url} unreachable`,
      problem: `server ${url} unreachable (is it running, and is this the right address?)`,
    };
  const healthBody = JSON.stringify(await health.json().catch(() => null));
  const me = await fetch(new URL("/api/agents/me", url), {
    headers: { authorization: `Bearer ${credential}` },
    signal: AbortSignal.timeout(TIMEOUT_MS),
  }).catch(() => null);
  const body = me ? ((await me.json().catch(() => null)) as { status?: string; name?: string } | null) : null;
  const line = `${url} answered ${health.status} ${healthBody}; credential ${body?.status ?? "not checked"}`;
  if (body?.status === "ok") return { line: `${line} (agent "${body.name ?? "?"}")`, problem: null };
  if (body?.status === "revoked")
    return { line, problem: "this agent's credential was REVOKED by an admin: enroll again with a new token" };
  if (body?.status === "unknown")
    return {
      line,
      problem:
        "the server does not know this agent's credential (enrolled against another server or database?): enroll again",
    };
  return { line, problem: `could not check the credential (${me ? `HTTP ${me.status}` : "no answer"})` };
}
