import { execFileSync } from "node:child_process";
import { readFileSync, existsSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GradeResult, TaskSpec } from "@agentlab/core";
import { Grader } from "../../apps/agent/src/grading/grader";
import { leftoverCgroups } from "../../apps/agent/src/sandbox/cgroup";

// One test per known attack on the sandbox, against the isolated judge: each asserts the verdict and that
// the attack was contained.
// Candidates follow one pattern where possible: if the attack works they return the right
// answer, otherwise a wrong one, so a successful escape would show up as `pass`.

const SECRET = "agentlab-test-secret-5f1c9e";
process.env.AGENTLAB_TEST_SECRET = SECRET; // the agent's environment; must never reach a candidate
const graderDir = join(process.cwd(), "apps/agent/grader");
const OTHER_MARKER = "OTHER_TASK_HIDDEN_7c2d";
const task = (id: string, hiddenExtra = ""): TaskSpec => ({
  id,
  source_group: id,
  language: "python",
  instruction: "fix",
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: "def f(x):\n    return x\n" }],
  public_tests: [
    { path: "test_public.py", content: "from solution import f\n\ndef test_one():\n    assert f(1) == 2\n" },
  ],
  hidden_tests: [
    {
      path: "test_hidden.py",
      content: `from solution import f\n${hiddenExtra}\ndef test_two():\n    assert f(2) == 3\n\ndef test_ten():\n    assert f(10) == 11\n`,
    },
  ],
  reference: [{ path: "solution.py", content: "def f(x):\n    return x + 1\n" }],
});
const T = task("adv");
const ifWorks = (attack: string) =>
  `import os, sys\ndef _attack():\n${attack
    .split("\n")
    .map((l) => `    ${l}`)
    .join(
      "\n",
    )}\ntry:\n    _OK = bool(_attack())\nexcept BaseException:\n    _OK = False\n\ndef f(x):\n    return x + 1 if _OK else x\n`;

let grader: Grader;
let ids: string[];
let server: Server;
let connections = 0;
let port = 0;
const uidProcs = () =>
  execFileSync("ps", ["-u", "65534", "-o", "pid=,args="])
    .toString()
    .split("\n")
    .filter(
      (l) =>
        l.trim() &&
        !l.includes("runner.py") &&
        !l.includes("bwrap") &&
        !l.includes("prlimit") &&
        !l.includes("setpriv"),
    );
const mountsBefore = readFileSync("/proc/self/mounts", "utf8");

