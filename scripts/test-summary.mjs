#!/usr/bin/env node
// The summary at the end of `npm test`: seconds per step and the slowest test files, read from
// test-results/timings/ (vitest-<project>.json from scripts/test-timing-reporter.mjs, pytest-*.xml
// from scripts/test-py.mjs). Run alone (`node scripts/test-summary.mjs`) it prints the files of
// the last run. Everything it prints starts with "timing:", so it is easy to grep out of a CI log.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const SLOWEST = 8;

/** Per-file seconds of every pytest junit file (xunit1: each testcase names its file). */
function pytestFiles(xml) {
  const perFile = new Map();
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const attrs = m[1] ?? "";
    const file = /\bfile="([^"]*)"/.exec(attrs)?.[1] ?? /\bclassname="([^"]*)"/.exec(attrs)?.[1] ?? "?";
    const seconds = Number(/\btime="([^"]*)"/.exec(attrs)?.[1] ?? 0);
    const row = perFile.get(file) ?? { file, seconds: 0, tests: 0, failures: [] };
    row.seconds += seconds;
    row.tests += 1;
    const failure = /<(?:failure|error)\b[^>]*?message="([^"]*)"/.exec(m[2] ?? "");
    if (failure)
      row.failures.push({ test: /\bname="([^"]*)"/.exec(attrs)?.[1] ?? "?", error: failure[1].slice(0, 300) });
    perFile.set(file, row);
  }
  return [...perFile.values()].map((r) => ({ ...r, seconds: Math.round(r.seconds * 10) / 10 }));
}

function suites(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const f of readdirSync(dir).sort()) {
    const path = join(dir, f);
    const vitest = /^vitest-(.+)\.json$/.exec(f);
    if (vitest) out.push({ name: vitest[1], files: JSON.parse(readFileSync(path, "utf8")).files });
    const pytest = /^pytest-(.+)\.xml$/.exec(f);
    if (pytest) out.push({ name: `pytest ${pytest[1]}`, files: pytestFiles(readFileSync(path, "utf8")) });
  }
  for (const s of out) s.files.sort((a, b) => b.seconds - a.seconds);
  return out;
}

export function printSummary(dir, run) {
  const all = suites(dir);
  console.log("\ntiming: ── summary ──");
  if (run) {
    // cpu: the step's process tree's CPU seconds (cpu/wall ≈ cores kept busy); load: 1-min at start → end.
    for (const s of run.steps) {
      const cpu =
        s.cpuSeconds == null
          ? ""
          : `  cpu ${String(s.cpuSeconds).padStart(7)} s (${(s.cpuSeconds / Math.max(s.seconds, 0.1)).toFixed(2)} cores)`;
      const load = s.load ? `  load ${s.load[0].toFixed(1)} → ${s.load[1].toFixed(1)}` : "";
      console.log(
        `timing: step ${s.step.padEnd(22)} ${String(s.seconds).padStart(7)} s${cpu}${load}${s.ok ? "" : "  FAILED"}`,
      );
    }
    console.log(`timing: total ${String(run.totalSeconds).padStart(24)} s`);
  }
  for (const s of all) {
    const total = Math.round(s.files.reduce((n, f) => n + f.seconds, 0));
    console.log(`timing: ${s.name}: ${s.files.length} files, ${total} s summed over files; slowest:`);
    for (const f of s.files.slice(0, SLOWEST)) console.log(`timing:   ${String(f.seconds).padStart(7)} s  ${f.file}`);
  }
  // Last, so the tail of a long log names what failed (a runner's own report is far above it).
  for (const s of all) {
    for (const f of s.files.filter((f) => f.failures?.length)) {
      for (const x of f.failures) console.log(`timing: FAILED ${s.name} ${f.file} › ${x.test}: ${x.error}`);
    }
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "summary.json"), JSON.stringify({ run: run ?? null, suites: all }, null, 1) + "\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  printSummary(join(fileURLToPath(new URL("..", import.meta.url)), "test-results", "timings"));
}
