#!/usr/bin/env node
// `npm start`: build the dashboard when its sources changed, prepare the agent's Python
// environments once, then run the server (which migrates the database and starts a local agent).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const web = join(root, "apps/web");

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === ".next") continue;
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { stdio: "inherit", cwd: root, ...opts });
  if (res.status !== 0) process.exit(res.status ?? 1);
}

const buildId = join(web, ".next/BUILD_ID");
if (!existsSync(buildId) || statSync(buildId).mtimeMs < newestMtime(join(web, "app"))) {
  console.log("building the dashboard (first start or changed sources)…");
  run("npx", ["next", "build", web]);
}
for (const script of ["scripts/setup-grader.sh", "scripts/setup-python.sh"]) {
  if (existsSync(join(root, script))) run("bash", [script]);
}

const server = spawn(process.execPath, [join(root, "node_modules/tsx/dist/cli.mjs"), join(web, "server/main.ts")], {
  stdio: "inherit",
  cwd: root,
  env: { ...process.env, NODE_ENV: process.env.NODE_ENV ?? "production" },
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => server.kill(sig));
server.on("exit", (code) => process.exit(code ?? 0));
