// `npm run lint:cycles` (part of `npm run lint`): no import circles between our modules, type-only
// imports included. import-x's no-cycle skips `import type` by design (an erased import cannot fail
// at run time), but a type-only circle is still two modules that cannot be understood one without
// the other, which is what the rule is for. TypeScript itself parses and resolves the imports, so
// the graph is the one tsc sees (workspace packages through their `exports`, extensionless paths).
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

// Circles in code another change is taking apart, by folder: a circle whose files all lie under
// `within` is printed but does not fail (its files change while it is being taken apart); any other
// circle fails.
export const knownCycles: { within: string; why: string }[] = [];

const sourceFile = /\.(ts|tsx|mts|mjs|js)$/;
const options: ts.CompilerOptions = {
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  allowJs: true,
  resolveJsonModule: true,
  jsx: ts.JsxEmit.Preserve,
};

export type Cycle = { files: string[]; path: string[]; known?: string };

/** Files of the repository at `root` whose imports are checked: tracked and new, not ignored. */
export function repoFiles(root: string): string[] {
  const out = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
    cwd: root,
    encoding: "utf8",
  });
  return out
    .split("\n")
    .filter((f) => sourceFile.test(f) && !f.endsWith(".d.ts") && !f.startsWith("tests/tooling/fixtures/"))
    .filter((f) => existsSync(join(root, f)));
}

/** The import graph among `files` (paths relative to `root`): edges only to files in the set. */
export function importGraph(root: string, files: string[]): Map<string, Set<string>> {
  const known = new Set(files);
  const cache = ts.createModuleResolutionCache(root, (f) => f, options);
  const graph = new Map<string, Set<string>>();
  for (const file of files) {
    const abs = resolve(root, file);
    const info = ts.preProcessFile(readFileSync(abs, "utf8"), true, true);
    const edges = new Set<string>();
    for (const { fileName } of info.importedFiles) {
      const hit = ts.resolveModuleName(fileName, abs, options, ts.sys, cache).resolvedModule;
      if (!hit) continue;
      const target = relative(root, ts.sys.realpath?.(hit.resolvedFileName) ?? hit.resolvedFileName);
      if (known.has(target) && target !== file) edges.add(target);
    }
    graph.set(file, edges);
  }
  return graph;
}

/** Strongly connected components of more than one file (Tarjan), each with one concrete circle. */
export function findCycles(graph: Map<string, Set<string>>): Cycle[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: Cycle[] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1)
      cycles.push({ files: component.sort(), path: circleThrough(graph, new Set(component), v) });
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return cycles.sort((a, b) => (a.files[0] ?? "").localeCompare(b.files[0] ?? ""));
}

// Shortest circle from `start` back to itself inside one component (breadth first), for the message.
function circleThrough(graph: Map<string, Set<string>>, inside: Set<string>, start: string): string[] {
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift() ?? start;
    for (const w of graph.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u: string | undefined = v; u !== undefined && u !== start; u = from.get(u)) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start];
}

/** Marks the cycles covered by an entry of `knownCycles` (every file of the circle under its folder). */
export function classify(cycles: Cycle[], known = knownCycles): Cycle[] {
  return cycles.map((c) => {
    const entry = known.find((k) => c.files.every((f) => f.startsWith(k.within)));
    return entry === undefined ? c : { ...c, known: entry.why };
  });
}

function main(): void {
  const root = resolve(fileURLToPath(import.meta.url), "..", "..");
  const started = performance.now();
  const files = repoFiles(root);
  const cycles = classify(findCycles(importGraph(root, files)));
  for (const c of cycles) {
    const head = c.known ? `known import circle (${c.known})` : "import circle";
    console[c.known ? "log" : "error"](`${head}:\n  ${c.path.join("\n  -> ")}`);
  }
  for (const k of knownCycles) {
    const live = cycles.some((c) => c.known === k.why);
    if (!live) console.log(`check-cycles: no circle left under ${k.within}; remove it from knownCycles`);
  }
  const bad = cycles.filter((c) => !c.known).length;
  console.log(
    `check-cycles: ${files.length} files, ${bad} new circle(s), ${cycles.length - bad} known, ${Math.round(performance.now() - started)} ms`,
  );
  process.exit(bad > 0 ? 1 : 0);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
