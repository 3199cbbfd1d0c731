import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import {
  closeGraders,
  gradeWith,
  ifWorks,
  makeGraders,
  naiveGrade,
  probeTask,
  wrongWith,
  type Graders,
} from "./helpers/judge";

// Forging a verdict from inside the candidate: patching pytest, unittest or builtins,
// forging the reports, always-equal values, and reading the hidden tests or the reference. Every
// probe is a wrong fix that only passes if its attack works. Each runs three times: against the
// naive grader (positive control: the attack must work there), the isolated judge and the judge
// without cgroups (it must fail there, with the verdict a wrong fix deserves).

const MARKER = `hidden-marker-${randomBytes(6).toString("hex")}`;
// Probes look for the marker's shape, never its value: a probe that carried the secret would find
// itself (its own source, its own memory) and prove nothing.
const SHAPE = String.raw`hidden-marker-[0-9a-f]{12}`;
const T = probeTask("forgery", MARKER);
const TU = probeTask("forgery-unittest", MARKER, "unittest");
const TH = probeTask("forgery-helpers", MARKER, "helpers");
const TB = probeTask("forgery-builtins", MARKER, "builtins");
let g: Graders;
beforeAll(() => {
  g = makeGraders();
});
afterAll(() => closeGraders(g));

const WRONG = new Set(["fail_public", "fail_hidden"]);

async function expectContained(name: string, candidate: string, task = T) {
  expect(naiveGrade(task, candidate), `${name}: positive control — the attack must forge the naive grader`).toBe(
    "pass",
  );
  for (const which of ["judge", "noCgroups"] as const) {
    const r = await gradeWith(g, which, task, candidate);
    expect(WRONG.has(r.verdict), `${name} under ${which}: ${r.verdict} ${r.reasons.join("; ")}`).toBe(true);
  }
}

describe("the judge: in-process patching cannot forge a verdict", () => {
  const patches: Record<string, string> = {
    "pytest's report factory":
      "from _pytest.reports import TestReport\n_o = TestReport.__init__\ndef _i(self, *a, **k):\n    _o(self, *a, **k)\n    self.outcome = 'passed'\nTestReport.__init__ = _i",
    "Function.runtest": "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None",
    "the assertion rewriter (asserts compiled away)":
      "import _pytest.assertion.rewrite as _r\n_r.AssertionRewritingHook.exec_module = lambda self, m: exec(compile(open(m.__file__).read(), m.__file__, 'exec', optimize=2), m.__dict__)",
    "a plugin registered through gc": [
      "import gc, pytest",
      "class _Evil:",
      "    @pytest.hookimpl(tryfirst=True)",
      "    def pytest_runtest_call(self, item):",
      "        item.runtest = lambda: None",
      "for _o in gc.get_objects():",
      "    if type(_o).__name__ == 'Config' and hasattr(_o, 'pluginmanager'):",
      "        _o.pluginmanager.register(_Evil(), 'evil')",
    ].join("\n"),
    "the JUnit hook and the exit status": [
      "import _pytest.junitxml, _pytest.main, atexit, os",
      "_o = _pytest.junitxml.LogXML.pytest_runtest_logreport",
      "def _lr(self, report):",
      "    report.outcome = 'passed'",
      "    return _o(self, report)",
      "_pytest.junitxml.LogXML.pytest_runtest_logreport = _lr",
      "atexit.register(lambda: os._exit(0))",
    ].join("\n"),
    "reports rewritten by a thread and a daemon at exit": [
      "import atexit, glob, os, sys, threading",
      '_REPORT = \'<testsuites><testsuite><testcase classname="test_public" name="test_one"/></testsuite></testsuites>\'',
      "def _paths():",
      "    named = [a.split('=', 1)[1] for a in sys.argv if a.startswith('--junitxml=')]",
      "    return named + glob.glob('/box/out/*') + glob.glob('../out/*') + glob.glob('/tmp/**/*.xml', recursive=True)",
      "def _forge():",
      "    for p in _paths():",
      "        try:",
      "            open(p, 'w').write(_REPORT)",
      "        except OSError:",
      "            pass",
      "def _daemon():",
      "    if os.fork() == 0:",
      "        os.setsid()",
      "        for _ in range(50):",
      "            _forge()",
      "            __import__('time').sleep(0.02)",
      "        os._exit(0)",
      "_daemon()",
      "atexit.register(lambda: (threading.Thread(target=_forge).start(), _forge()))",
    ].join("\n"),
    "os._exit(0) while the tests import it": "import os\nos._exit(0)",
  };
  for (const [name, patch] of Object.entries(patches)) it(name, () => expectContained(name, wrongWith(patch)));

  it("no-op unittest assertions", () =>
    expectContained(
      "unittest",
      wrongWith("import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None"),
      TU,
    ));
  it("patched builtins", () =>
    expectContained(
      "builtins",
      wrongWith("import builtins\nbuiltins.abs = lambda x: 0\nbuiltins.round = lambda *a: 3"),
      TB,
    ));
  it("a star import cannot shadow the helpers the tests use", () =>
    expectContained("shadowing", wrongWith("abs = lambda x: 0\nisclose = lambda *a, **k: True"), TH));
});

