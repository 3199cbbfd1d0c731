import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";

// The directory layout (docs/task-format.md): one folder per task holding task.json (scalar
// fields, optional `main` list) and files/, public_tests/, hidden_tests/, reference/ sub-folders.
// It is turned into Task spec v1 JSON lines, so the server runs exactly the same validation.

export type DirTask = { folder: string; line: string };

const SUBDIRS = ["files", "public_tests", "hidden_tests", "reference"] as const;

async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out.push(relative(root, p).split(sep).join("/"));
    }
  };
  if ((await stat(root).catch(() => null))?.isDirectory()) await walk(root);
  return out.sort();
}

export async function readTaskDir(dir: string): Promise<DirTask[]> {
  const folders = (await readdir(dir, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const tasks: DirTask[] = [];
  for (const folder of folders) {
    const root = join(dir, folder);
    const meta = JSON.parse(await readFile(join(root, "task.json"), "utf8").catch(() => "{}")) as Record<
      string,
      unknown
    >;
    const lists: Record<string, { path: string; content: string }[]> = {};
    for (const sub of SUBDIRS) {
      const paths = await listFiles(join(root, sub));
      // Decoded strictly: a file that is not UTF-8 is named by its path, which a JSON line could not do.
      lists[sub] = await Promise.all(
        paths.map(async (p) => ({ path: p, content: await readUtf8(join(root, sub, p)) })),
      );
    }
    const { main, ...scalars } = meta;
    const refPaths = new Set((lists.reference ?? []).map((r) => r.path));
    const files = lists.files ?? [];
    const isMain = (p: string) =>
      Array.isArray(main) ? main.includes(p) : refPaths.size > 0 ? refPaths.has(p) : files.length === 1;
    const task = {
      ...scalars,
      files: files.map((f) => ({ path: f.path, role: isMain(f.path) ? "main" : "dependency", content: f.content })),
      public_tests: lists.public_tests ?? [],
      hidden_tests: lists.hidden_tests ?? [],
      reference: lists.reference ?? [],
    };
    tasks.push({ folder, line: JSON.stringify(task) });
  }
  return tasks;
}

async function readUtf8(path: string): Promise<string> {
  const bytes = await readFile(path);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new Error(`${path}: not valid UTF-8`);
  }
}
