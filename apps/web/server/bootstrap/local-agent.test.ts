import { EventEmitter } from "node:events";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { localAgentState, restartLocalAgent, superviseLocalAgent } from "./local-agent";

// A process stand-in: `die` ends it as a crash would, `kill` as a signal does.
class FakeProc extends EventEmitter {
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  constructor(readonly pid: number) {
    super();
  }
  die(code = 1) {
    this.exitCode = code;
    this.emit("exit", code, null);
  }
  kill(sig: NodeJS.Signals) {
    this.signalCode = sig;
    queueMicrotask(() => this.emit("exit", null, sig));
    return true;
  }
}

const log = { info: vi.fn(), warn: vi.fn() };

describe("local agent supervisor", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("restarts a dead agent with doubling backoff, capped, reset after a healthy run, and not after stop", async () => {
    const procs: FakeProc[] = [];
    const start = () => {
      const p = new FakeProc(100 + procs.length);
      procs.push(p);
      return p;
    };
    const agent = superviseLocalAgent(start, log, { minMs: 1_000, maxMs: 4_000, healthyMs: 60_000 });
    expect(procs).toHaveLength(1);
    expect(localAgentState()).toEqual({ state: "running", restarts: 0 });

    const gaps: number[] = [];
    for (let i = 0; i < 4; i++) {
      procs.at(-1)?.die();
      expect(localAgentState()).toMatchObject({ state: "restarting", restarts: i + 1 });
      const before = procs.length;
      let waited = 0;
      while (procs.length === before) {
        await vi.advanceTimersByTimeAsync(100);
        waited += 100;
      }
      gaps.push(waited);
    }
    expect(gaps).toEqual([1_000, 2_000, 4_000, 4_000]);

    // A run longer than healthyMs starts the backoff from the bottom again.
    await vi.advanceTimersByTimeAsync(61_000);
    procs.at(-1)?.die();
    expect(localAgentState()).toMatchObject({ state: "restarting", retryInS: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(procs).toHaveLength(6);

    await agent.stop();
    expect(procs.at(-1)?.signalCode).toBe("SIGTERM");
    expect(localAgentState()).toEqual({ state: "off" });
    await vi.advanceTimersByTimeAsync(120_000);
    expect(procs).toHaveLength(6);
  });

  it("restarts on request at once (SIGTERM, no backoff), and refuses once stopped", async () => {
    const procs: FakeProc[] = [];
    const start = () => {
      const p = new FakeProc(200 + procs.length);
      procs.push(p);
      return p;
    };
    const agent = superviseLocalAgent(start, log, { minMs: 5_000, maxMs: 10_000, healthyMs: 60_000 });
    expect(restartLocalAgent()).toBe(true);
    expect(procs[0]?.signalCode).toBe("SIGTERM");
    await vi.advanceTimersByTimeAsync(0);
    expect(procs).toHaveLength(2);
    expect(localAgentState()).toEqual({ state: "running", restarts: 1 });
    // Control: a crash right after still waits the backoff.
    procs.at(-1)?.die();
    await vi.advanceTimersByTimeAsync(4_900);
    expect(procs).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(200);
    expect(procs).toHaveLength(3);
    await agent.stop();
    expect(restartLocalAgent()).toBe(false);
  });
});
