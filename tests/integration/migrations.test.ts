import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

// The schema in packages/db and the checked-in migrations must agree: generating from the schema
// against a copy of drizzle/ must find nothing to add.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

describe("migrations", () => {
  it("match the Drizzle schema", () => {
    const out = mkdtempSync(join(tmpdir(), "agentlab-migrations-"));
    cpSync(join(ROOT, "drizzle"), out, { recursive: true });
    const before = readdirSync(out).sort();
    const res = spawnSync(
      "npx",
      [
        "drizzle-kit",
        "generate",
        "--dialect",
        "postgresql",
        "--schema",
        "packages/db/src/schema/index.ts",
        "--out",
        relative(ROOT, out),
      ],
      { cwd: ROOT, encoding: "utf8" },
    );
    expect(res.status, res.stderr).toBe(0);
    expect(readdirSync(out).sort(), `drizzle-kit wanted a new migration:\n${res.stdout}${res.stderr}`).toEqual(before);
  });
});
