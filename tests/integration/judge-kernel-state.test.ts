import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { probeKernelState, KEYRING_REACHABLE } from "../../apps/agent/src/sandbox/kernel-probe";
import { run } from "../../apps/agent/src/sandbox/run";
import { DEFAULT_SANDBOX_LIMITS } from "../../apps/agent/src/sandbox/types";
import { closeGraders, gradeWith, ifWorks, makeGraders, probeTask, sandboxCfg, type Graders } from "./helpers/judge";

// No kernel state shared across candidates of one warm sandbox: its processes share one user
// namespace and so its keyrings. A spy stores what it learned in a key; a later candidate (of
// the same or another task) reads it. The seccomp filter in the judge and every candidate
// refuses the keyring calls. Positive controls: the same spy works where no filter is installed
// (the process backend), and a plain sandbox run without the filter reaches the keyring.

const RUN = randomBytes(5).toString("hex");
const A = probeTask(`kern-a-${RUN}`, `hidden-marker-${randomBytes(6).toString("hex")}`);
const B = probeTask(`kern-b-${RUN}`, `hidden-marker-${randomBytes(6).toString("hex")}`);
const KEY = `agentlab-spy-${RUN}`;
const KEYCTL = String.raw`
import ctypes, platform
_libc = ctypes.CDLL(None, use_errno=True)
_NR = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
`;
// add_key("user", KEY, "seen", user keyring), then a 60 s timeout so the control leaves nothing behind.
const PLANT = [
  `k = _libc.syscall(_NR[0], b"user", ${JSON.stringify(KEY)}.encode(), b"seen", 4, -4)`,
  "if k < 0: return False",
  "_libc.syscall(_NR[1], 15, k, 60)",
  "return True",
].join("\n");
// keyctl(KEYCTL_SEARCH, user keyring, "user", KEY): found only if an earlier candidate planted it.
const FIND = `return _libc.syscall(_NR[1], 10, -4, b"user", ${JSON.stringify(KEY)}.encode(), 0) >= 0`;

let g: Graders;
beforeAll(() => {
  g = makeGraders();
});
afterAll(() => closeGraders(g));

describe("the judge: no kernel keyring shared across candidates", () => {
  it("a key planted by one candidate is never found by the next (positive control: unfiltered)", async () => {
    expect((await gradeWith(g, "inProcess", A, ifWorks(PLANT, KEYCTL))).verdict).toBe("pass");
    const control = await gradeWith(g, "inProcess", B, ifWorks(FIND, KEYCTL));
    expect(control.verdict, "positive control: without the filter the next candidate finds the key").toBe("pass");
    for (const which of ["judge", "noCgroups"] as const) {
      const plant = await gradeWith(g, which, A, ifWorks(PLANT, KEYCTL));
      expect(plant.verdict, `${which}: planting must fail`).toMatch(/^fail_/);
      const find = await gradeWith(g, which, B, ifWorks(FIND, KEYCTL));
      expect(find.verdict, `${which}: ${find.reasons.join("; ")}`).toMatch(/^fail_/);
    }
  });

  it("the self-test's kernel probe holds in the sandbox and fails without the filter", async () => {
    expect(await probeKernelState(sandboxCfg())).toMatchObject({ ok: true });
    const unfiltered = await probeKernelState(
      sandboxCfg({ backend: "process", scratchDir: "/tmp/agentlab-test-scratch-process" }),
    );
    expect(unfiltered.ok, `positive control: ${unfiltered.detail}`).toBe(false);
    const dir = mkdtempSync("/tmp/agentlab-kernel-");
    try {
      writeFileSync(join(dir, "p.py"), `${KEYRING_REACHABLE}\nprint(keyring_reachable())\n`);
      const r = await run(sandboxCfg(), dir, ["/usr/bin/python3", "-I", "p.py"], DEFAULT_SANDBOX_LIMITS);
      expect(r.stdout.trim(), "positive control: a plain sandbox without the filter reaches the keyring").toBe("True");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
