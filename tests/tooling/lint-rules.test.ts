// The repository's own lint rules, checked against snippets: each rule must report its violation
// (and stay quiet on the same snippet where it is allowed, so a test cannot pass by a rule that
// reports everything or nothing). Runs ESLint's Node API with eslint.config.js, the circle check of
// scripts/check-cycles.ts on fixture folders, and Biome with biome.json.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";
import { classify, findCycles, importGraph, repoFiles } from "../../scripts/check-cycles";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
let eslint: ESLint;
beforeAll(() => {
  eslint = new ESLint({ cwd: root });
});

async function ruleIds(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, filePath) });
  return (result?.messages ?? []).map((m) => m.ruleId ?? `fatal: ${m.message}`);
}

describe("layer rule", () => {
  const intoDb = `import { createDb } from "../../db/src/client";\nexport const make = createDb;\n`;

  it("refuses a relative import from core into db, allows the same import from web", async () => {
    expect(await ruleIds("packages/core/src/lint-probe.ts", intoDb)).toContain("import-x/no-restricted-paths");
    expect(
      await ruleIds(
        "apps/web/server/lint-probe.ts",
        intoDb.replace("../../db/src/client", "../../../packages/db/src/client"),
      ),
    ).toEqual([]);
  });

  it("refuses @agentlab/db in the agent and apps/web in db, by package name and by resolved path", async () => {
    const agent = await ruleIds(
      "apps/agent/src/lint-probe.ts",
      `import { jobs } from "@agentlab/db";\nexport const t = jobs;\n`,
    );
    expect(agent).toEqual(expect.arrayContaining(["no-restricted-imports", "import-x/no-restricted-paths"]));
    const db = await ruleIds(
      "packages/db/src/lint-probe.ts",
      `import { createApp } from "../../../apps/web/server/app";\nexport const a = createApp;\n`,
    );
    expect(db).toEqual(expect.arrayContaining(["no-restricted-imports", "import-x/no-restricted-paths"]));
  });

  it("refuses drizzle-orm (SQL) in apps/web and the agent, allows it in packages/db", async () => {
    const code = `import { sql } from "drizzle-orm";\nexport const q = sql\`select 1\`;\n`;
    expect(await ruleIds("apps/web/server/lint-probe.ts", code)).toContain("no-restricted-imports");
    expect(await ruleIds("apps/agent/src/lint-probe.ts", code)).toContain("no-restricted-imports");
    expect(await ruleIds("packages/db/src/queries/lint-probe.ts", code)).toEqual([]);
  });

  it("refuses node: built-ins in core only", async () => {
    const code = `import { readFileSync } from "node:fs";\nexport const read = readFileSync;\n`;
    expect(await ruleIds("packages/core/src/lint-probe.ts", code)).toContain("no-restricted-imports");
    expect(await ruleIds("packages/db/src/lint-probe.ts", code)).toEqual([]);
  });
});

describe("server layers and the client library (apps/web)", () => {
  const runner = `import { createExperimentRunner } from "../experiments/runner";\nexport const r = createExperimentRunner;\n`;

  it("refuses a low folder importing a higher one (events → experiments, auth → trpc), allows the reverse", async () => {
    expect(await ruleIds("apps/web/server/events/lint-probe.ts", runner)).toContain("import-x/no-restricted-paths");
    expect(await ruleIds("apps/web/server/routers/lint-probe.ts", runner)).toEqual([]);
    const context = `import type { Context } from "../trpc/context";\nexport type C = Context;\n`;
    expect(await ruleIds("apps/web/server/auth/lint-probe.ts", context)).toContain("import-x/no-restricted-paths");
    expect(await ruleIds("apps/web/server/routers/lint-probe.ts", context)).toEqual([]);
  });

  it("refuses the base (services.ts) importing the composition root, allows the root importing anything", async () => {
    const root = `import { startBackground } from "./background";\nexport const s = startBackground;\n`;
    expect(await ruleIds("apps/web/server/queue.ts", root)).toContain("import-x/no-restricted-paths");
    expect(await ruleIds("apps/web/server/app.ts", root)).toEqual([]);
  });

  it("places every file and folder of apps/web/server in a layer (a new one is not left unchecked)", async () => {
    const config = await eslint.calculateConfigForFile(join(root, "apps/web/server/app.ts"));
    const zones: { target: string | string[]; from: string | string[] }[] =
      config.rules["import-x/no-restricted-paths"][1].zones;
    const named = new Set(zones.flatMap((z) => [z.target, z.from].flat()));
    const entries = readdirSync(join(root, "apps/web/server")).filter((e) => !e.endsWith(".test.ts"));
    expect(entries.filter((e) => !named.has(`./apps/web/server/${e}`))).toEqual([]);
  });

  it("refuses page code in the CLI, allows the shared client library", async () => {
    const page = `import { loginUrl } from "../app/_lib/cookies";\nexport const l = loginUrl;\n`;
    expect(await ruleIds("apps/web/cli/lint-probe.ts", page)).toContain("import-x/no-restricted-paths");
    const shared = `import { pct } from "../client/format";\nexport const l = pct;\n`;
    expect(await ruleIds("apps/web/cli/lint-probe.ts", shared)).toEqual([]);
    expect(await ruleIds("apps/web/client/lint-probe.ts", page)).toContain("import-x/no-restricted-paths");
  });
});

