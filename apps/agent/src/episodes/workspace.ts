import { lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { unsafePathReason } from "@agentlab/core";

// One episode's workspace: a directory holding the task's visible files (main and dependency files,
// the public tests), never the hidden tests or the reference. Every path a policy names is
// confined to it: relative POSIX paths only (no `..`, nothing absolute), and no component may be a
// symbolic link, so a link planted inside cannot lead out. Only regular files are listed or read.

export type Confined = { ok: true; abs: string } | { ok: false; reason: string };

export class Workspace {
  private readonly realRoot: string;

  private constructor(readonly root: string) {
    this.realRoot = realpathSync(root);
  }

  /** A fresh workspace at `root` (created; must be empty or absent) holding `files`. */
  static create(root: string, files: readonly { path: string; content: string }[]): Workspace {
    mkdirSync(root, { recursive: true });
    if (readdirSync(root).length > 0) throw new Error(`workspace ${root} is not empty`);
    const ws = new Workspace(root);
    for (const f of files) {
      const c = ws.confine(f.path);
      if (!c.ok) throw new Error(`task file ${f.path}: ${c.reason}`);
      mkdirSync(dirname(c.abs), { recursive: true });
      writeFileSync(c.abs, f.content, { flag: "wx" });
    }
    return ws;
  }

  /** Where `path` lies inside the workspace, or why it may not be used. Nothing is created. */
  confine(path: string): Confined {
    const unsafe = unsafePathReason(path);
    if (unsafe) return { ok: false, reason: `the path ${unsafe}` };
    const abs = join(this.realRoot, path);
    let at = this.realRoot;
    for (const segment of path.split("/")) {
      at = join(at, segment);
      let st: ReturnType<typeof lstatSync> | undefined;
      try {
        st = lstatSync(at);
      } catch {
        break; // what does not exist yet cannot be a link, nor anything below it
      }
      if (st.isSymbolicLink()) return { ok: false, reason: "the path goes through a symbolic link" };
    }
    if (!abs.startsWith(this.realRoot + sep)) return { ok: false, reason: "the path leaves the workspace" };
    return { ok: true, abs };
  }

  /** Regular files, sorted; links and other special files are not part of the workspace. */
  list(): string[] {
    const out: string[] = [];
    const walk = (dir: string, prefix: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const rel = prefix ? `${prefix}/${e.name}` : e.name;
        if (e.isDirectory()) walk(join(dir, e.name), rel);
        else if (e.isFile()) out.push(rel);
      }
    };
    walk(this.realRoot, "");
    return out.sort();
  }

  /** The content of a regular file at a confined path; null when there is none. */
  read(path: string): string | null {
    const c = this.confine(path);
    if (!c.ok) return null;
    try {
      if (!lstatSync(c.abs).isFile()) return null;
    } catch {
      return null;
    }
    return readFileSync(c.abs, "utf8");
  }

  /** Writes a confined path (its folders created); the caller has confined and checked it. */
  write(path: string, content: string): void {
    const c = this.confine(path);
    if (!c.ok) throw new Error(`refusing to write ${path}: ${c.reason}`);
    mkdirSync(dirname(c.abs), { recursive: true });
    writeFileSync(c.abs, content);
  }

  /** Every regular file with its content, sorted by path. */
  files(): { path: string; content: string }[] {
    return this.list().map((path) => ({ path, content: readFileSync(join(this.realRoot, path), "utf8") }));
  }
}
