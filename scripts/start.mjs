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

// Grading runs candidates in bubblewrap. Without it the local agent grades nothing and every
// experiment waits forever, so: install it when we can (root with apt, as .ci/run does), and
// otherwise say so loudly, with the exact command, before the server is up.
const onPath = (cmd) => spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;
function ensureBubblewrap() {
  if (process.env.AGENTLAB_SANDBOX === "process" || onPath("bwrap")) return;
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (isRoot && onPath("apt-get") && process.env.AGENTLAB_NO_APT !== "1") {
    console.log("bubblewrap (the grading sandbox) is missing: installing it with apt-get…");
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    const ok =
      spawnSync("apt-get", ["update", "-qq"], { stdio: "inherit", env }).status === 0 &&
      spawnSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "bubblewrap"], { stdio: "inherit", env })
        .status === 0;
    if (ok && onPath("bwrap")) return console.log("bubblewrap installed.");
  }
  const cmd = isRoot ? "apt-get install -y bubblewrap" : "sudo apt-get install -y bubblewrap";
  const bar = "!".repeat(78);
  console.error(
    `\n${bar}\n  GRADING IS OFF: bubblewrap (bwrap) is not installed, so the local agent's sandbox\n  self-test fails and grade/audit jobs (every experiment) will wait forever.\n\n  Fix:  ${cmd}\n  then press "Re-run self-test" on the Agents page (no restart needed).\n${bar}\n`,
  );
}
ensureBubblewrap();

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
