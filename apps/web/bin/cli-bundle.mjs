// The CLI's start-up: tsx compiles ~330 TypeScript files on every run (≈1.4 s of CPU), so the CLI
// runs from one esbuild bundle kept in node_modules/.cache instead, rebuilt whenever one of the
// files it was built from changed (their paths are listed beside it). A failed build falls back
// to tsx, so a broken cache can slow the CLI down but never stop it.
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const webDir = resolve(import.meta.dirname, "..");
const root = resolve(webDir, "../..");
const entry = join(webDir, "cli/main.ts");

const cacheDir = () => process.env.AGENTLAB_CLI_CACHE ?? join(root, "node_modules/.cache/agentlab-cli");

/** Fresh when the bundle exists and no input is newer than it (or gone). */
function fresh(bundle, inputsFile) {
  if (!existsSync(bundle) || !existsSync(inputsFile)) return false;
  const built = statSync(bundle).mtimeMs;
  const inputs = JSON.parse(readFileSync(inputsFile, "utf8"));
  return inputs.every((p) => {
    try {
      return statSync(join(root, p)).mtimeMs <= built;
    } catch {
      return false;
    }
  });
}

async function build(bundle, inputsFile) {
  const esbuild = await import("esbuild");
  const tmp = `${bundle}.${process.pid}.tmp`;
  const r = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: tmp,
    metafile: true,
    logLevel: "silent",
    // CommonJS dependencies call require(); an ES module bundle has to provide it.
    banner: {
      js: "import { createRequire as __agentlabRequire } from 'node:module'; const require = __agentlabRequire(import.meta.url);",
    },
  });
  // Renames are atomic: a CLI started meanwhile reads the old bundle or the new one, never half of one.
  writeFileSync(`${inputsFile}.${process.pid}.tmp`, JSON.stringify(Object.keys(r.metafile.inputs)));
  renameSync(tmp, bundle);
  renameSync(`${inputsFile}.${process.pid}.tmp`, inputsFile);
}

/** The CLI's `main`, from the bundle when possible; `how` says which path was taken (for tests). */
export async function loadMain() {
  const dir = cacheDir();
  const bundle = join(dir, "cli.mjs");
  const inputsFile = join(dir, "inputs.json");
  try {
    let how = "bundle";
    if (!fresh(bundle, inputsFile)) {
      mkdirSync(dirname(bundle), { recursive: true });
      await build(bundle, inputsFile);
      how = "rebuilt";
    }
    const { main } = await import(pathToFileURL(bundle).href);
    return { main, how };
  } catch (err) {
    if (process.env.AGENTLAB_CLI_TRACE) process.stderr.write(`cli: bundle unavailable (${err}); using tsx\n`);
    const { register } = await import("tsx/esm/api");
    register();
    const { main } = await import(pathToFileURL(entry).href);
    return { main, how: "tsx" };
  }
}
