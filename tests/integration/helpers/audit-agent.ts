import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Grader } from "../../../apps/agent/src/grading/grader";
import { makeAuditHandler } from "../../../apps/agent/src/jobs/audit";
import { sandboxConfig, sandboxStatus } from "../../../apps/agent/src/sandbox-status";
import { startInProcessAgent, type TestServer } from "./server";

// An in-process agent that runs the real audit handler (real grader, `process` backend: the agent
// advertises it) against a test server; `stop` ends the agent, the grader and its state dir.

export async function startAuditAgent(srv: TestServer, prefix: string) {
  const stateDir = await mkdtemp(join(tmpdir(), prefix));
  const cfg = sandboxConfig({ backend: "process", uid: 65534, stateDir });
  const status = await sandboxStatus(cfg);
  if (!status.selfTestPassed) throw new Error(`sandbox self-test failed: ${status.detail}`);
  const grader = new Grader(cfg, { workers: 1 });
  const agent = await startInProcessAgent(srv, "auditor", {
    pollMs: 200,
    handlers: { audit: makeAuditHandler(grader, cfg) },
  });
  return {
    stateDir,
    stop: async () => {
      await agent.stop();
      grader.close();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}
