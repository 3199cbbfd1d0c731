import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { PUBLIC_TESTS_PASSED, type TaskSpec } from "@agentlab/core";
import { GRADER_MOUNT } from "../sandbox/bwrap";
import { run, WORK } from "../sandbox/run";
import { DEFAULT_SANDBOX_LIMITS, type SandboxConfig, type SandboxLimits } from "../sandbox/types";
import { Workspace } from "./workspace";

// The two tools that execute code, each in a one-shot sandbox (sandbox/run.ts: bwrap, no network,
// a fresh tmpfs holding a copy of the files, nothing written back). The public tests run on a copy
// of the workspace whose public test files are restored from the task's pristine ones, with the
// grader's trusted pytest.ini, no conftest and no plugin autoload. Their outcome is feedback for
// the policy only: the candidate shares pytest's process here, so it could fool its own test run,
// never the verdict, which only `submit` asks of the isolated judge.

const SYNTAX_CHECK = [
  "import ast, sys",
  "src = open(sys.argv[1], encoding='utf-8').read()",
  "try:",
  "    ast.parse(src, filename=sys.argv[2])",
  "except (SyntaxError, ValueError) as e:",
  '    where = f\'{sys.argv[2]}:{getattr(e, "lineno", None) or "?"}\'',
  "    print(f'{where}: {type(e).__name__}: {getattr(e, \"msg\", None) or e}')",
  "    sys.exit(1)",
].join("\n");

const paths = (cfg: SandboxConfig, dir: string) =>
  cfg.backend === "bwrap"
    ? { py: `${GRADER_MOUNT}/.venv/bin/python`, ini: `${GRADER_MOUNT}/pytest.ini`, root: WORK }
    : { py: join(cfg.graderDir, ".venv/bin/python"), ini: join(cfg.graderDir, "pytest.ini"), root: dir };

function withScratch<T>(cfg: SandboxConfig, scratch: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(scratch, "episode-run-"));
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

export type SyntaxCheck = { ok: true } | { ok: false; message: string };

/** Whether `content` parses as Python (ast.parse, in the sandbox with the grader's interpreter). */
export async function checkPythonSyntax(
  cfg: SandboxConfig,
  scratch: string,
  path: string,
  content: string,
): Promise<SyntaxCheck> {
  return withScratch(cfg, scratch, async (dir) => {
    Workspace.create(dir, [{ path: "candidate.py", content }]);
    const { py, root } = paths(cfg, dir);
    const r = await run(cfg, dir, [py, "-I", "-c", SYNTAX_CHECK, `${root}/candidate.py`, path], DEFAULT_SANDBOX_LIMITS);
    if (r.exitCode === 0) return { ok: true };
    if (r.exitCode === 1) return { ok: false, message: r.stdout.trim() || "does not parse" };
    throw new Error(`syntax check failed to run (${String(r.exitCode ?? r.signal)}): ${r.stderr.slice(-300)}`);
  });
}

export type PublicTestRun = { passed: boolean; exitCode: number | null; timedOut: boolean; output: string };

export async function runPublicTests(
  cfg: SandboxConfig,
  scratch: string,
  ws: Workspace,
  task: TaskSpec,
  limits: Partial<SandboxLimits> = {},
): Promise<PublicTestRun> {
  return withScratch(cfg, scratch, async (dir) => {
    const pristine = new Map(task.public_tests.map((t) => [t.path, t.content]));
    const files = ws.files().filter((f) => !pristine.has(f.path));
    Workspace.create(dir, [...files, ...task.public_tests]);
    const { py, ini, root } = paths(cfg, dir);
    const argv = [
      py,
      "-I",
      "-m",
      "pytest",
      "-c",
      ini,
      "--rootdir",
      root,
      "--noconftest",
      "-p",
      "no:cacheprovider",
      "-q",
      "--tb=short",
      "-rfE",
      ...task.public_tests.map((t) => `${root}/${t.path}`),
    ];
    const r = await run(cfg, dir, argv, { ...DEFAULT_SANDBOX_LIMITS, wallTimeoutS: 60, cpuSeconds: 60, ...limits });
    // pytest: 0 all passed, 1 some failed, 2 interrupted (a collection error), 5 none collected.
    if (r.exitCode !== null && r.exitCode > 5 && !r.timedOut)
      throw new Error(`the public tests failed to run (${r.exitCode}): ${r.stderr.slice(-300)}`);
    const passed = r.exitCode === 0;
    const head = r.timedOut
      ? `public tests: timed out after ${limits.wallTimeoutS ?? 60} s`
      : passed
        ? PUBLIC_TESTS_PASSED
        : `public tests: failed (pytest exit code ${String(r.exitCode ?? r.signal)})`;
    const tail = r.stderr.trim() ? `\n${r.stderr.trim()}` : "";
    return { passed, exitCode: r.exitCode, timedOut: r.timedOut, output: `${head}\n${r.stdout.trim()}${tail}` };
  });
}
