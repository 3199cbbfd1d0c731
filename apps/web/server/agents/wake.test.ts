import { afterEach, describe, expect, it, vi } from "vitest";
import { createWaker } from "./wake";

function setup(timeoutMs = 1000) {
  const emitted: string[] = [];
  let broadcasts = 0;
  const waker = createWaker<string>({
    emit: (s) => void emitted.push(s),
    broadcast: () => void broadcasts++,
    timeoutMs,
  });
  return { waker, emitted, broadcasts: () => broadcasts };
}

afterEach(() => vi.useRealTimers());

describe("waking idle agents", () => {
  it("wakes as many idle agents as there are jobs, the longest idle first, each once", () => {
    const { waker, emitted } = setup();
    for (const s of ["a", "b", "c", "d"]) waker.idle(s);
    expect(waker.wake(2)).toBe(2);
    expect(emitted).toEqual(["a", "b"]);
    waker.busy("a");
    waker.busy("b");
    expect(waker.wake(5)).toBe(2);
    expect(emitted).toEqual(["a", "b", "c", "d"]);
    expect(waker.wake(1)).toBe(0); // nobody idle is left
  });

  it("a busy agent is not woken, and one that went idle again is", () => {
    const { waker, emitted } = setup();
    waker.idle("a");
    waker.busy("a");
    expect(waker.wake(1)).toBe(0);
    waker.idle("a");
    expect(waker.wake(1)).toBe(1);
    expect(emitted).toEqual(["a"]);
  });

  it("reports a woken agent that then found nothing or left, but not one that claimed", () => {
    const { waker } = setup();
    for (const s of ["a", "b", "c"]) waker.idle(s);
    waker.wake(3);
    waker.busy("a");
    expect(waker.idle("a")).toBe(false); // it got a job first: its empty claim later is no miss
    waker.claiming("b");
    expect(waker.idle("b")).toBe(true);
    expect(waker.gone("c")).toBe(true);
    expect(waker.gone("a")).toBe(false);
  });

  it("broadcasts when a woken agent does not claim within the timeout (a lost nudge), not when it does", () => {
    vi.useFakeTimers();
    const { waker, broadcasts } = setup(1000);
    waker.idle("a");
    waker.idle("b");
    waker.wake(2);
    waker.claiming("a"); // its claim arrived: no timeout, however long the claim takes
    vi.advanceTimersByTime(999);
    expect(broadcasts()).toBe(0);
    vi.advanceTimersByTime(2);
    expect(broadcasts()).toBe(1); // b never claimed
    waker.close();
  });
});