describe("the judge: values cross by value only", () => {
  const forged: Record<string, string> = {
    "an always-equal object":
      "class _E:\n    def __eq__(self, o):\n        return True\n    def __sub__(self, o):\n        return 0\n    __rsub__ = __sub__\n    def __abs__(self):\n        return 0\ndef f(x):\n    return x + 1 if x == 1 else _E()\n",
    "an int subclass with a forged __eq__":
      "class _I(int):\n    def __eq__(self, o):\n        return True\n    def __sub__(self, o):\n        return 0\n    __hash__ = int.__hash__\ndef f(x):\n    return x + 1 if x == 1 else _I(x)\n",
    "a list subclass whose __eq__ is always true":
      "class _L(list):\n    def __eq__(self, o):\n        return True\ndef f(x):\n    return x + 1 if x == 1 else _L()\n",
  };
  for (const [name, candidate] of Object.entries(forged)) it(name, () => expectContained(name, candidate));
});

describe("the judge: a global the candidate names never runs in the judge", () => {
  it("os.system returned to a test that calls it with the candidate's payload", async () => {
    const marker = `/tmp/agentlab-global-${randomBytes(5).toString("hex")}`;
    const task = probeTask("forgery-global", MARKER);
    task.files = [
      {
        path: "solution.py",
        role: "main",
        content: "def make_op():\n    return lambda s: 1\n\ndef sample():\n    return 'x'\n",
      },
    ];
    task.public_tests = [
      {
        path: "test_public.py",
        content: "from solution import sample\n\ndef test_sample():\n    assert isinstance(sample(), str)\n",
      },
    ];
    task.hidden_tests = [
      {
        path: "test_secret.py",
        content:
          "from solution import make_op, sample\n\ndef test_op():\n    op = make_op()\n    assert op(sample()) == 0\n",
      },
    ];
    task.reference = [
      { path: "solution.py", content: "def make_op():\n    return lambda s: 0\n\ndef sample():\n    return 'x'\n" },
    ];
    const attack = `import os, subprocess\n\ndef make_op():\n    return os.system\n\ndef sample():\n    return 'touch ${marker}'\n`;
    expect(naiveGrade(task, attack), "positive control: the naive grader runs the command and passes").toBe("pass");
    expect(existsSync(marker)).toBe(true);
    rmSync(marker, { force: true });
    for (const which of ["judge", "noCgroups"] as const) {
      const r = await gradeWith(g, which, task, attack);
      expect(r.verdict, `${which}: ${r.reasons.join("; ")}`).toBe("fail_hidden");
    }
    const unsandboxedJudge = await gradeWith(g, "inProcess", task, attack.replace("os.system", "subprocess.Popen"));
    expect(unsandboxedJudge.verdict).not.toBe("pass");
    expect(existsSync(marker), "no command ran").toBe(false);
  });
});

describe("the judge: hidden tests and the reference never enter the candidate's sandbox", () => {
  const scan = (roots: string) =>
    `import glob, re\nfor p in [q for r in ${roots} for q in glob.glob(r + '/**/*', recursive=True)] + glob.glob('/proc/*/cwd/*') + glob.glob('/proc/*/root/box/**/*', recursive=True):\n    try:\n        if re.search(r'${SHAPE}', open(p, errors='ignore').read()): return True\n    except OSError: pass\nreturn False`;
  it("files anywhere it can list", () =>
    expectContained(
      "file scan",
      ifWorks(scan("['.', '..', '/box', '/tmp', '/opt', '/dev/shm', '/work', '/root', '/home', '/var/tmp']")),
    ));
  it("the caller's frames and the interpreter's objects", () =>
    expectContained(
      "frames and gc",
      ifWorks(
        "return False",
        `import gc, inspect, re\ndef _peek():\n    pat = re.compile(r'${SHAPE}')\n    for fr in inspect.stack():\n        if any(pat.search(str(v)) for v in fr.frame.f_globals.values()):\n            return True\n    return any(type(o) is str and pat.search(o) for o in gc.get_objects())\n`,
      ).replace("return x + 1 if (_OK or x == 1) else x", "return x + 1 if (_peek() or x == 1) else x"),
    ));
  it("its own memory, scanned when the hidden tests call it", () => {
    const scanMemory = `import re\n_PAT = re.compile(rb'${SHAPE}')\ndef _peek():\n    mem = open('/proc/self/mem', 'rb', 0)\n    for line in open('/proc/self/maps'):\n        m = re.match(r'([0-9a-f]+)-([0-9a-f]+) r', line)\n        if not m: continue\n        a, b = int(m.group(1), 16), int(m.group(2), 16)\n        if b - a > 1 << 28: continue\n        try:\n            mem.seek(a)\n            if _PAT.search(mem.read(b - a)): return True\n        except (OSError, ValueError, OverflowError): pass\n    return False\n`;
    return expectContained(
      "memory scan",
      ifWorks("return False", scanMemory).replace(
        "return x + 1 if (_OK or x == 1) else x",
        "return x + 1 if (x == 1 or _peek()) else x",
      ),
    );
  });
});
