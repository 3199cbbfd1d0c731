import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { closeGraders, gradeWith, ifWorks, makeGraders, probeTask, type Graders } from "./helpers/judge";

// Candidates in sequence in one warm sandbox (one worker per grader), where one tries to poison,
// rob or starve the next, plus the limits, special files and signals. Each probe has its positive
// control on the `process` backend with in-process grading (no namespaces, shared host /tmp),
// where the same probe must succeed.

const RUN = randomBytes(5).toString("hex");
const A = probeTask(`seq-a-${RUN}`, `hidden-marker-${randomBytes(6).toString("hex")}`);
const B = probeTask(`seq-b-${RUN}`, `hidden-marker-${randomBytes(6).toString("hex")}`);
const WRONG = new Set(["fail_public", "fail_hidden"]);
const POISON_FILE = `agentlab-poison-${RUN}`;
let g: Graders;
beforeAll(() => {
  g = makeGraders();
});
afterAll(() => {
  closeGraders(g);
  for (const f of [POISON_FILE, "sitecustomize.py", "agentlab-poison.pth"]) rmSync(`/tmp/${f}`, { force: true });
  execFileSync("sh", ["-c", `pkill -f agentlab-daemo[n]-${RUN} || true`]);
});

// Writes a marker (and a sitecustomize.py / .pth that would plant one) wherever it can. The
// positive control runs unsandboxed, as the agent's own user: it writes to the shared /tmp only,
// never into the host's system or Python directories.
const EVERYWHERE =
  "['/', '/tmp', '/var/tmp', '/dev/shm', '/dev', '/box', '/opt', '/etc', '/usr/lib', '/lib', os.getcwd(), os.path.expanduser('~'), os.environ.get('TMPDIR', '/tmp')] + sys.path + site.getsitepackages()";
const poison = (dirs: string) =>
  [
    "import site, sys",
    `dirs = ${dirs}`,
    "wrote = False",
    "for d in dirs:",
    "    for name, body in ((" +
      JSON.stringify(POISON_FILE) +
      ", 'x'), ('sitecustomize.py', 'import builtins; builtins.POISONED = True'), ('agentlab-poison.pth', 'import builtins; builtins.POISONED = True')):",
    "        try:",
    "            open(os.path.join(d, name), 'w').write(body)",
    "            wrote = True",
    "        except OSError:",
    "            pass",
    "return wrote",
  ].join("\n");
const POISON = poison(EVERYWHERE);
// Right only if something of an earlier candidate is visible.
const SEES_POISON = [
  "import builtins, subprocess",
  "if getattr(builtins, 'POISONED', False): return True",
  `for d in ['/', '/tmp', '/var/tmp', '/dev/shm', '/dev', '/box', '/opt', '/etc', '/usr/lib', '/lib', os.getcwd(), os.path.expanduser('~')]:`,
  `    if os.path.exists(os.path.join(d, ${JSON.stringify(POISON_FILE)})): return True`,
  "out = subprocess.run([sys.executable, '-c', 'import builtins; print(getattr(builtins, \"POISONED\", False))'], capture_output=True, text=True).stdout",
  "return 'True' in out",
].join("\n");
const SCAN_MEMORY = [
  "import re",
  "pat = re.compile(rb'hidden-marker-[0-9a-f]{12}')",
  "mem = open('/proc/self/mem', 'rb', 0)",
  "for line in open('/proc/self/maps'):",
  "    m = re.match(r'([0-9a-f]+)-([0-9a-f]+) r', line)",
  "    if not m: continue",
  "    a, b = int(m.group(1), 16), int(m.group(2), 16)",
  "    if b - a > 1 << 28: continue",
  "    try:",
  "        mem.seek(a)",
  "        if pat.search(mem.read(b - a)): return True",
  "    except (OSError, ValueError, OverflowError): pass",
  "return False",
].join("\n");

