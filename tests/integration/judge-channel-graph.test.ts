import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import type { TaskSpec } from "@agentlab/core";
import { closeGraders, gradeWith, makeGraders, probeTask, type Graders } from "./helpers/judge";

// The channel's object graph, attacked by a candidate that reads the grader's code: global
// references that walk attribute chains to os/exec, and judge objects (tmp_path, a generator's
// frame, a callback's result) browsed over the channel. Each probe is a wrong fix that passes only
// when its attack works; the positive control is in-process grading (the candidate inside the
// judge's own pytest, where every one of these objects is simply there), and the judge must grade
// it a failure. A hostile candidate patches its own end of the channel (agentlab_grader.wire's
// global_name) to send the references it wants: the judge decides what they resolve to.

const MARKER = `hidden-marker-${randomBytes(6).toString("hex")}`;
const SHAPE = String.raw`hidden-marker-[0-9a-f]{12}`;
let g: Graders;
beforeAll(() => {
  g = makeGraders();
});
afterAll(() => closeGraders(g));
const WRONG = new Set(["fail_public", "fail_hidden"]);

/** A task whose hidden test is `body` (with SECRET = the marker in its module); the reference is `reference`. */
function task(id: string, main: string, reference: string, body: string): TaskSpec {
  const t = probeTask(`graph-${id}`, MARKER);
  t.files = [{ path: "solution.py", role: "main", content: main }];
  t.public_tests = [{ path: "test_public.py", content: "import solution\n\ndef test_loads():\n    assert solution\n" }];
  t.hidden_tests = [{ path: "test_secret.py", content: `SECRET = "${MARKER}"\n${body}` }];
  t.reference = [{ path: "solution.py", content: reference }];
  return t;
}

async function expectContained(t: TaskSpec, attack: string, evidence?: RegExp) {
  expect((await gradeWith(g, "inProcess", t, attack)).verdict, "positive control: in-process the attack passes").toBe(
    "pass",
  );
  for (const which of ["judge", "noCgroups"] as const) {
    const r = await gradeWith(g, which, t, attack);
    expect(WRONG.has(r.verdict), `${which}: ${r.verdict} ${r.reasons.join("; ")}`).toBe(true);
    if (evidence) expect(r.stdoutTail, which).toMatch(evidence);
  }
}

/** Candidate code that makes its end of the channel send `obj` as the global (module, qual). */
const sendAs = (obj: string, module: string, qual: string) =>
  [
    "import sys as _sys",
    "_w = _sys.modules.get('agentlab_grader.wire')",
    "if _w is not None:",
    "    _g = _w.global_name",
    `    _w.global_name = lambda o, p: (${JSON.stringify(module)}, ${JSON.stringify(qual)}) if o is ${obj} else _g(o, p)`,
  ].join("\n");

describe("the judge: a global reference resolves by exact name, never through an attribute chain", () => {
  const OP_TEST =
    "from solution import make_op, sample\n\ndef test_op():\n    op = make_op()\n    print('op:', repr(op))\n    assert not op(sample())\n";
  const chains: [string, string, string][] = [
    ["os.system", "random", "_os.system"],
    ["builtins.exec", "builtins", "print.__self__.exec"],
    ["builtins.exec", "dataclasses", "builtins.exec"],
  ];
  for (const [obj, module, qual] of chains)
    it(`${module}.${qual}`, async () => {
      const marker = `/tmp/agentlab-chain-${randomBytes(5).toString("hex")}`;
      const t = task(
        `chain-${module}-${qual.replace(/\W/g, "")}`,
        "def make_op():\n    return lambda s: 1\n\ndef sample():\n    return ''\n",
        "def make_op():\n    return lambda s: 0\n\ndef sample():\n    return ''\n",
        OP_TEST,
      );
      const sideEffect = obj === "os.system" ? `'touch ${marker}'` : `"open('${marker}', 'w').close()"`;
      const attack = `import os, builtins\n${sendAs(obj, module, qual)}\n\ndef make_op():\n    return ${obj}\n\ndef sample():\n    return ${sideEffect}\n`;
      expect((await gradeWith(g, "inProcess", t, attack)).verdict, "positive control").toBe("pass");
      expect(existsSync(marker), "positive control: the payload ran in the judge's process").toBe(true);
      rmSync(marker, { force: true });
      for (const which of ["judge", "noCgroups"] as const) {
        const r = await gradeWith(g, which, t, attack);
        expect(r.verdict, `${which}: ${r.reasons.join("; ")}`).toBe("fail_hidden");
        // The candidate's patched end did send the chained name, and the judge resolved nothing.
        expect(r.stdoutTail).toContain(`op: <${module}.${qual}: a global the judge does not resolve`);
      }
    });
});

describe("the judge: judge objects handed to the candidate are opaque", () => {
  it("tmp_path: its parents do not lead to the workspace and the hidden tests", () =>
    expectContained(
      task(
        "tmp-path",
        "def save(path):\n    path.write_text('x')\n    return 0\n",
        "def save(path):\n    path.write_text('x')\n    return 1\n",
        "from solution import save\n\ndef test_save(tmp_path):\n    assert save(tmp_path / 'out.txt') == 1\n    assert (tmp_path / 'out.txt').read_text() == 'x'\n",
      ),
      [
        "import re",
        "def save(path):",
        "    path.write_text('x')",
        "    # Every step a method of the object the test handed over: judge-side calls, were it a handle.",
        "    up = path",
        "    for _ in range(4):",
        "        up = up.parent",
        "        for f in list(up.glob('**/test_*.py'))[:200]:",
        "            try:",
        `                if re.search(r'${SHAPE}', f.read_text()): return 1`,
        "            except OSError: pass",
        "    return 0",
      ].join("\n"),
    ));
  it("a generator expression's frame does not reach the test module's globals", () =>
    expectContained(
      task(
        "gen-frame",
        "def total(items):\n    return sum(items) - 1\n",
        "def total(items):\n    return sum(items)\n",
        "from solution import total\n\ndef test_total():\n    assert total(v for v in [1, 2]) == 3\n",
      ),
      `import re\ndef total(items):\n    try:\n        found = re.search(r'${SHAPE}', str(items.gi_frame.f_globals))\n    except Exception:\n        found = None\n    return sum(items) - (0 if found else 1)\n`,
    ));
  it("a callback that returns its argument hands back nothing browsable (a loader reading the tests)", () =>
    expectContained(
      task(
        "loader",
        "def pick(items, key):\n    return min(items)\n",
        "def pick(items, key):\n    return max(items, key=key)\n",
        "from solution import pick\n\ndef test_pick():\n    assert pick([3, 1, 2], key=lambda x: x) == 3\n",
      ),
      [
        "import glob, random, re",
        sendAs("random.__loader__", "random", "__loader__"),
        "def pick(items, key):",
        "    try:",
        "        loader = key(random.__loader__)",
        "        for f in glob.glob('/box/ws/test_*.py') + glob.glob('test_*.py'):",
        `            if re.search(r'${SHAPE}', loader.get_data(f).decode()): return max(items)`,
        "    except Exception:",
        "        pass",
        "    return min(items)",
      ].join("\n"),
    ));
});
