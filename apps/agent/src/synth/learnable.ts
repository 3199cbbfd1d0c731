import { mulberry32 } from "@agentlab/core";
import type { Program } from "./sources";

// The "learnable" task family: synthetic, disclosed, generated here — no third-party text. Each
// source group is one short Python function (`solution.py`, MAIN) with exactly one `<=` comparison
// against LIMIT, imported from a read-only dependency file (`limits.py`: LIMIT = C, C different in
// every group of a shape); the bug synthesizer keeps only the `LtE -> Lt` mutant, so every task has
// the same kind of repair (a strict `<` back to `<=`).
//
// 30 shapes = 6 templates (predicate, filter, count, all, any, len) × 5 expressions compared with
// LIMIT (x, x + 1, x - 2, x + 4, 2 * x), each shape with its own function name. The MAIN file is
// the same in every group of a shape (a tiny model trained on 2 cores recognises a shape and makes
// the repair; it does not learn to copy a constant from the prompt: measured, 0 of 53), so
// same-shape tasks share their reference answer: every task declares its shape as its `cluster`,
// the unit of dependence for inference, and the split has 20+ shapes in test. Hidden tests sit on
// the boundary (they fail with `<`); the one public test does not.

export const LEARNABLE_BUG = "LtE -> Lt";

type Rng = () => number;
const int = (r: Rng, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

type Case = { call: string; expect: string };
const py = (v: unknown): string =>
  typeof v === "boolean" ? (v ? "True" : "False") : Array.isArray(v) ? `[${v.map(py).join(", ")}]` : String(v);

/** What is compared with LIMIT: increasing in x, with an integer x on the boundary for every C it draws. */
type Expr = {
  key: string;
  code: string;
  f: (x: number) => number;
  boundary: (c: number) => number;
  c: (r: Rng) => number;
};
const EXPRS: Expr[] = [
  { key: "x", code: "x", f: (x) => x, boundary: (c) => c, c: (r) => int(r, 4, 90) },
  { key: "inc", code: "x + 1", f: (x) => x + 1, boundary: (c) => c - 1, c: (r) => int(r, 4, 90) },
  { key: "dec", code: "x - 2", f: (x) => x - 2, boundary: (c) => c + 2, c: (r) => int(r, 4, 90) },
  { key: "add4", code: "x + 4", f: (x) => x + 4, boundary: (c) => c - 4, c: (r) => int(r, 8, 90) },
  { key: "dbl", code: "2 * x", f: (x) => 2 * x, boundary: (c) => c / 2, c: (r) => 2 * int(r, 3, 45) },
];

/** How the comparison is used; `b` is the boundary x (f(b) = C), lo < b < hi. */
type Template = {
  key: string;
  body: (fn: string, cmp: string) => string;
  cases: (fn: string, b: number, keep: (x: number) => boolean) => Case[];
  publicCase: (fn: string, b: number, keep: (x: number) => boolean) => Case;
};
const count = (xs: number[], keep: (x: number) => boolean) => xs.filter(keep).length;
const TEMPLATES: Template[] = [
  {
    key: "at_most",
    body: (fn, cmp) => `def ${fn}(x):\n    return ${cmp}\n`,
    cases: (fn, b, k) => [b, b + 1, b - 2].map((v) => ({ call: `${fn}(${v})`, expect: py(k(v)) })),
    publicCase: (fn, b, k) => ({ call: `${fn}(${b - 1})`, expect: py(k(b - 1)) }),
  },
  {
    key: "keep",
    body: (fn, cmp) => `def ${fn}(xs):\n    return [x for x in xs if ${cmp}]\n`,
    cases: (fn, b, k) =>
      [
        [b - 2, b, b + 3, b],
        [b + 1, b],
      ].map((l) => ({ call: `${fn}(${py(l)})`, expect: py(l.filter(k)) })),
    publicCase: (fn, b, k) => ({ call: `${fn}(${py([b - 1, b + 2])})`, expect: py([b - 1, b + 2].filter(k)) }),
  },
  {
    key: "count",
    body: (fn, cmp) => `def ${fn}(xs):\n    return sum((1 for x in xs if ${cmp}))\n`,
    cases: (fn, b, k) => [[b, b + 1, b - 4, b], [b]].map((l) => ({ call: `${fn}(${py(l)})`, expect: py(count(l, k)) })),
    publicCase: (fn, b, k) => ({ call: `${fn}(${py([b - 1, b + 1])})`, expect: py(count([b - 1, b + 1], k)) }),
  },
  {
    key: "all",
    body: (fn, cmp) => `def ${fn}(xs):\n    return all((${cmp} for x in xs))\n`,
    cases: (fn, b, k) =>
      [
        [b - 1, b],
        [b, b + 1],
      ].map((l) => ({ call: `${fn}(${py(l)})`, expect: py(l.every(k)) })),
    publicCase: (fn, b, k) => ({ call: `${fn}(${py([b - 2, b - 1])})`, expect: py([b - 2, b - 1].every(k)) }),
  },
  {
    key: "any",
    body: (fn, cmp) => `def ${fn}(xs):\n    return any((${cmp} for x in xs))\n`,
    cases: (fn, b, k) =>
      [
        [b, b + 3],
        [b + 1, b + 2],
      ].map((l) => ({ call: `${fn}(${py(l)})`, expect: py(l.some(k)) })),
    publicCase: (fn, b, k) => ({ call: `${fn}(${py([b - 1, b + 1])})`, expect: py([b - 1, b + 1].some(k)) }),
  },
  {
    key: "tally",
    body: (fn, cmp) => `def ${fn}(xs):\n    return len([x for x in xs if ${cmp}])\n`,
    cases: (fn, b, k) => [[b, b - 1, b + 5, b], [b]].map((l) => ({ call: `${fn}(${py(l)})`, expect: py(count(l, k)) })),
    publicCase: (fn, b, k) => ({ call: `${fn}(${py([b - 3])})`, expect: py(count([b - 3], k)) }),
  },
];

type Shape = { fn: string; template: Template; expr: Expr };
/** The family's shapes, template-major; a shape's cluster is `learnable/<fn>`. */
export const LEARNABLE_SHAPES: readonly Shape[] = TEMPLATES.flatMap((template) =>
  EXPRS.map((expr) => ({ fn: `${template.key}_${expr.key}`, template, expr })),
);
export const learnableCluster = (fn: string) => `learnable/${fn}`;

const header = "from solution import *  # noqa: F401,F403\n";
const tests = (name: string, cases: Case[]): string =>
  header + cases.map((c, i) => `\n\ndef test_${name}_${i + 1}():\n    assert ${c.call} == ${c.expect}\n`).join("");

/**
 * `groups` correct programs, one per source group, deterministic for `seed`; no two share (shape,
 * C). Code is written as `ast.unparse` prints it, so reference = the program as generated; cases
 * are computed here with the correct semantics and the grader re-checks them before a task ships.
 */
export function learnablePrograms(groups: number, seed = 25): Program[] {
  const r = mulberry32(seed);
  const used = new Set<string>();
  const out: Program[] = [];
  for (let misses = 0; out.length < groups; ) {
    // Round robin over shapes by groups made (a redrawn constant keeps the shape): equal shape sizes.
    const shape = LEARNABLE_SHAPES[out.length % LEARNABLE_SHAPES.length];
    if (!shape) throw new Error("no shape");
    const c = shape.expr.c(r);
    const key = `${shape.fn}:${c}`;
    if (used.has(key)) {
      if (++misses > 10_000) throw new RangeError(`cannot draw ${groups} distinct groups`);
      continue;
    }
    used.add(key);
    const b = shape.expr.boundary(c);
    const keep = (x: number) => shape.expr.f(x) <= c;
    const id = String(out.length + 1).padStart(3, "0");
    out.push({
      group: `learnable/${id}`,
      idBase: `learnable-${id}`,
      origin: "synthetic",
      license: "CC0-1.0",
      instruction: `The function \`${shape.fn}\` in solution.py fails some tests. Fix the bug.`,
      source: `from limits import LIMIT\n\n${shape.template.body(shape.fn, `${shape.expr.code} <= LIMIT`)}`,
      dependencies: [{ path: "limits.py", content: `LIMIT = ${c}\n` }],
      publicTests: tests("example", [shape.template.publicCase(shape.fn, b, keep)]),
      hiddenTests: tests("case", shape.template.cases(shape.fn, b, keep)),
      // Every group of a shape has the same fixed main file: the shape is the independent unit.
      cluster: learnableCluster(shape.fn),
    });
  }
  return out;
}
