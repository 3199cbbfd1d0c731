// What the study demos share: waiting on the product's state, a teacher collection on the train
// tasks, the study followed to its report, and the end (report file, share link, summary, the JSON
// line naming the report).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CollectionInput, type StudyReport } from "@agentlab/core";
import { createShareLink, getCollection } from "@agentlab/db";
import { createCollection } from "../../apps/web/server/teacher/collections";
import { startCollection } from "../../apps/web/server/teacher/collection-runs";
import { studyView } from "../../apps/web/server/studies/view";
import { say, t0 } from "./options";
import type { DemoWorld } from "./setup";

export async function until<T>(
  what: string,
  probe: () => Promise<T | null | undefined>,
  timeoutMs = 1_800_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** A teacher collection on the split's train tasks, run and graded in the judge; its id once done. */
export async function collectTrain(w: DemoWorld, providerId: string, name: string): Promise<string> {
  const { services } = w.app;
  const col = await createCollection(
    services,
    CollectionInput.parse({ name, splitId: w.split.id, providerId }),
    w.adminId,
  );
  void startCollection(services, col.id);
  const done = await until("the teacher collection and its grading", async () => {
    const c = await getCollection(services.db, col.id);
    if (c?.state === "failed" || c?.state === "canceled") throw new Error(`collection ${c.state}: ${c.stopReason}`);
    return c?.state === "done" ? c : null;
  });
  say(`teacher: ${done.samplesDone} answers to ${done.tasksTotal} train tasks`);
  return col.id;
}

/** Follows the study's arms (a line whenever a state changes) until its report exists. */
export async function studyReportOf(w: DemoWorld, studyId: string): Promise<StudyReport> {
  let last = "";
  return until(
    "the study's report",
    async () => {
      const v = await studyView(w.app.services.db, studyId);
      const line = v.arms
        .map((a) => `${a.name}:${a.state}${a.waitingForStudyClaim ? "(waits for the claim)" : ""}`)
        .join(" ");
      if (line !== last) say(line);
      last = line;
      if (v.state === "failed") throw new Error(`study failed: ${v.error ?? "no reason"}`);
      return v.report;
    },
    3 * 3_600_000,
  );
}

const pp = (x: number) => (100 * x).toFixed(1);

/** Writes the report, makes a share link, closes the product, prints the summary and the JSON line. */
export async function endStudyDemo(
  w: DemoWorld,
  runDir: string,
  demo: string,
  studyId: string,
  report: StudyReport,
  extra: Record<string, unknown>,
): Promise<void> {
  const file = join(runDir, "study-report.json");
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  const { token } = await createShareLink(w.db, { studyId, label: `${demo} demo`, createdBy: w.adminId });
  await w.app.close();
  await w.database.close();
  const wallSeconds = Math.round((Date.now() - t0) / 1000);
  for (const a of report.arms)
    say(
      `${a.name}: test pass@1 ${pp(a.test)}% (dev ${a.dev === null ? "—" : `${pp(a.dev)}%`}), ${a.supervisedTokens ?? "—"} supervised tokens, ${a.trainSamples ?? "—"} samples`,
    );
  for (const c of report.contrasts)
    say(
      `${c.arms[0]} vs ${c.arms[1]}: Δ ${pp(c.delta)} pp [${pp(c.interval[0])}, ${pp(c.interval[1])}], p ${c.p.toFixed(4)}, Holm p ${c.p_holm.toFixed(4)}${c.significant ? " SIGNIFICANT" : " not significant"} (${c.scope})`,
    );
  say(`finished in ${wallSeconds} s; share /share/study/${token}`);
  console.log(
    JSON.stringify({
      demo,
      wallSeconds,
      baseCached: w.tiny.cached,
      studyId,
      studyJson: file,
      shareToken: token,
      arms: report.arms.map((a) => ({ name: a.name, dev: a.dev, test: a.test })),
      tokens: report.tokens,
      testClaim: report.testClaim,
      contrasts: report.contrasts.map((c) => ({
        arms: c.arms,
        delta: c.delta,
        interval: c.interval,
        p: c.p,
        p_holm: c.p_holm,
        significant: c.significant,
        scope: c.scope,
      })),
      ...extra,
    }),
  );
}