describe("the judge: one candidate cannot reach the next", () => {
  it("poison: files, sitecustomize and .pth planted by one candidate are gone for the next", async () => {
    await gradeWith(g, "inProcess", A, ifWorks(poison("['/tmp']")));
    const control = await gradeWith(g, "inProcess", B, ifWorks(SEES_POISON));
    expect(control.verdict, "positive control: the planted marker is visible on the unprotected backend").toBe("pass");
    for (const f of [POISON_FILE, "sitecustomize.py", "agentlab-poison.pth"]) rmSync(`/tmp/${f}`, { force: true });
    for (const which of ["judge", "noCgroups"] as const) {
      await gradeWith(g, which, A, ifWorks(POISON));
      const next = await gradeWith(g, which, B, ifWorks(SEES_POISON));
      expect(WRONG.has(next.verdict), `${which}: ${next.verdict}`).toBe(true);
    }
  });

  it("rob: nothing of an earlier task's hidden tests or reference is in a later candidate's memory", async () => {
    const control = await gradeWith(
      g,
      "inProcess",
      B,
      ifWorks(SCAN_MEMORY.replace("return False", "return False"))
        .replace("_OK = bool(_attack())", "_OK = False")
        .replace("return x + 1 if (_OK or x == 1) else x", "return x + 1 if (x == 1 or _attack()) else x"),
    );
    expect(control.verdict, "positive control: in-process, the scan finds the task's own hidden marker").toBe("pass");
    for (const which of ["judge", "noCgroups"] as const) {
      expect((await gradeWith(g, which, A, A.reference[0]?.content ?? "")).verdict).toBe("pass");
      const later = await gradeWith(
        g,
        which,
        B,
        ifWorks(SCAN_MEMORY).replace(
          "return x + 1 if (_OK or x == 1) else x",
          "return x + 1 if (x == 1 or _OK or _attack()) else x",
        ),
      );
      expect(WRONG.has(later.verdict), `${which}: ${later.verdict}`).toBe(true);
    }
  });

  it("starve: a daemon, full tmpfs mounts and held memory do not outlive the candidate", async () => {
    const starve = [
      "import time",
      "if os.fork() == 0:",
      "    os.setsid()",
      "    if os.fork() == 0:",
      `        sys.argv[0] = 'agentlab-daemon-${RUN}'`,
      "        hog = bytearray(64 << 20)",
      "        os.execv('/usr/bin/python3', ['python3', '-c', 'import time; time.sleep(60)', 'agentlab-daemon-" +
        RUN +
        "'])",
      "    os._exit(0)",
      "for d in ('/tmp', '/dev/shm', os.environ.get('TMPDIR', '/tmp')):",
      "    try:",
      "        with open(os.path.join(d, 'fill'), 'wb') as fh:",
      "            while True: fh.write(b'x' * (1 << 20))",
      "    except OSError:",
      "        pass",
      "time.sleep(0.3)",
      "return False",
    ].join("\n");
    await gradeWith(g, "inProcess", A, ifWorks(starve));
    const daemons = () =>
      execFileSync("sh", ["-c", `pgrep -f agentlab-daemo[n]-${RUN} || true`])
        .toString()
        .trim();
    const until = async (ok: () => boolean) => {
      for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
      return ok();
    };
    expect(
      await until(() => daemons() !== ""),
      "positive control: on the unprotected backend the daemon survives",
    ).toBe(true);
    execFileSync("sh", ["-c", `pkill -9 -f agentlab-daemo[n]-${RUN} || true`]);
    expect(await until(() => daemons() === "")).toBe(true);
    for (const which of ["judge", "noCgroups"] as const) {
      await gradeWith(g, which, A, ifWorks(starve));
      const t0 = Date.now();
      const next = await gradeWith(g, which, B, B.reference[0]?.content ?? "");
      expect(next.verdict, `${which}: ${next.reasons.join("; ")}`).toBe("pass");
      expect(Date.now() - t0).toBeLessThan(6000);
      expect(daemons(), `${which}: no daemon left`).toBe("");
    }
  });
});

