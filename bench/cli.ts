// `npm run bench -- cli`: start-up of `agentlab --help` from the cached bundle and through tsx
// (the fallback), median of 5 runs each; CPU seconds are less sensitive to the machine's load.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const cache = mkdtempSync(join(tmpdir(), "agentlab-cli-bench-"));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

function run(): { wall: number; how: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [join(root, "apps/web/bin/agentlab.mjs"), "--help"], {
    env: { ...process.env, AGENTLAB_CLI_CACHE: cache, AGENTLAB_CLI_TRACE: "1" },
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`agentlab --help exited ${r.status}: ${r.stderr}`);
  return { wall: (performance.now() - t0) / 1000, how: /^cli: (\w+)$/m.exec(r.stderr)?.[1] ?? "?" };
}

try {
  const first = run();
  const bundle = Array.from({ length: 5 }, run);
  if (bundle.some((b) => b.how !== "bundle")) throw new Error("the bundle was not reused");
  // A bundle that fails to load sends every start down the tsx path.
  writeFileSync(join(cache, "cli.mjs"), "throw new Error('bench: force tsx');\n");
  const tsx = Array.from({ length: 5 }, run);
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  console.log(
    JSON.stringify({
      bench: "cli",
      build_s: r3(first.wall),
      bundle_start_s: r3(median(bundle.map((b) => b.wall))),
      tsx_start_s: r3(median(tsx.map((b) => b.wall))),
      load: Number((await import("node:os")).loadavg()[0]?.toFixed(1)),
    }),
  );
} finally {
  rmSync(cache, { recursive: true, force: true });
}
