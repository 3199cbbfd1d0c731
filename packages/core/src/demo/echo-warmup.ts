import { mulberry32 } from "../stats/random";
import type { TaskSpec } from "../tasks/spec";
import { formatAnswer } from "../teacher/answer";
import { renderRepairPrompt } from "../teacher/prompt";
import type { SftSample } from "../trainer/schemas";

type Rng = () => number;

// The tiny base's echo warm-up data. Random weights write nothing parseable, so before an
// experiment the base learns the answer format and copying: every sample is a TRAIN task's repair
// prompt answered with that task's buggy MAIN file unchanged ("echo"). The repair is never shown
// here (the CPU demo preset adds the real repairs of some train shapes on purpose, so its base
// is not at 0%: cpu-demo.ts). Copies with identifiers and integers renamed (to identifiers and integers of
// other train tasks) teach copying rather than memorising the train functions. Only the train
// tasks passed in are read: dev and test text never reaches the base.

const KEEP = new Set(
  "def return for in if else elif while and or not is lambda True False None sum all any len range int str list print import from solution noqa test assert".split(
    " ",
  ),
);
const IDENT = /\b[A-Za-z_][A-Za-z0-9_]*\b/g;

const mainCode = (t: TaskSpec) =>
  t.files
    .filter((f) => f.role === "main")
    .map((f) => f.content)
    .join("\n");
const names = (code: string) =>
  [...new Set(code.match(IDENT) ?? [])].filter((n) => !KEEP.has(n) && !n.startsWith("test_"));

function renamed(t: TaskSpec, pool: readonly string[], ints: readonly number[], r: Rng): TaskSpec {
  const map = new Map<string, string>();
  if (pool.length) for (const n of names(mainCode(t))) map.set(n, pool[Math.floor(r() * pool.length)] ?? n);
  const numMap = new Map<string, string>();
  const sub = (s: string) =>
    s
      .replace(IDENT, (m) => map.get(m) ?? m)
      .replace(/\b\d+\b/g, (m) => {
        if (!numMap.has(m)) numMap.set(m, String(ints[Math.floor(r() * ints.length)] ?? m));
        return numMap.get(m) ?? m;
      });
  // Test function names and the import header are left as they are (`test_example_1`, F401).
  const subTest = (s: string) => s.replace(/^( {4}assert .*)$/gm, (line) => sub(line));
  return {
    ...t,
    instruction: t.instruction.replace(/`([^`]+)`/g, (_, n: string) => `\`${map.get(n) ?? n}\``),
    files: t.files.map((f) => ({ ...f, content: f.role === "main" ? sub(f.content) : f.content })),
    public_tests: t.public_tests.map((f) => ({ ...f, content: subTest(f.content) })),
  };
}

const echo = (t: TaskSpec): SftSample => {
  const answer = formatAnswer(
    t.files.filter((f) => f.role === "main").map((f) => ({ path: f.path, content: f.content })),
  );
  return { messages: [...renderRepairPrompt(t), { role: "assistant", content: answer }] };
};

/** `1 + copies` echo samples per train task (the original, then renamed copies); deterministic for `seed`. */
export function echoWarmupSamples(
  train: readonly TaskSpec[],
  opts: { copies: number; seed: number; identifiers?: boolean; bundle?: number },
): SftSample[] {
  const pool = opts.identifiers ? [...new Set(train.flatMap((t) => names(mainCode(t))))].sort() : [];
  const ints = [...new Set(train.flatMap((t) => (mainCode(t).match(/\b\d+\b/g) ?? []).map(Number)))].sort(
    (a, b) => a - b,
  );
  const r = mulberry32(opts.seed);
  const out: SftSample[] = [];
  for (const t of train) {
    out.push(echo(t));
    for (let i = 0; i < opts.copies; i++) {
      const copy = renamed(t, pool, ints, r);
      // Bundled copies: the MAIN file holds several renamed train functions, so one sample carries
      // several constants to copy instead of one (the copy signal is otherwise one token a sample).
      const extra = Array.from({ length: Math.max(0, (opts.bundle ?? 1) - 1) }, () =>
        renamed(train[Math.floor(r() * train.length)] ?? t, pool, ints, r),
      );
      const files = copy.files.map((f) =>
        f.role === "main" ? { ...f, content: [f.content, ...extra.map(mainCode)].join("\n") } : f,
      );
      out.push(echo({ ...copy, files }));
    }
  }
  return out;
}
