#!/usr/bin/env node
// `npm start`: check the port, build the dashboard when its sources changed, prepare the agent's
// Python environments once, then run the server (which migrates the database and supervises a
// local agent) with its JSON logs in a file; SIGINT/SIGTERM stop the server and the agent.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { portProblem, routeOutput, stopServer } from "./start-lib.mjs";

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

// Same defaults as the server's env.ts; checked here so a taken port fails in a second, not after the build.
const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? "0.0.0.0";
const problem = Number.isInteger(port) ? await portProblem(port, host) : null;
if (problem) {
  console.error(problem);
  process.exit(2);
}
ensureBubblewrap();

// Next asks to phone home on every build and start; a local tool stays quiet.
process.env.NEXT_TELEMETRY_DISABLED ??= "1";
const dashboard = process.env.AGENTLAB_DASHBOARD !== "0";
const buildId = join(web, ".next/BUILD_ID");
if (dashboard && (!existsSync(buildId) || statSync(buildId).mtimeMs < newestMtime(join(web, "app")))) {
  console.log("building the dashboard (first start or changed sources)…");
  run("npx", ["next", "build", web]);
}
for (const script of ["scripts/setup-grader.sh", "scripts/setup-python.sh"]) {
  if (existsSync(join(root, script))) run("bash", [script]);
}

// JSON logs go to a file and the terminal gets a short summary, unless LOG_FORMAT=json asks for
// the raw lines (for a log collector reading stdout).
const jsonOut = process.env.LOG_FORMAT === "json";
const logFile = resolve(root, process.env.AGENTLAB_DATA_DIR ?? ".agentlab", "logs/server.log");
// Its own process group, so a stop reaches the server, tsx's child and the local agent alike, and
// a Ctrl-C from the terminal reaches them once (through us) instead of twice.
const server = spawn(process.execPath, [join(root, "node_modules/tsx/dist/cli.mjs"), join(web, "server/main.ts")], {
  stdio: jsonOut ? ["ignore", "inherit", "inherit"] : ["ignore", "pipe", "pipe"],
  cwd: root,
  detached: true,
  env: { ...process.env, NODE_ENV: process.env.NODE_ENV ?? "production" },
});
const logs = jsonOut
  ? null
  : routeOutput(
      [
        [server.stdout, process.stdout],
        [server.stderr, process.stderr],
      ],
      logFile,
      (line) => {
        if (line.includes("agentlab is running at"))
          console.log(`  Logs (JSON): ${logFile} (LOG_FORMAT=json prints them here)\n`);
      },
    );
let stopRequested = 0;
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    // A second signal a moment later does not wait for the graceful stop; one within 2 s is the
    // same Ctrl-C arriving twice (from the terminal and forwarded by npm).
    if (!stopRequested) stopServer(server, "SIGTERM", 20_000);
    else if (Date.now() - stopRequested > 2_000) stopServer(server, "SIGKILL", 0);
    stopRequested ||= Date.now();
  });
}
let status = 0;
server.on("exit", (code, signal) => {
  status = stopRequested ? 0 : (code ?? (signal ? 1 : 0));
  // Whatever outlived the server in its group (an agent mid-stop) goes with it.
  try {
    process.kill(-server.pid, "SIGKILL");
  } catch {
    // Nothing left.
  }
  // "close" follows once the last output is read; this only covers a pipe some stray process holds.
  setTimeout(() => process.exit(status), 5_000).unref();
});
server.on("close", () => {
  if (logs) logs.end(() => process.exit(status));
  else process.exit(status);
});
