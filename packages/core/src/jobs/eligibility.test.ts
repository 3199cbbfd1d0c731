import { describe, expect, it } from "vitest";
import type { Capabilities } from "../protocol/capabilities";
import { requirementText, whyUnclaimable, type AgentOffer, type JobNeeds } from "./eligibility";

const caps = (over: Partial<Capabilities> = {}): Capabilities => ({
  agentVersion: "t",
  os: "linux",
  cpuCores: 2,
  ramMb: 1024,
  gpus: [],
  python: null,
  torch: null,
  cuda: null,
  sandbox: { backend: "bwrap", selfTestPassed: true, detail: "ok" },
  labels: [],
  shellJobs: false,
  ...over,
});
const agent = (over: Partial<AgentOffer> = {}): AgentOffer => ({
  name: "local",
  online: true,
  revoked: false,
  drain: false,
  labels: [],
  capabilities: caps(),
  ...over,
});
const grade: JobNeeds = { type: "grade", labels: [], gpus: 0, gpuMemoryMb: 0, sandbox: null };

describe("whyUnclaimable", () => {
  it("says nothing when an online agent can claim the job", () => {
    expect(whyUnclaimable(grade, [agent()])).toBeNull();
  });
  it("names the failed self-test and the bubblewrap fix", () => {
    const out = whyUnclaimable(grade, [
      agent({
        capabilities: caps({ sandbox: { backend: "bwrap", selfTestPassed: false, detail: "bwrap not found" } }),
      }),
    ]);
    expect(out?.reason).toBe("no online agent has a passing sandbox self-test (local: bwrap not found)");
    expect(out?.fix).toMatch(/apt-get install -y bubblewrap.*re-run the self-test/);
  });
  it("gives the install command only when the binary is missing", () => {
    const enoent = agent({
      capabilities: caps({
        sandbox: { backend: "bwrap", selfTestPassed: false, detail: "self-test error: spawn bwrap ENOENT" },
      }),
    });
    expect(whyUnclaimable(grade, [enoent])?.fix).toMatch(/apt-get install -y bubblewrap/);
    const other = agent({
      capabilities: caps({
        sandbox: {
          backend: "bwrap",
          selfTestPassed: false,
          detail: "probe did not run (exit 1): bwrap: Can't find source path /x\n",
        },
      }),
    });
    const out = whyUnclaimable(grade, [other]);
    expect(out?.fix).not.toMatch(/apt-get/);
    expect(out?.fix).toMatch(/agentlab-agent doctor/);
    expect(out?.reason.endsWith("/x)")).toBe(true);
  });
  it("no agent online, offline or revoked ones do not count", () => {
    expect(whyUnclaimable(grade, [agent({ online: false }), agent({ revoked: true })])?.reason).toBe(
      "no agent is online",
    );
  });
  it("shell opt-in, labels, GPUs and drain in the claim's order", () => {
    expect(whyUnclaimable({ ...grade, type: "shell" }, [agent()])?.reason).toMatch(/shell jobs/);
    expect(whyUnclaimable({ ...grade, type: "train", labels: ["big"] }, [agent()])?.reason).toBe(
      "no online agent has the label big",
    );
    expect(whyUnclaimable({ ...grade, type: "train", labels: ["big"] }, [agent({ labels: ["big"] })])).toBeNull();
    expect(
      whyUnclaimable({ ...grade, type: "train", gpus: 1, gpuMemoryMb: 20_000 }, [
        agent({ capabilities: caps({ gpus: [{ name: "g", memoryMb: 16_000, uuid: "u", driver: "d" }] }) }),
      ])?.reason,
    ).toMatch(/1 GPU with ≥ 20000 MiB/);
    expect(whyUnclaimable(grade, [agent({ drain: true })])?.reason).toMatch(/draining/);
  });
  it("says a GPU job holds its GPU alone unless it shares", () => {
    const train: JobNeeds = { ...grade, type: "train", gpus: 1, gpuMemoryMb: 9000 };
    expect(requirementText(train)).toBe("an online agent with 1 GPU with ≥ 9000 MiB each no other GPU job holds");
    expect(requirementText({ ...train, gpuShare: true })).toBe(
      "an online agent with 1 GPU with ≥ 9000 MiB each (shared)",
    );
  });
  it("a job needing bwrap is not claimable by an agent passing only with process", () => {
    const out = whyUnclaimable({ ...grade, sandbox: "bwrap" }, [
      agent({ capabilities: caps({ sandbox: { backend: "process", selfTestPassed: true, detail: "" } }) }),
    ]);
    expect(out?.reason).toMatch(/passes only with process/);
  });
});

describe("requirementText", () => {
  it("says the real requirement instead of 'any agent'", () => {
    expect(requirementText(grade)).toBe("an online agent with a passing sandbox self-test");
    expect(requirementText({ ...grade, type: "tokenize" })).toBe("any online agent");
  });
});
