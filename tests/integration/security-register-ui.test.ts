import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRPCError } from "@trpc/server";
import { revokeAgent } from "@agentlab/db";
import { changesSomething, registrationForm, registrationInput } from "../../apps/web/app/agents/register";
import { callerAs, type Caller } from "./helpers/callers";
import { enrollTestAgent, startTestServer, type TestServer } from "./helpers/server";

// The agents page's registration panel, without a browser: the form's input (register.ts) through
// agents.register as the page sends it, read back through agents.list as the page shows it. Only
// an admin may record what an agent is; a member's identical request is refused.

let s: TestServer;
let admin: Caller;
let member: Caller;
beforeAll(async () => {
  s = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  admin = await callerAs(s.app.services, "admin");
  member = await callerAs(s.app.services, "member");
});
afterAll(async () => s?.close());

const row = async (id: string) => {
  const found = (await admin.agents.list()).find((a) => a.id === id);
  if (!found) throw new Error("agent not listed");
  return found;
};

describe("registering an agent from the agents page", () => {
  it("records labels, the shell-job opt-in and GPUs, and the page's next form starts from them", async () => {
    const { agentId } = await enrollTestAgent(s.db, "gpu-box", { shellJobs: false });
    const before = await row(agentId);
    expect(before).toMatchObject({ shellJobs: false, registeredGpus: null, labels: [] });
    const form = {
      ...registrationForm(before),
      labels: "a100, fast-disk",
      shellJobs: true,
      gpus: "2",
      gpuMemoryGb: "80",
    };
    const parsed = registrationInput(agentId, before, form);
    if (!parsed.ok) throw new Error(parsed.error);

    // The same request from a member is refused and changes nothing (the admin's succeeds below).
    await expect(member.agents.register(parsed.input)).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await row(agentId)).toMatchObject({ shellJobs: false, registeredGpus: null });

    const done = await admin.agents.register(parsed.input);
    expect(done).toMatchObject({ labels: ["a100", "fast-disk"], shellJobs: true, gpus: 2, gpuMemoryMb: 81_920 });
    expect(done.appliedNow).toBe(false); // not connected: it claims by the record from its next connect
    const after = await row(agentId);
    expect(after).toMatchObject({
      labels: ["a100", "fast-disk"],
      shellJobs: true,
      registeredGpus: 2,
      registeredGpuMemoryMb: 81_920,
    });
    const again = registrationInput(agentId, after, registrationForm(after));
    expect(again.ok && changesSomething(again.input)).toBe(false);
  });

  it("refuses to register a revoked agent", async () => {
    const { agentId } = await enrollTestAgent(s.db, "gone");
    await revokeAgent(s.db.db, agentId);
    const err = await admin.agents.register({ id: agentId, shellJobs: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCError);
    expect(err).toMatchObject({ code: "NOT_FOUND" });
  });
});
