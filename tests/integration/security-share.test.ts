import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { schema } from "@agentlab/db";
import { anonymousCaller, callerAs } from "./helpers/callers";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { storeReport } from "./helpers/reports";
import { baseConfig, makeServices, makeSplit, startExperiment } from "./experiments-harness";

// A share link opens its report without the lab's internals: agent ids and names, kernel, RAM,
// the local model path, the provider id and the dataset hash stay in the workspace.

let t: TestDb;
let s: Services;
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
});
afterAll(async () => t?.drop());

describe("a shared report", () => {
  it("shows the facts without agent, kernel, RAM, local path, provider id or dataset hash", async () => {
    const { splitId } = await makeSplit(t.db);
    const member = await callerAs(s, "member");
    const anon = anonymousCaller(s);
    const exp = await startExperiment(s, baseConfig(splitId, { name: "shared" }));
    const { reportId } = await storeReport(t.db, exp, { base: [1, 0, 1, 0], sft: [1, 1, 1, 0] });
    // The header as the runner records it (agents from the jobs that ran, the dataset, the model).
    const [row] = await t.db.select().from(schema.reports).where(eq(schema.reports.id, reportId));
    if (!row) throw new Error("no report");
    const body = row.body as Record<string, unknown> & { config: Record<string, unknown> };
    const agentId = "9c0ffee0-0000-4000-8000-000000000001";
    const secrets = {
      agentId,
      agentName: "ada-workstation",
      kernel: "6.8.0-47-generic",
      ram: "65536",
      path: "/home/ada/models/tiny-qwen",
      hash: "f".repeat(64),
    };
    const header = {
      ...((body.header as object) ?? {}),
      baseModel: { source: "path", ref: secrets.path, resolvedRevision: null, weightsSha256: null },
      dataset: {
        id: "x",
        name: "d",
        hash: secrets.hash,
        samples: 1,
        tasks: 1,
        oracleSamples: 0,
        supervisedTokens: null,
        totalTokens: null,
      },
      hardware: [
        {
          id: agentId,
          name: secrets.agentName,
          os: `linux ${secrets.kernel}`,
          cpuCores: 4,
          ramMb: 65536,
          gpus: [],
          torch: null,
          cuda: null,
          jobTypes: ["train"],
          attempts: 1,
        },
      ],
    };
    const config = { ...body.config, baseModel: { source: "path", ref: secrets.path } };
    await t.db
      .update(schema.reports)
      .set({ body: sql`${JSON.stringify({ ...body, header, config })}::jsonb` })
      .where(eq(schema.reports.id, reportId));
    const providerId = (config as { teacher?: { providerId?: string } }).teacher?.providerId ?? "";
    expect(providerId).toMatch(/^[0-9a-f-]{36}$/);

    // Positive control: the workspace's own view of the report has all of them.
    const inside = JSON.stringify((await member.reports.byId({ id: reportId })).report);
    for (const v of [...Object.values(secrets), providerId]) expect(inside).toContain(v);

    const { token } = await member.share.create({ reportId });
    const shared = await anon.share.view({ token });
    const text = JSON.stringify(shared.report);
    for (const v of [...Object.values(secrets), providerId]) expect(text).not.toContain(v);
    expect(text).toContain("tiny-qwen");
    expect(shared.report).toMatchObject({ name: "shared" });
  });
});
