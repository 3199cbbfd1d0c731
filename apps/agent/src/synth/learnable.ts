import type { Program } from "./sources";

// The "learnable" task family (issue 14): synthetic, disclosed, generated here — no third-party
// text. Each source group is one 2–5 line Python function with exactly one `<=` comparison; the
// bug synthesizer keeps only the `LtE -> Lt` mutant, so every task has the same repair (a strict
// `<` back to `<=`), a local edit a tiny model can learn from train groups and apply to unseen
// ones. Names, parameters and constants vary by group, so no two groups share their code even up
// to whitespace and case (the normalized contamination check stays at 0 across splits).
// Hidden tests sit on the boundary (they fail with `<`); the one public test does not.

export const LEARNABLE_BUG = "LtE -> Lt";

type Rng = () => number;
// mulberry32: a fixed, tiny PRNG so the generated family is byte-identical for a seed.
function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
const int = (r: Rng, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

const VERBS = ["count", "keep", "check", "find", "select", "measure", "test", "scan", "grade", "filter", "limit", "mark", "rank", "sort", "pick", "tally"];
const NOUNS = ["apples", "scores", "ages", "prices", "items", "tokens", "steps", "boxes", "files", "users", "votes", "pages", "cards", "seats", "coins", "trees", "bytes", "tiles", "notes", "rooms"];
const LISTS = ["xs", "values", "nums", "data", "seq", "vals", "arr", "items"];
const ELEMS = ["x", "v", "n", "e", "y", "t"];
const LIMITS = ["limit", "cap", "bound", "top", "k", "most"];
const SCALARS = [["a", "b"], ["p", "q"], ["lo", "hi"], ["m", "n"], ["u", "w"]] as const;

type Case = { call: string; expect: string };
type Shape = { code: string; fn: string; cases: Case[]; publicCase: Case };

const py = (v: unknown): string => (typeof v === "boolean" ? (v ? "True" : "False") : Array.isArray(v) ? `[${v.map(py).join(", ")}]` : String(v));

// Each shape: the correct code, and cases computed here with the correct semantics (the reference
// passes them; the grader re-checks that 3× before a task ships).
const SHAPES: ((r: Rng, f: string) => Shape)[] = [
  (r, f) => {
    const a = pick(r, ELEMS);
    const c = int(r, 3, 60);
    const le = (v: number) => v <= c;
    const cs = [c, c + 1, c - 2, 0].map((v) => ({ call: `${f}(${v})`, expect: py(le(v)) }));
    return { fn: f, code: `def ${f}(${a}):\n    return ${a} <= ${c}\n`, cases: cs, publicCase: { call: `${f}(${c - 1})`, expect: "True" } };
  },
  (r, f) => {
    const [xs, x, k] = [pick(r, LISTS), pick(r, ELEMS), pick(r, LIMITS)];
    const c = int(r, 3, 30);
    const list = [c - 2, c, c + 3, c - 1, c];
    const keep = (l: number[], lim: number) => l.filter((v) => v <= lim);
    const cs = [{ call: `${f}(${py(list)}, ${c})`, expect: py(keep(list, c)) }, { call: `${f}([${c + 1}, ${c}], ${c})`, expect: py([c]) }];
    return { fn: f, code: `def ${f}(${xs}, ${k}):\n    return [${x} for ${x} in ${xs} if ${x} <= ${k}]\n`, cases: cs, publicCase: { call: `${f}([${c - 1}, ${c + 2}], ${c})`, expect: py([c - 1]) } };
  },
  (r, f) => {
    const [xs, x] = [pick(r, LISTS), pick(r, ELEMS)];
    const c = int(r, 3, 30);
    const list = [c, c + 1, c - 4, c, c + 2];
    const cs = [{ call: `${f}(${py(list)})`, expect: py(list.filter((v) => v <= c).length) }, { call: `${f}([${c}])`, expect: "1" }];
    return { fn: f, code: `def ${f}(${xs}):\n    return sum(1 for ${x} in ${xs} if ${x} <= ${c})\n`, cases: cs, publicCase: { call: `${f}([${c - 1}, ${c + 1}])`, expect: "1" } };
  },
  (r, f) => {
    const [xs, x, k] = [pick(r, LISTS), pick(r, ELEMS), pick(r, LIMITS)];
    const c = int(r, 3, 30);
    const cs = [{ call: `${f}([${c - 1}, ${c}], ${c})`, expect: "True" }, { call: `${f}([${c}, ${c + 1}], ${c})`, expect: "False" }];
    return { fn: f, code: `def ${f}(${xs}, ${k}):\n    return all(${x} <= ${k} for ${x} in ${xs})\n`, cases: cs, publicCase: { call: `${f}([${c - 2}, ${c - 1}], ${c})`, expect: "True" } };
  },
  (r, f) => {
    const [a, b] = pick(r, SCALARS);
    const c = int(r, 2, 9);
    const m = int(r, 2, 9);
    const cs = [{ call: `${f}(${m}, ${m * c})`, expect: "True" }, { call: `${f}(${m}, ${m * c - 1})`, expect: "False" }];
    return { fn: f, code: `def ${f}(${a}, ${b}):\n    return ${a} * ${c} <= ${b}\n`, cases: cs, publicCase: { call: `${f}(${m}, ${m * c + 5})`, expect: "True" } };
  },
  (r, f) => {
    const [a, b] = pick(r, SCALARS);
    const c = int(r, 2, 40);
    const m = int(r, 1, 30);
    const cs = [{ call: `${f}(${m}, ${m + c})`, expect: "True" }, { call: `${f}(${m}, ${m + c - 1})`, expect: "False" }];
    return { fn: f, code: `def ${f}(${a}, ${b}):\n    return ${a} + ${c} <= ${b}\n`, cases: cs, publicCase: { call: `${f}(${m}, ${m + c + 3})`, expect: "True" } };
  },
  (r, f) => {
    const n = pick(r, ["n", "m", "total", "size"]);
    const i = pick(r, ["i", "j", "r", "s"]);
    const sq = int(r, 2, 12);
    const isqrtPlus = (v: number) => {
      let k = 0;
      while (k * k <= v) k++;
      return k;
    };
    const cs = [{ call: `${f}(${sq * sq})`, expect: py(isqrtPlus(sq * sq)) }, { call: `${f}(0)`, expect: "1" }];
    return { fn: f, code: `def ${f}(${n}):\n    ${i} = 0\n    while ${i} * ${i} <= ${n}:\n        ${i} += 1\n    return ${i}\n`, cases: cs, publicCase: { call: `${f}(${sq * sq + 1})`, expect: py(isqrtPlus(sq * sq + 1)) } };
  },
  (r, f) => {
    const [xs, x, k] = [pick(r, LISTS), pick(r, ELEMS), pick(r, LIMITS)];
    const c = int(r, 3, 30);
    const list = [c, c - 1, c + 5, c];
    const cs = [{ call: `${f}(${py(list)}, ${c})`, expect: py(list.filter((v) => v <= c).length) }, { call: `${f}([${c}], ${c})`, expect: "1" }];
    return { fn: f, code: `def ${f}(${xs}, ${k}):\n    return len([${x} for ${x} in ${xs} if ${x} <= ${k}])\n`, cases: cs, publicCase: { call: `${f}([${c - 3}], ${c})`, expect: "1" } };
  },
];

const header = "from solution import *  # noqa: F401,F403\n";
const tests = (name: string, cases: Case[]): string => header + cases.map((c, i) => `\n\ndef test_${name}_${i + 1}():\n    assert ${c.call} == ${c.expect}\n`).join("");

/** `groups` correct programs, one per source group, deterministic for `seed`; function names are distinct. */
export function learnablePrograms(groups: number, seed = 14): Program[] {
  const r = rng(seed);
  const used = new Set<string>();
  const out: Program[] = [];
  if (groups > VERBS.length * NOUNS.length) throw new RangeError(`at most ${VERBS.length * NOUNS.length} groups`);
  for (let g = 0; out.length < groups; g++) {
    const f = `${pick(r, VERBS)}_${pick(r, NOUNS)}`;
    if (used.has(f)) continue;
    used.add(f);
    const shape = (SHAPES[g % SHAPES.length] ?? SHAPES[0])?.(r, f);
    if (!shape) throw new Error("no shape");
    const id = String(out.length + 1).padStart(3, "0");
    out.push({
      group: `learnable/${id}`,
      idBase: `learnable-${id}`,
      origin: "synthetic",
      license: "CC0-1.0",
      instruction: `The function \`${shape.fn}\` in solution.py fails some tests. Fix the bug.`,
      source: shape.code,
      publicTests: tests("example", [shape.publicCase]),
      hiddenTests: tests("case", shape.cases),
    });
  }
  return out;
}
