import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiToken, schema } from "@agentlab/db";
import { runCli } from "./helpers/cli";
import { startTestServer, type TestServer } from "./helpers/server";
import { makeSplit } from "./experiments-harness";

// `agentlab studies plan|create|show` through the real HTTP server: a bad study file is refused
// before any request with its file, line and field; a good one is planned, created and shown.
let s: TestServer;
let token: string;
let splitId: string;
const dir = mkdtempSync(join(tmpdir(), "agentlab-cli-studies-"));

beforeAll(async () => {
  s = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  const [u] = await s.db.db
    .insert(schema.users)
    .values({ email: "m@example.test", name: "m", passwordHash: "x", role: "member" })
    .returning();
  if (!u) throw new Error("no user");
  token = (await createApiToken(s.db.db, { userId: u.id, name: "cli" })).token;
  ({ splitId } = await makeSplit(s.db.db));
});
afterAll(async () => s?.close());

const run = (args: string[]) => runCli(args, { cwd: dir, env: { AGENTLAB_URL: s.url, AGENTLAB_TOKEN: token } });

const studyYaml = (armRecipe: string) => `name: lr study
splitId: ${splitId}
baseModel: { source: path, ref: /models/tiny }
evaluation: { graderVersion: sim-grader/1 }
seeds: [1, 2, 3]
reference:
  name: reference
  recipe:
    teacher: { providerId: 00000000-0000-4000-8000-00000000000a }
    training: { epochs: 2 }
arms:
  - name: high-lr
    factor: training.learningRate
    recipe:
      training:
${armRecipe}
contrasts:
  - arms: [high-lr, reference]
`;

describe("cli: studies", () => {
  it("refuses an arm changing a second field with file, line and field, before any request", async () => {
    writeFileSync(join(dir, "bad.yaml"), studyYaml("        learningRate: 0.001\n        epochs: 3"));
    const r = await run(["studies", "create", "bad.yaml"]);
    expect(r.code).toBe(1);
    // Line 17 of the file is `epochs: 3`.
    expect(r.err).toContain(
      'bad.yaml:17: arms.0.recipe.training.epochs: arm "high-lr" differs from the reference in training.epochs',
    );
    expect(await s.db.db.select().from(schema.studies)).toHaveLength(0);
  });

  it("plans, creates and shows a study (positive control: the same file with one factor)", async () => {
    writeFileSync(join(dir, "good.yaml"), studyYaml("        learningRate: 0.001"));
    const plan = await run(["studies", "plan", "good.yaml"]);
    expect(plan.code).toBe(0);
    const planJson = JSON.parse((await run(["studies", "plan", "good.yaml", "--json"])).out);
    const testGroups = new Set(
      (await s.db.db.select().from(schema.splitAssignments))
        .filter((r) => r.splitId === splitId && r.part === "test")
        .map((r) => r.groupKey),
    );
    expect(planJson.power.units).toBe(testGroups.size);
    // Few test units: the exact test cannot reach p < 0.05 below 6 units, so no effect is detectable.
    const mde = planJson.power.contrasts[0].mdeHolm;
    if (testGroups.size < 6) {
      expect(mde).toBeNull();
      expect(plan.out).toMatch(/high-lr vs reference: MDE at 80% power — .*note: Even Δ = 100 pp is not detected/s);
    } else {
      expect(mde).toBeGreaterThan(0);
      expect(plan.out).toMatch(/high-lr vs reference: MDE at 80% power \d+\.\d pp/);
    }
    const created = await run(["studies", "create", "good.yaml", "--json"]);
    expect(created.code).toBe(0);
    const { id, experimentIds } = JSON.parse(created.out);
    expect(experimentIds).toHaveLength(2);
    const shown = await run(["studies", "show", id]);
    expect(shown.out).toContain("lr study");
    expect(shown.out).toMatch(/high-lr\s+arm\s+training.learningRate/);
    expect(shown.out).toContain("test set not claimed yet");
    const json = JSON.parse((await run(["studies", "show", id, "--json"])).out);
    expect(json.arms.map((a: { name: string }) => a.name)).toEqual(["reference", "high-lr"]);
    expect(json.report).toBeNull();
  });
});
