import type { Program } from "./sources";

// The "learnable" task family: synthetic, disclosed, generated here — no third-party
// text. Each source group is one 2–5 line Python function with exactly one `<=` comparison; the
// bug synthesizer keeps only the `LtE -> Lt` mutant, so every task has the same repair (a strict
// `<` back to `<=`), a local edit a tiny model can learn from train groups and apply to unseen
// ones. Eight shapes (each with its own function name) × a constant in a dependency file that
// differs in every group, so no two groups share their code even up to whitespace and case (the
// normalized contamination check stays at 0 across splits); 13-gram overlap between same-shape
// groups, and a test task's fix equal to a same-shape train task's fix, are by design.
// Hidden tests sit on the boundary (they fail with `<`); the one public test does not.

export const LEARNABLE_BUG = "LtE -> Lt";

export type Rng = () => number;
// mulberry32: a fixed, tiny PRNG so the generated family is byte-identical for a seed.
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const int = (r: Rng, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

type Case = { call: string; expect: string };
type Shape = {
  fn: string;
  code: () => string;
  cases: (c: number) => Case[];
  publicCase: (c: number) => Case;
  cRange: [number, number];
};

const py = (v: unknown): string =>
  typeof v === "boolean" ? (v ? "True" : "False") : Array.isArray(v) ? `[${v.map(py).join(", ")}]` : String(v);
const le = (xs: number[], c: number) => xs.filter((v) => v <= c);

// Eight shapes with fixed names. The group's constant lives in a read-only dependency file
// (limits.py: LIMIT = C, C different in every group of a shape), so no two groups share their code
// and the fixed MAIN file of a shape is the same in every group: a tiny model has to recognise the
// shape from the prompt and make the one repair, not copy numbers (which a model this small and
// this briefly trained does not learn on 2 cores). Code is written as `ast.unparse` prints it, so
// reference = the program as generated. Cases are computed here with the correct semantics; the
// grader re-checks them 3× before a task ships.
const SHAPES: Shape[] = [
  {
    fn: "at_most",
    cRange: [3, 99],
    code: () => `from limits import LIMIT\n\ndef at_most(x):\n    return x <= LIMIT\n`,
    cases: (c) => [c, c + 1, c - 2].map((v) => ({ call: `at_most(${v})`, expect: py(v <= c) })),
    publicCase: (c) => ({ call: `at_most(${c - 1})`, expect: "True" }),
  },
  {
    fn: "keep_small",
    cRange: [3, 99],
    code: () => `from limits import LIMIT\n\ndef keep_small(xs):\n    return [x for x in xs if x <= LIMIT]\n`,
    cases: (c) =>
      [
        [c - 2, c, c + 3, c],
        [c + 1, c],
      ].map((l) => ({ call: `keep_small(${py(l)})`, expect: py(le(l, c)) })),
    publicCase: (c) => ({ call: `keep_small([${c - 1}, ${c + 2}])`, expect: py([c - 1]) }),
  },
  {
    fn: "count_small",
    cRange: [3, 99],
    code: () => `from limits import LIMIT\n\ndef count_small(xs):\n    return sum((1 for x in xs if x <= LIMIT))\n`,
    cases: (c) =>
      [[c, c + 1, c - 4, c], [c]].map((l) => ({ call: `count_small(${py(l)})`, expect: py(le(l, c).length) })),
    publicCase: (c) => ({ call: `count_small([${c - 1}, ${c + 1}])`, expect: "1" }),
  },
  {
    fn: "all_small",
    cRange: [3, 99],
    code: () => `from limits import LIMIT\n\ndef all_small(xs):\n    return all((x <= LIMIT for x in xs))\n`,
    cases: (c) =>
      [
        [c - 1, c],
        [c, c + 1],
      ].map((l) => ({ call: `all_small(${py(l)})`, expect: py(le(l, c).length === l.length) })),
    publicCase: (c) => ({ call: `all_small([${c - 2}, ${c - 1}])`, expect: "True" }),
  },
  {
    fn: "fits",
    cRange: [2, 60],
    code: () => `from limits import LIMIT\n\ndef fits(a, b):\n    return a * LIMIT <= b\n`,
    cases: (c) =>
      [
        [3, 3 * c],
        [3, 3 * c - 1],
        [1, c],
      ].map(([a, b]) => ({ call: `fits(${a}, ${b})`, expect: py((a ?? 0) * c <= (b ?? 0)) })),
    publicCase: (c) => ({ call: `fits(2, ${2 * c + 5})`, expect: "True" }),
  },
  {
    fn: "within",
    cRange: [2, 99],
    code: () => `from limits import LIMIT\n\ndef within(a, b):\n    return a + LIMIT <= b\n`,
    cases: (c) =>
      [
        [4, 4 + c],
        [4, 3 + c],
        [0, c],
      ].map(([a, b]) => ({ call: `within(${a}, ${b})`, expect: py((a ?? 0) + c <= (b ?? 0)) })),
    publicCase: (c) => ({ call: `within(1, ${c + 4})`, expect: "True" }),
  },
  {
    fn: "steps",
    cRange: [2, 40],
    code: () =>
      `from limits import LIMIT\n\ndef steps(n):\n    i = 0\n    while i * LIMIT <= n:\n        i += 1\n    return i\n`,
    cases: (c) => [3 * c, 0, c].map((n) => ({ call: `steps(${n})`, expect: py(Math.floor(n / c) + 1) })),
    publicCase: (c) => ({ call: `steps(${2 * c + 1})`, expect: "3" }),
  },
  {
    fn: "count_upto",
    cRange: [3, 99],
    code: () => `from limits import LIMIT\n\ndef count_upto(xs):\n    return len([x for x in xs if x <= LIMIT])\n`,
    cases: (c) =>
      [[c, c - 1, c + 5, c], [c]].map((l) => ({ call: `count_upto(${py(l)})`, expect: py(le(l, c).length) })),
    publicCase: (c) => ({ call: `count_upto([${c - 3}])`, expect: "1" }),
  },
];

const header = "from solution import *  # noqa: F401,F403\n";
const tests = (name: string, cases: Case[]): string =>
  header + cases.map((c, i) => `\n\ndef test_${name}_${i + 1}():\n    assert ${c.call} == ${c.expect}\n`).join("");

/** `groups` correct programs, one per source group, deterministic for `seed`; no two share (shape, C). */
export function learnablePrograms(groups: number, seed = 14): Program[] {
  const r = rng(seed);
  const used = new Set<string>();
  const out: Program[] = [];
  const capacity = SHAPES.reduce((n, s) => n + s.cRange[1] - s.cRange[0] + 1, 0);
  if (groups > capacity) throw new RangeError(`at most ${capacity} groups`);
  for (let g = 0; out.length < groups; g++) {
    const shape = SHAPES[g % SHAPES.length];
    if (!shape) throw new Error("no shape");
    const c = int(r, shape.cRange[0], shape.cRange[1]);
    if (used.has(`${shape.fn}:${c}`)) continue;
    used.add(`${shape.fn}:${c}`);
    const id = String(out.length + 1).padStart(3, "0");
    out.push({
      group: `learnable/${id}`,
      idBase: `learnable-${id}`,
      origin: "synthetic",
      license: "CC0-1.0",
      instruction: `The function \`${shape.fn}\` in solution.py fails some tests. Fix the bug.`,
      source: shape.code(),
      dependencies: [{ path: "limits.py", content: `LIMIT = ${c}\n` }],
      publicTests: tests("example", [shape.publicCase(c)]),
      hiddenTests: tests("case", shape.cases(c)),
      // Every group of a shape has the same fixed main file: the shape, not the group, is the
      // independent unit for inference.
      cluster: `learnable/${shape.fn}`,
    });
  }
  return out;
}
