// `npm run demo`: the learning proof, headless, on the embedded database (PGlite) and a
// local agent. The synthetic "learnable" pool (built in) → a frozen split by source group → a tiny
// base built here (tokenizer and echo warm-up from train tasks only) → two experiments:
//   main:    the reference teacher's fixes of the train tasks → LoRA → dev selection → one test run;
//   control: the same prompts with answers shuffled across train tasks, so the adapter cannot help.
//   A/A:     the main's selected adapter against itself, two sampling seeds at T = 0.7, on the same
//            test tasks and with the report's clustered statistics: the noise floor, never significant
//            but by the rule's α.
// The base is warmed up on the train repairs of a quarter of the shapes, meant to start above 0% of
// test so that a control can regress (measured at 0%: see cpuDemoWarmupSamples in core).
// Each report's own significance rule decides. Tasks and model are synthetic: nothing here is about
// real models. The last line is one JSON object naming the three reports' JSON files.
// The pieces: options.ts (settings), run-experiment.ts (recipe, main and control), aa-control.ts,
// output.ts (the summary and the JSON line), setup.ts (what every run shares). `npm run demo -- --study`
// runs study.ts instead: the data-quality and public-context questions as one study; `--dpo-study`
// runs dpo-study.ts: SFT, RFT and DPO arms from one SFT adapter per seed, with the swapped control.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { createShareLink } from "@agentlab/db";
import { withCacheLock } from "../tiny-base-cache";
import { aaControl, type AaControl } from "./aa-control";
import { runDpoStudyDemo } from "./dpo-study";
import { DEMO_DIR, DEMO_DPO, DEMO_DPO_STUDY, DEMO_GRPO, DEMO_STUDY, say, t0 } from "./options";
import { printDemoEnd } from "./output";
import { runExperiments } from "./run-experiment";
import { demoSetup } from "./setup";
import { runStudyDemo } from "./study";

async function main() {
  const dataDir = DEMO_DIR;
  const runDir = join(dataDir, "runs", new Date().toISOString().replace(/[:.]/g, "-"));
  await mkdir(runDir, { recursive: true });
  const w = await demoSetup(dataDir);
  if (DEMO_STUDY) return runStudyDemo(w, runDir);
  if (DEMO_DPO_STUDY) return runDpoStudyDemo(w, runDir);
  const { app, db, database, split, test, tiny, baseNote, agent, oracle: provider, adminId } = w;
  let reports: Awaited<ReturnType<typeof runExperiments>>;
  let aa: AaControl | null = null;
  try {
    reports = await runExperiments(
      app.services,
      { splitId: split.id, providerId: provider.id, basePath: tiny.path, baseNote },
      adminId,
      runDir,
    );
    // The A/A's generate jobs run on the agent too (it fetches the adapter from the store), so it stops after them.
    if (!DEMO_DPO && !DEMO_GRPO) aa = await aaControl(app.services, reports.main.body, test, runDir);
  } finally {
    await agent.stop();
  }
  const { main: mainReport, control } = reports;
  const { token } = await createShareLink(db, {
    reportId: mainReport.id,
    label: "demo",
    createdBy: adminId,
  });
  await app.close();
  await database.close();
  const wallSeconds = Math.round((Date.now() - t0) / 1000);
  say(`finished in ${wallSeconds} s`);
  printDemoEnd({
    wallSeconds,
    baseCached: tiny.cached,
    dataDir,
    main: mainReport,
    control,
    aa,
    shareToken: token,
  });
}

// PGlite is one process's database: two demos at once take turns.
withCacheLock(DEMO_DIR, main).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
