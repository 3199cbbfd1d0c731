import { describe, expect, it } from "vitest";
import { ranksRefusal } from "./train";

// Which multi-rank train jobs this agent runs (the claim routes by GPU count; this is the
// agent's own check, and the CPU-processes opt-in for tests).
describe("ranksRefusal", () => {
  const gpuSpec = (n: number) => ({ world_size: n, method: "lora-bf16", device: "auto" });
  it("runs one rank anywhere, and N ranks on N or more GPUs", () => {
    expect(ranksRefusal(gpuSpec(1), { gpus: 0, cpuRanks: false })).toBeNull();
    expect(ranksRefusal(gpuSpec(2), { gpus: 2, cpuRanks: false })).toBeNull();
    expect(ranksRefusal(gpuSpec(2), { gpus: 8, cpuRanks: false })).toBeNull();
  });

  it("refuses more ranks than GPUs, and CPU ranks without the opt-in, naming spec.world_size", () => {
    expect(ranksRefusal(gpuSpec(4), { gpus: 2, cpuRanks: false })).toMatch(
      /spec\.world_size = 4 needs 4 GPUs on one agent; this one has 2/,
    );
    expect(ranksRefusal({ world_size: 2, method: "lora-fp32" }, { gpus: 8, cpuRanks: false })).toMatch(
      /spec\.world_size = 2 with a CPU method would start 2 CPU processes/,
    );
    expect(ranksRefusal({ world_size: 2, device: "cpu" }, { gpus: 0, cpuRanks: false })).toMatch(/CPU device/);
    // the opt-in lets a box without GPUs run them as gloo CPU processes
    expect(ranksRefusal({ world_size: 2, device: "cpu" }, { gpus: 0, cpuRanks: true })).toBeNull();
  });
});