describe("React rules in apps/web/app", () => {
  const component = (body: string) =>
    `"use client";\nimport { useState } from "react";\nexport function Probe({ on }: { on: boolean }) {\n${body}\n  return <p>{String(on)}</p>;\n}\n`;

  it("reports a hook called conditionally, not one called at the top level", async () => {
    expect(await ruleIds("apps/web/app/lint-probe.tsx", component("  if (on) useState(0);"))).toContain(
      "react-hooks/rules-of-hooks",
    );
    expect(await ruleIds("apps/web/app/lint-probe.tsx", component("  useState(0);"))).toEqual([]);
  });

  it("reports Next's <img> rule", async () => {
    const code = `export function Probe() {\n  return <img src="/a.png" alt="" />;\n}\n`;
    expect(await ruleIds("apps/web/app/lint-probe.tsx", code)).toContain("@next/next/no-img-element");
  });
});

describe("import circles (scripts/check-cycles.ts)", () => {
  const fixture = (name: string) => [
    `tests/tooling/fixtures/${name}/queries.ts`,
    `tests/tooling/fixtures/${name}/rows.ts`,
  ];

  it("finds a type-only circle and names its path", () => {
    const [cycle, ...rest] = findCycles(importGraph(root, fixture("circle")));
    expect(rest).toEqual([]);
    expect(cycle?.files).toEqual(fixture("circle"));
    expect(cycle?.path).toHaveLength(3);
  });

  it("finds nothing when the imports go one way (positive control)", () => {
    expect(findCycles(importGraph(root, fixture("chain")))).toEqual([]);
  });

  it("lets a circle inside a listed folder pass, but not one that reaches outside it", () => {
    const cycles = findCycles(importGraph(root, fixture("circle")));
    expect(
      classify(cycles, [{ within: "tests/tooling/fixtures/circle/", why: "being taken apart" }]).map((c) => c.known),
    ).toEqual(["being taken apart"]);
    expect(
      classify(cycles, [{ within: "tests/tooling/fixtures/circle/rows", why: "one file only" }]).map((c) => c.known),
    ).toEqual([undefined]);
    expect(classify(cycles, []).map((c) => c.known)).toEqual([undefined]);
  });

  it("resolves workspace packages to their sources, so a circle across packages would be seen", () => {
    const graph = importGraph(root, ["packages/db/src/queries/tasks.ts", "packages/core/src/index.ts"]);
    expect(graph.get("packages/db/src/queries/tasks.ts")).toContain("packages/core/src/index.ts");
  });

  it("leaves the fixtures out of the repository check", () => {
    expect(repoFiles(root).some((f) => f.startsWith("tests/tooling/fixtures/"))).toBe(false);
  });
});

describe("formatter (biome.json)", () => {
  const biome = join(root, "node_modules", ".bin", "biome");
  const format = (code: string) => {
    const run = spawnSync(biome, ["format", "--stdin-file-path=packages/core/src/format-probe.ts"], {
      cwd: root,
      input: code,
      encoding: "utf8",
    });
    expect(run.status, run.stderr).toBe(0);
    return run.stdout;
  };

  it("rewrites unformatted code and leaves formatted code as it is", () => {
    const messy = `const  a = {b:1,c:'x'}\n`;
    expect(format(messy)).not.toBe(messy);
    const tidy = `const a = { b: 1, c: "x" };\n`;
    expect(format(tidy)).toBe(tidy);
  });

  it("breaks lines past 120 columns, not before", () => {
    const call = (n: number) =>
      `export const value = compute(${Array.from({ length: n }, (_, i) => `argument${i}`).join(", ")});\n`;
    const short = call(8);
    const long = call(10);
    expect(short.length - 1).toBeLessThanOrEqual(120);
    expect(long.length - 1).toBeGreaterThan(120);
    expect(format(short)).toBe(short);
    expect(format(long).split("\n").length).toBeGreaterThan(2);
  });

  it("fails the check (`npm run format:check`) on an unformatted file and passes a formatted one", () => {
    const dir = mkdtempSync(join(tmpdir(), "agentlab-format-"));
    try {
      writeFileSync(join(dir, "messy.ts"), `const  a = {b:1}\n`);
      writeFileSync(join(dir, "tidy.ts"), `const a = { b: 1 };\n`);
      const check = (file: string) =>
        spawnSync(biome, ["format", `--config-path=${root}`, "--vcs-enabled=false", file], {
          cwd: dir,
          encoding: "utf8",
        });
      const messy = check("messy.ts");
      expect(messy.status).toBe(1);
      expect(messy.stdout + messy.stderr).toContain("messy.ts");
      expect(check("tidy.ts").status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
