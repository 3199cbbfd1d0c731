import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setExperimentState, updateStage } from "@agentlab/db";
import type { Services } from "../../apps/web/server/services";
import { userCaller, type Caller } from "./helpers/callers";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { baseConfig, makeServices, makeSplit, startExperiment } from "./experiments-harness";

// One source for what a stage reads: a canceled experiment's unfinished stage rows stay as they
// were in the database, and the page and CLI (experiments.byId) must not show them as running.

let t: TestDb;
let s: Services;
let member: Caller;
let splitId: string;
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  ({ splitId } = await makeSplit(t.db));
  ({ caller: member } = await userCaller(s, "member"));
});
afterAll(async () => t?.drop());

describe("stage states shown for an experiment", () => {
  it("read canceled / not run once the experiment is canceled (control: running before)", async () => {
    const id = await startExperiment(s, baseConfig(splitId, { name: "cancel me" }));
    const before = await member.experiments.byId({ id });
    // The first stage nothing has run yet (starting may already have finished the cheap ones).
    const at = before.stages.findIndex((x) => x.state === "pending");
    const stage = before.stages[at];
    if (!stage) throw new Error("no pending stage");
    await updateStage(t.db, id, stage.key, { state: "running" });
    const running = await member.experiments.byId({ id });
    expect(running.stages[at]?.state).toBe("running");
    // Time left is estimated only for a running run; with no agent online it says so.
    expect(running.remaining).toEqual({ kind: "unknown", reason: "no agent is online" });
    expect(running.stages.slice(at + 1).every((x) => x.state === "pending")).toBe(true);

    await member.experiments.cancel({ id });
    const after = await member.experiments.byId({ id });
    expect(after.state).toBe("canceled");
    expect(after.remaining).toBeNull();
    // A runner step still going when the cancel landed cannot turn it into "failed" afterwards.
    await setExperimentState(t.db, id, "failed", "collect: no provider");
    expect((await member.experiments.byId({ id })).state).toBe("canceled");
    expect(after.stages[at]?.state).toBe("canceled");
    expect(after.stages.slice(at + 1).every((x) => x.state === "not run")).toBe(true);
    expect(after.stages.slice(0, at).every((x) => x.state === "succeeded")).toBe(true);
    expect(after.stages.some((x) => x.state === "running" || x.queueWait !== null)).toBe(false);
  });
});
