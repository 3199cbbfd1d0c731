import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { getJob, listJobArtifacts } from "@agentlab/db";
import { GrpoJobResult, type TaskSpec } from "@agentlab/core";
import { Grader } from "../../apps/agent/src/grading/grader";
import { ReferenceIds } from "../../apps/agent/src/grading/reference-ids";
import { grpoJob } from "../../apps/agent/src/jobs/grpo";
import { findPython } from "../../apps/agent/src/trainer/python";
import { buildTinyModel } from "./helpers/tiny-model";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";

// A grpo job through the real queue: the agent renders the train task's repair prompt, the
// trainer (TRL GRPOTrainer on the tiny model) sends its completions over the reward socket, the
// agent answers with the real judge's verdicts, and each snapshot's adapter is uploaded. The
// tiny model writes no code block, so every completion is `unparseable` (reward 0): the audit
// counts them all, and the contract of events and result holds end to end.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const python = findPython(null, { root: join(ROOT, "apps/agent") });
const task: TaskSpec = {
  id: "r1",
  source_group: "r",
  language: "python",
  instruction: "Fix f.",
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: "def f(x):\n    return x\n" }],
  public_tests: [],
  hidden_tests: [
    { path: "test_hidden.py", content: "from solution import f\n\ndef test_v():\n    assert f(1) == 2\n" },
  ],
  reference: [{ path: "solution.py", content: "def f(x):\n    return x + 1\n" }],
};

let server: TestServer;
let grader: Grader;
let agent: Awaited<ReturnType<typeof startInProcessAgent>>;
let model: string;

beforeAll(async () => {
  server = await startTestServer({ AGENTLAB_LEASE_TTL_MS: "30000", AGENTLAB_HEARTBEAT_MS: "1000" });
  model = await buildTinyModel(python);
  grader = new Grader(
    {
      backend: "bwrap",
      graderDir: join(ROOT, "apps/agent/grader"),
      uid: 65534,
      gid: 65534,
      scratchDir: "/tmp/agentlab-test-scratch",
    },
    { workers: 1, limits: { wallTimeoutS: 20, testTimeoutS: 5, memoryMb: 256, pids: 48 } },
  );
  const handlers = { grpo: grpoJob(500, { grader, refs: new ReferenceIds(grader) }) };
  agent = await startInProcessAgent(server, "rl", { python, pollMs: 500, handlers });
}, 300_000);
afterAll(async () => {
  await agent?.stop();
  grader?.close();
  await server?.close();
});

describe("grpo jobs on the agent", () => {
  it("trains with judge rewards, reports each step's audit and uploads every snapshot", async () => {
    const job = await server.app.services.queue.enqueue({
      type: "grpo",
      payload: {
        splitId: "00000000-0000-4000-8000-000000000001",
        tasks: [{ task, part: "train" }],
        spec: {
          base_model: model,
          local_files_only: true,
          device: "cpu",
          lora: { r: 4, alpha: 8, dropout: 0, target_modules: ["q_proj", "v_proj"] },
          num_generations: 2,
          max_completion_length: 8,
          max_steps: 2,
          snapshot_every_steps: 1,
        },
      },
    });
    const done = await waitFor(
      async () => {
        const j = await getJob(server.db.db, job.id);
        return j && ["succeeded", "failed", "canceled"].includes(j.state) ? j : null;
      },
      400_000,
      500,
    );
    expect(done.state, done.error ?? "").toBe("succeeded");
    const result = GrpoJobResult.parse(done.result);
    expect(result.steps).toBe(2);
    expect(result.graded_completions).toBe(4);
    for (const s of result.step_metrics) {
      expect(s.completions).toBe(2);
      expect(s.audit.unparseable + s.pass_count + s.audit.tampered + s.audit.timeout).toBeLessThanOrEqual(2);
    }
    expect(result.config).toMatchObject({ loss_type: "dapo", beta: 0, epsilon_high: 0.28 });
    expect(result.snapshots).toHaveLength(2);
    const uploaded = await listJobArtifacts(server.db.db, job.id);
    for (const s of result.snapshots) expect(uploaded.map((a) => a.sha256)).toContain(s.artifact);
  }, 500_000);
});
