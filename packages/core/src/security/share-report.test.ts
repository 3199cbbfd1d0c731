import { describe, expect, it } from "vitest";
import { NOT_SHARED, shareableReport } from "./share-report";

const AGENT = "5a4e2c1d-0000-4000-8000-00000000aaaa";
const PROVIDER = "7b7b7b7b-0000-4000-8000-00000000bbbb";
const HASH = "d".repeat(64);
const PATH = "/home/ada/models/qwen-0.5b";
const report = {
  name: "exp",
  config: { baseModel: { source: "path", ref: PATH }, teacher: { providerId: PROVIDER, n: 1 } },
  header: {
    baseModel: { source: "path", ref: PATH, weightsSha256: "e".repeat(64) },
    dataset: { id: "ds", name: "d", hash: HASH, samples: 3 },
    hardware: [
      { id: AGENT, name: "gpu-box-7", os: "linux 6.8.0-47-generic", cpuCores: 8, ramMb: 64_000, gpus: ["H100"] },
    ],
  },
  evaluations: [{ protocol: { model: { ref: PATH } }, agentId: AGENT, note: `ran on ${AGENT} from ${PATH}/snap` }],
};

describe("shareableReport", () => {
  it("hides agent ids and names, kernel, RAM, the local model path, the provider id and the dataset hash", () => {
    const shared = shareableReport(report);
    const text = JSON.stringify(shared);
    // Positive control: the stored report has every one of them.
    const raw = JSON.stringify(report);
    for (const secret of [AGENT, "gpu-box-7", "6.8.0-47", "64000", PATH, PROVIDER, HASH]) {
      expect(raw).toContain(secret);
      expect(text).not.toContain(secret);
    }
    expect(shared.header.hardware[0]).toMatchObject({
      id: "agent-1",
      name: "agent 1",
      os: "linux",
      ramMb: null,
      gpus: ["H100"],
    });
    expect(shared.config.baseModel.ref).toBe("qwen-0.5b");
    expect(shared.header.dataset.hash).toBe(NOT_SHARED);
    expect(shared.evaluations[0]).not.toHaveProperty("agentId");
    expect(shared.evaluations[0]?.note).toBe("ran on agent-1 from qwen-0.5b/snap");
    // The facts stay.
    expect(shared.header.baseModel.weightsSha256).toBe("e".repeat(64));
    expect(shared.header.dataset.samples).toBe(3);
  });

  it("leaves a hub model's id alone and does not touch the original", () => {
    const hub = { config: { baseModel: { source: "hub", ref: "Qwen/Qwen2.5-0.5B" } } };
    expect(shareableReport(hub)).toEqual(hub);
    shareableReport(report);
    expect(report.header.dataset.hash).toBe(HASH);
  });
});