describe("the judge: limits hold with and without cgroups", () => {
  const forkMany =
    "import time\nmade = 0\nfor _ in range(200):\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n    if pid == 0:\n        time.sleep(20)\n        os._exit(0)\n    made += 1\nreturn made >= 200";
  it("200 processes: refused in the sandbox, possible unprotected", async () => {
    expect((await gradeWith(g, "inProcess", A, ifWorks(forkMany))).verdict, "positive control").toBe("pass");
    execFileSync("sh", ["-c", "pkill -u 0 -f 'time.slee[p](20)' || true"]);
    for (const which of ["judge", "noCgroups"] as const) {
      const r = await gradeWith(g, which, A, ifWorks(forkMany));
      expect(r.verdict === "pass", `${which}: ${r.verdict}`).toBe(false);
      expect(
        (await gradeWith(g, which, B, B.reference[0]?.content ?? "")).verdict,
        `${which}: the next grade is unaffected`,
      ).toBe("pass");
    }
  });
  it("a fork bomb ends as a limit, and the sandbox grades on", async () => {
    for (const which of ["judge", "noCgroups"] as const) {
      const r = await gradeWith(
        g,
        which,
        A,
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
      );
      expect(["resource_limit", "timeout", "fail_public"]).toContain(r.verdict);
      expect((await gradeWith(g, which, B, B.reference[0]?.content ?? "")).verdict).toBe("pass");
    }
  });
});

describe("the judge: special files and signals are not verdicts", () => {
  it("FIFOs in place of report files stall nothing and reach no report", async () => {
    const fifos =
      "n = 0\nfor p in ['/box/out/junit.xml', '/box/out/plugin.jsonl', '../out/junit.xml', '../out/plugin.jsonl', 'junit.xml', os.environ.get('TMPDIR', '/tmp') + '/junit.xml']:\n    try:\n        if os.path.exists(p): os.unlink(p)\n        os.mkfifo(p)\n        n += 1 if 'out' in p else 0\n    except OSError:\n        pass\nreturn False";
    const t0 = Date.now();
    const control = await gradeWith(g, "inProcess", A, ifWorks(fifos));
    expect(control.verdict, "positive control: unprotected, a FIFO in place of the report stalls the run").toBe(
      "timeout",
    );
    for (const which of ["judge", "noCgroups"] as const) {
      const r = await gradeWith(g, which, A, ifWorks(fifos));
      expect(WRONG.has(r.verdict), `${which}: ${r.verdict}`).toBe(true);
    }
    expect(Date.now() - t0).toBeLessThan(15_000);
  });

  it("SIGTERM, SIGINT, SIGHUP, SIGUSR1 and SIGUSR2 sent to the sandbox's whole tree change no verdict", async () => {
    const slow = "import time\ndef f(x):\n    time.sleep(0.4)\n    return x + 1\n";
    const grading = gradeWith(g, "judge", A, slow);
    await new Promise((r) => setTimeout(r, 500));
    const pids = g.judge.sandboxes().flatMap((s) => s.processes);
    expect(pids.length).toBeGreaterThan(2);
    const probe = spawn("python3", ["-c", "import time; time.sleep(30)"]);
    await new Promise((r) => setTimeout(r, 200));
    for (const sig of ["SIGTERM", "SIGINT", "SIGHUP", "SIGUSR1", "SIGUSR2"] as const) {
      for (const pid of pids) {
        try {
          process.kill(pid, sig);
        } catch {
          // exited meanwhile
        }
      }
      if (probe.pid) process.kill(probe.pid, sig);
    }
    const r = await grading;
    expect(r.verdict, r.reasons.join("; ")).toBe("pass");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(
      probe.exitCode !== null || probe.signalCode !== null,
      "positive control: the same signals end an ordinary process",
    ).toBe(true);
  });

  it("an abort (the agent's shutdown or a cancel) ends the grade as infra_error, at once", async () => {
    const ids = (await g.judge.referenceIds(A)).ids;
    const ac = new AbortController();
    const t0 = Date.now();
    const pending = g.judge.grade(A, [{ path: "solution.py", content: "import time\ntime.sleep(30)\n" }], {
      expectedIds: ids,
      signal: ac.signal,
    });
    setTimeout(() => ac.abort("shutdown"), 300);
    const r = await pending;
    expect(r.verdict).toBe("infra_error");
    expect(r.reasons.join(" ")).toContain("interrupted");
    expect(Date.now() - t0).toBeLessThan(3000);
    expect((await g.judge.grade(A, A.reference, { expectedIds: ids })).verdict).toBe("pass");
  });
});

it("leaves no poison file on the host", () => {
  for (const d of ["/", "/usr/lib", "/etc", "/opt", "/var/tmp", "/dev/shm"])
    expect(existsSync(`${d}/${POISON_FILE}`), d).toBe(false);
});
