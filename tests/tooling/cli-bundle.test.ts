// The CLI starts from a cached esbuild bundle (apps/web/bin/cli-bundle.mjs): built on first use,
// reused while none of its inputs changed, rebuilt when one did, and tsx when the bundle is broken.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const cache = mkdtempSync(join(tmpdir(), "agentlab-cli-cache-"));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [join(root, "apps/web/bin/agentlab.mjs"), ...args], {
    env: { ...process.env, AGENTLAB_CLI_CACHE: cache, AGENTLAB_CLI_TRACE: "1" },
    encoding: "utf8",
    timeout: 60_000,
  });
  const how = /^cli: (\w+)$/m.exec(r.stderr)?.[1];
  return { ...r, how };
}

describe("the CLI's start-up bundle", () => {
  it("is built on first use, then reused, and rebuilt when a source file changes", () => {
    const first = cli("--help");
    expect(first.status).toBe(0);
    expect(first.stdout).toContain("usage: agentlab");
    expect(first.how).toBe("rebuilt");
    const second = cli("--help");
    expect(second.how).toBe("bundle");
    expect(second.stdout).toBe(first.stdout);
    // A source file newer than the bundle (what an edit does): the next start rebuilds.
    const now = new Date();
    utimesSync(join(root, "apps/web/cli/command.ts"), now, now);
    expect(cli("--help").how).toBe("rebuilt");
  }, 120_000);

  it("falls back to tsx when the cached bundle cannot be loaded, and still runs the command", () => {
    cli("--help");
    // A bundle that looks fresh (newer than every input) but throws on import.
    writeFileSync(join(cache, "cli.mjs"), "throw new Error('corrupt bundle');\n");
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(cache, "cli.mjs"), later, later);
    const r = cli("--help");
    expect(r.stderr).toContain("corrupt bundle");
    expect(r.how).toBe("tsx");
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("usage: agentlab");
  }, 120_000);
});
