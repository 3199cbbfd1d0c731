// The machine-wide cache of deterministic build products (today: the warmed-up tiny base of the
// learning proof and the demo). It lives outside the clone, under AGENTLAB_CACHE_DIR (default
// ~/.cache/agentlab), so a fresh clone on the same machine (CI) reuses what an earlier one built;
// an entry's folder is named by the hash of everything that decides its content (its recipe), so a
// changed recipe builds a new entry and an entry is never rewritten in place.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, open, readFile, rm, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.AGENTLAB_CACHE_DIR || join(homedir(), ".cache", "agentlab");
}

/**
 * The trainer modules a command runs, by content: `entry` and every module it reaches through
 * relative imports (`from . import x`, `from .x import y`), so editing the warm-up's code (not
 * an unrelated trainer file) changes the recipe; `__init__` (the package version) always counts.
 */
export function trainerSourceHash(pkgDir: string, entry: string): string {
  const seen = new Set<string>();
  const todo = [entry, "__init__"];
  const h = createHash("sha256");
  while (todo.length) {
    const mod = todo.pop() ?? "";
    if (seen.has(mod)) continue;
    seen.add(mod);
    const file = join(pkgDir, `${mod}.py`);
    if (!existsSync(file)) continue;
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^\s*from \.(\w*) import ([\w, ]+)/gm)) {
      if (m[1]) todo.push(m[1]);
      else todo.push(...(m[2] ?? "").split(",").map((s) => s.trim().split(" ")[0] ?? ""));
    }
  }
  for (const mod of [...seen].sort()) {
    const file = join(pkgDir, `${mod}.py`);
    if (existsSync(file)) h.update(mod).update("\0").update(readFileSync(file)).update("\0");
  }
  return h.digest("hex");
}

const pidAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};

/**
 * Runs `fn` holding `<dir>.lock` (an exclusive-create file naming its pid), so two runs that
 * need the same entry (a CI clone and a demo) build it once; the second then finds it built.
 * A lock whose process is gone is taken over.
 */
export async function withCacheLock<T>(dir: string, fn: () => Promise<T>, waitMs = 2000): Promise<T> {
  const lock = `${dir}.lock`;
  await mkdir(dirname(lock), { recursive: true });
  for (;;) {
    try {
      const fh = await open(lock, "wx");
      await fh.writeFile(String(process.pid));
      await fh.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = Number((await readFile(lock, "utf8").catch(() => "")).trim());
      // No pid yet: the holder is between creating and writing, unless it died there long ago.
      const orphan = !holder && Date.now() - ((await stat(lock).catch(() => null))?.mtimeMs ?? 0) > 60_000;
      if ((holder && !pidAlive(holder)) || orphan) await rm(lock, { force: true });
      else await new Promise((r) => setTimeout(r, waitMs));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { force: true });
  }
}