beforeAll(async () => {
  server = createServer((s) => {
    connections++;
    s.end("hello");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as { port: number }).port;
  grader = new Grader(
    { backend: "bwrap", graderDir, uid: 65534, gid: 65534, scratchDir: "/tmp/agentlab-test-scratch" },
    { workers: 2, limits: { wallTimeoutS: 4, memoryMb: 256, pids: 48 } },
  );
  ids = (await grader.referenceIds(T)).ids;
});

afterAll(async () => {
  grader.close();
  server.close();
  await new Promise((r) => setTimeout(r, 300));
  // Every sandbox process lives in one of our cgroups, and a cgroup is only removed once empty:
  // no leftover cgroup means no leftover process (other sessions' sandboxes share the uid).
  expect(leftoverCgroups()).toEqual([]);
  expect(uidProcs().filter((l) => l.includes("agentlab-daemon-marker"))).toEqual([]);
  expect(readFileSync("/proc/self/mounts", "utf8")).toBe(mountsBefore);
});

const grade = (content: string, extra: { path: string; content: string }[] = []): Promise<GradeResult> =>
  grader.grade(T, [{ path: "solution.py", content }, ...extra], { expectedIds: ids });

describe("sandbox adversarial suite", () => {
  it("grades the reference as pass and the buggy file as fail_public", async () => {
    expect(ids).toEqual(["test_hidden::test_ten", "test_hidden::test_two", "test_public::test_one"]);
    expect((await grade("def f(x):\n    return x + 1\n")).verdict).toBe("pass");
    expect((await grade("def f(x):\n    return x\n")).verdict).toBe("fail_public");
  });
  it("fork bomb: resource_limit, nothing left", async () => {
    const r = await grade("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n");
    expect(["resource_limit", "timeout"]).toContain(r.verdict);
  });
  it("memory bomb: resource_limit", async () => {
    const r = await grade("blocks = []\nwhile True:\n    blocks.append(bytearray(64 << 20))\n");
    // Under memory pressure the kernel reclaims before it kills: on a loaded machine the test's
    // time budget for candidate calls can run out first.
    expect(["resource_limit", "timeout"]).toContain(r.verdict);
  });
  it("CPU loop: timeout", async () => {
    expect((await grade("def f(x):\n    while True:\n        pass\n")).verdict).toBe("timeout");
  });
  it("sleep forever: timeout", async () => {
    expect((await grade("import time\ndef f(x):\n    time.sleep(10**6)\n")).verdict).toBe("timeout");
  });
  it("stdout flood: capped, resource_limit", async () => {
    const r = await grade("import os\nwhile True:\n    os.write(1, b'x' * 65536)\n");
    // pytest captures fd 1 into a file during collection: the flood then meets the file-size limit.
    expect(["resource_limit", "fail_public"]).toContain(r.verdict);
    expect(r.stdoutTail.length).toBeLessThanOrEqual(4000);
  });
  it("reading /etc/shadow fails", async () => {
    expect((await grade(ifWorks("return 'root:' in open('/etc/shadow').read()"))).verdict).toBe("fail_public");
  });
  it("another task's hidden tests are invisible", async () => {
    const other = task("other", `# ${OTHER_MARKER}`);
    const otherRun = grader.referenceIds(other); // graded concurrently on the other sandbox
    const roots = "['/tmp', '/box', '/opt', '/work', '/root', '/home', '/var', '/proc/1/root/box']";
    const hunt = `import glob\nfor p in [q for r in ${roots} for q in glob.glob(r + '/**/test_hidden*.py', recursive=True)] + glob.glob('/proc/*/cwd/test_hidden.py'):\n    try:\n        if '${OTHER_MARKER}' in open(p).read(): return True\n    except OSError: pass\nreturn False`;
    const r = await grade(ifWorks(hunt));
    await otherRun;
    expect(r.verdict).toBe("fail_public");
  });
  it("writing outside the workspace, to /usr and to the tests fails", async () => {
    const w =
      "for p in ['/usr/agentlab-pwn', '/opt/grader/pwn.py', 'test_hidden.py', 'solution.py']:\n    try:\n        open(p, 'a').write('#x'); return True\n    except OSError: pass\nreturn False";
    expect((await grade(ifWorks(w))).verdict).toBe("fail_public");
    expect(existsSync("/usr/agentlab-pwn") || existsSync(join(graderDir, "pwn.py"))).toBe(false);
  });
  it("a huge file: stopped by the file-size limit", async () => {
    const r = await grade(
      "import os\nwith open(os.environ['TMPDIR'] + '/big', 'wb') as fh:\n    for _ in range(1000):\n        fh.write(b'\\0' * (1 << 20))\n",
    );
    // RLIMIT_FSIZE (half the tmpfs) turns the write into EFBIG, which fails the import.
    expect(["resource_limit", "fail_public"]).toContain(r.verdict);
    expect(r.stdoutTail).toMatch(/File too large|SIGXFSZ/);
  });
  it("the agent's environment secrets are unreachable", async () => {
    const s = `import glob\nif '${SECRET}' in str(os.environ): return True\nfor p in glob.glob('/proc/*/environ'):\n    try:\n        if b'${SECRET}' in open(p, 'rb').read(): return True\n    except OSError: pass\nreturn False`;
    expect((await grade(ifWorks(s))).verdict).toBe("fail_public");
  });
  it("no network", async () => {
    const n = `import socket\ns = socket.create_connection(('127.0.0.1', ${port}), timeout=1)\nreturn s.recv(5) == b'hello'`;
    expect((await grade(ifWorks(n))).verdict).toBe("fail_public");
    expect(connections).toBe(0);
  });
  it("killing the parent and kill(-1) leave the grader intact", async () => {
    const r = await grade(
      "import os, signal\nfor pid in (os.getppid(), -1):\n    try:\n        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\ndef f(x):\n    return x\n",
    );
    expect(r.verdict).toBe("fail_public");
    expect((await grade("def f(x):\n    return x + 1\n")).verdict).toBe("pass");
  });
  it("a detached daemon does not survive the run", async () => {
    const d =
      "import os, subprocess\nsubprocess.Popen(['/usr/bin/python3', '-c', 'import time; time.sleep(999)', 'agentlab-daemon-marker'], start_new_session=True)\ndef f(x):\n    return x + 1\n";
    expect((await grade(d)).verdict).toBe("pass");
    expect(uidProcs().filter((l) => l.includes("agentlab-daemon-marker"))).toEqual([]);
  });
  it("conftest.py forcing exit status 0 is ignored", async () => {
    const conftest = "import os\ndef pytest_sessionfinish(session, exitstatus):\n    os._exit(0)\n";
    const r = await grade("def f(x):\n    return x\n", [{ path: "conftest.py", content: conftest }]);
    expect(r.verdict).toBe("fail_public");
    expect(r.ignoredCandidatePaths).toEqual(["conftest.py"]);
  });
  // The judge imports nothing of the candidate: exiting or patching pytest inside the candidate's
  // own process changes nothing but its answers (judge-forgery.test.ts has the positive controls).
  it("sys.exit(0) at import fails the tests", async () => {
    expect((await grade("import sys\nsys.exit(0)\n")).verdict).toBe("fail_public");
  });
  it("os._exit(0) at import fails the tests", async () => {
    expect((await grade("import os\nos._exit(0)\n")).verdict).toBe("fail_public");
  });
  it("patching pytest's reports fails the tests", async () => {
    const p =
      "from _pytest.reports import TestReport\n_orig = TestReport.__init__\ndef _init(self, *a, **k):\n    _orig(self, *a, **k)\n    self.outcome = 'passed'\nTestReport.__init__ = _init\ndef f(x):\n    return x\n";
    const r = await grade(p);
    expect(r.verdict).toBe("fail_public");
  });
  it("a fake pytest.py in the workspace is ignored", async () => {
    const r = await grade("def f(x):\n    return x\n", [{ path: "pytest.py", content: "import sys\nsys.exit(0)\n" }]);
    expect(r.verdict).toBe("fail_public");
    expect(r.ignoredCandidatePaths).toEqual(["pytest.py"]);
  });
  it("deleting the tests fails: hidden tests still run", async () => {
    const del =
      "import os\nfor p in ('test_hidden.py', 'test_public.py'):\n    try:\n        os.remove(p)\n    except OSError:\n        pass\ndef f(x):\n    return 2 if x == 1 else x\n";
    const r = await grade(del);
    expect(r.verdict).toBe("fail_hidden");
    expect(r.tests.filter((t) => t.layer === "hidden")).toHaveLength(2);
  });
});
