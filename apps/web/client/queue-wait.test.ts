import { describe, expect, it } from "vitest";
import { queueWaitText } from "./queue-wait";

describe("why a queued job waits", () => {
  it("names what runs on the agents that could take it", () => {
    expect(
      queueWaitText({
        ahead: 2,
        fitting: [{ name: "local" }],
        busy: [{ type: "train", agentName: "local" }],
        unfit: [],
      }),
    ).toBe("queued, 2 jobs ahead · behind train on local");
  });

  it("says when it is next and no agent is busy", () => {
    expect(queueWaitText({ ahead: 0, fitting: [{ name: "gpu-1" }], busy: [], unfit: [] })).toBe(
      "queued · next for gpu-1",
    );
  });

  it("says which requirement no online agent meets", () => {
    expect(queueWaitText({ ahead: 0, fitting: [], busy: [], unfit: [{ name: "local", missing: "1 GPU(s)" }] })).toBe(
      "queued: no online agent can take it (local lacks 1 GPU(s))",
    );
    expect(queueWaitText({ ahead: 0, fitting: [], busy: [], unfit: [] })).toBe(
      "queued: no online agent can take it (no agent online)",
    );
  });
});
