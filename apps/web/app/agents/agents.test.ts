import { describe, expect, it } from "vitest";
import { gpuSummary, isStale, runtimeSummary } from "./capabilities";
import { enrollCommand, enrollRecipe, parseLabels, shellQuote, unreachableFromOtherBoxes } from "./enroll";
import { changesSomething, registrationForm, registrationInput } from "./register";

describe("agents page helpers", () => {
  it("groups identical GPUs", () => {
    const gpu = (name: string, memoryMb: number) => ({
      name,
      memoryMb,
      uuid: `GPU-${name}-${Math.random()}`,
      driver: "550.54",
    });
    expect(
      gpuSummary({ gpus: [gpu("NVIDIA H100", 81_559), gpu("NVIDIA H100", 81_559), gpu("NVIDIA L4", 23_034)] }),
    ).toBe("2× NVIDIA H100 · 80 GiB, 1× NVIDIA L4 · 22 GiB");
    expect(gpuSummary({ gpus: [] })).toBe("none");
    expect(gpuSummary(null)).toBe("none");
  });

  it("summarizes the Python runtime", () => {
    expect(runtimeSummary({ python: "3.11.2", torch: "2.5.1", cuda: "12.4" })).toBe(
      "py 3.11.2 · torch 2.5.1 · CUDA 12.4",
    );
    expect(runtimeSummary({ python: null, torch: null, cuda: null })).toBe("no python");
    expect(runtimeSummary(null)).toBe("—");
  });

  it("flags online agents whose heartbeat is old", () => {
    const now = Date.parse("2026-01-31T12:00:00Z");
    expect(isStale("2026-01-31T11:59:50Z", true, now)).toBe(false);
    expect(isStale("2026-01-31T11:59:00Z", true, now)).toBe(true);
    expect(isStale("2026-01-31T11:00:00Z", false, now)).toBe(false);
    expect(isStale(null, true, now)).toBe(false);
  });

  it("builds a copy-pasteable enroll command", () => {
    expect(enrollCommand("http://lab:3000", "enr_AbC-_9")).toBe(
      "npx agentlab-agent enroll --server http://lab:3000 --token enr_AbC-_9",
    );
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote("a b")).toBe("'a b'");
  });

  it("gives the three-line recipe: install, enroll, run", () => {
    const lines = enrollRecipe("http://lab:3000", "enr_x").split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[1]).toBe(enrollCommand("http://lab:3000", "enr_x"));
    expect(lines[2]).toBe("npx agentlab-agent run");
  });

  it("warns when the server address only works on this machine", () => {
    for (const u of ["http://localhost:3000", "http://127.0.0.1:3000", "http://[::1]:3000", "http://app.localhost"])
      expect(unreachableFromOtherBoxes(u), u).toBe(true);
    for (const u of ["http://lab:3000", "https://lab.example.com", "http://10.0.0.5:3000"])
      expect(unreachableFromOtherBoxes(u), u).toBe(false);
  });

  it("parses labels from commas or spaces, deduplicated", () => {
    expect(parseLabels(" a100, fast-disk  a100,,")).toEqual(["a100", "fast-disk"]);
    expect(parseLabels("")).toEqual([]);
  });
});

describe("registration form", () => {
  const record = { labels: ["a100"], shellJobs: false, registeredGpus: null, registeredGpuMemoryMb: null };

  it("starts from the record and sends only what changed", () => {
    const form = registrationForm(record);
    expect(form).toEqual({ labels: "a100", shellJobs: false, gpus: "", gpuMemoryGb: "" });
    const same = registrationInput("id", record, form);
    expect(same.ok && changesSomething(same.input)).toBe(false);
    expect(
      registrationInput("id", record, {
        ...form,
        labels: "fast-disk, a100",
        shellJobs: true,
        gpus: "2",
        gpuMemoryGb: "80",
      }),
    ).toEqual({
      ok: true,
      input: { id: "id", labels: ["a100", "fast-disk"], shellJobs: true, gpus: 2, gpuMemoryMb: 81_920 },
    });
  });

  it("names the field of a value the server would refuse", () => {
    const form = registrationForm(record);
    expect(registrationInput("id", record, { ...form, gpus: "1.5" })).toEqual({
      ok: false,
      error: "GPUs: a whole number from 0 to 64",
    });
    expect(registrationInput("id", record, { ...form, gpuMemoryGb: "lots" })).toMatchObject({ ok: false });
  });
});
