import { EventEmitter } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { superviseLocalAgent, type LocalAgent } from "../../apps/web/server/bootstrap/local-agent";
import type { Services } from "../../apps/web/server/services";
import { userCaller, type Caller } from "./helpers/callers";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { makeServices } from "./experiments-harness";

// agents.restartLocal reaches this process's local-agent supervisor: admins only, refused when no
// local agent runs, and the agent process really gets SIGTERM and is started again.

class Proc extends EventEmitter {
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  pid = 1;
  kill(sig: NodeJS.Signals) {
    this.signalCode = sig;
    queueMicrotask(() => this.emit("exit", null, sig));
    return true;
  }
}

let t: TestDb;
let s: Services;
let admin: Caller;
let member: Caller;
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  ({ caller: admin } = await userCaller(s, "admin"));
  ({ caller: member } = await userCaller(s, "member"));
});
afterAll(async () => t?.drop());

describe("restarting the local agent from the dashboard", () => {
  it("is refused when this server runs none", async () => {
    await expect(admin.agents.restartLocal()).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
  });

  it("restarts the supervised process for an admin, not for a member", async () => {
    const procs: Proc[] = [];
    const quiet = { info: () => {}, warn: () => {} };
    const agent: LocalAgent = superviseLocalAgent(() => {
      const p = new Proc();
      procs.push(p);
      return p;
    }, quiet);
    try {
      await expect(member.agents.restartLocal()).rejects.toMatchObject({ code: "FORBIDDEN" });
      expect(procs[0]?.signalCode).toBeNull();
      await expect(admin.agents.restartLocal()).resolves.toEqual({ ok: true });
      expect(procs[0]?.signalCode).toBe("SIGTERM");
      await new Promise((r) => setTimeout(r, 20));
      expect(procs).toHaveLength(2);
    } finally {
      await agent.stop();
    }
  });
});
