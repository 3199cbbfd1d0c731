// Helpers of scripts/start.mjs: the port check before the build, the split of the server's output
// into a short human summary (terminal) and its JSON log lines (a file), and stopping the server's
// whole process group.
import { createWriteStream, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { dirname } from "node:path";
import { createInterface } from "node:readline";

/** Resolves to null when `port` can be bound on `host`, else to the error code (EADDRINUSE, EACCES…). */
export function probePort(port, host) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", (err) => resolve(err.code ?? String(err)));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(null)));
  });
}

/** The first port after `port` that binds on `host` (a few tries), else one the OS picks. */
export async function suggestPort(port, host) {
  for (let p = port + 1; p <= Math.min(port + 20, 65535); p++) if ((await probePort(p, host)) === null) return p;
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen({ port: 0, host }, () => {
      const addr = probe.address();
      probe.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
    });
  });
}

/**
 * Checks the port the server will listen on before minutes of build: a taken port is one line
 * naming a free one, never a stack trace after the build. Returns the message, or null when free.
 */
export async function portProblem(port, host) {
  if (port === 0) return null;
  const code = await probePort(port, host);
  if (code === null) return null;
  const free = await suggestPort(port, host);
  const why =
    code === "EADDRINUSE" ? "is already in use" : code === "EACCES" ? "needs root" : `cannot be bound (${code})`;
  return `agentlab: port ${port} on ${host} ${why}; start on a free one with: PORT=${free} npm start`;
}

const LEVELS = { 10: "trace", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal" };

/** The few log events a person at the terminal needs, as one human line each (null: file only). */
export function humanLine(entry) {
  const who = entry.app === "agentlab-agent" ? "local agent" : "server";
  if (entry.app === "agentlab-agent" && entry.msg === "connected to server") return "  local agent: connected";
  if (entry.msg === "local agent exited; restarting")
    return `  local agent: exited (${entry.signal ?? `code ${entry.code}`}); restarting in ${Math.round(entry.restartInMs / 1000)} s`;
  if (entry.msg === "sandbox self-test failed: this agent will not grade")
    return "  local agent: sandbox self-test failed, it will not grade (install bubblewrap)";
  if (entry.level >= 50)
    return `  ${who} ${LEVELS[entry.level] ?? "error"}: ${entry.msg ?? ""}${entry.err ? ` (${entry.err.message ?? entry.err})` : ""}`;
  return null;
}

/**
 * Routes a child's output: JSON log lines go to `logFile` (and the terminal only the few that matter,
 * as human lines); every other line (the server's summary, Next's messages) goes to the terminal.
 */
export function routeOutput(streams, logFile, onLine = () => {}) {
  mkdirSync(dirname(logFile), { recursive: true });
  const file = createWriteStream(logFile, { flags: "a" });
  for (const [stream, out] of streams) {
    createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) => {
      const entry = line.startsWith("{") ? parseJson(line) : null;
      if (!entry || typeof entry.level !== "number") out.write(`${line}\n`);
      else {
        file.write(`${line}\n`);
        const human = humanLine(entry);
        if (human) out.write(`${human}\n`);
      }
      onLine(line);
    });
  }
  return file;
}

function parseJson(line) {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}

/**
 * Stops the server: the signal goes to the server alone (tsx hands it to its child, which stops
 * its local agent so jobs are handed back), then SIGKILL to the whole process group (the server,
 * tsx's child, the agent) whatever is left of it after `graceMs`.
 */
export function stopServer(child, sig, graceMs) {
  const kill = (pid, s) => {
    try {
      process.kill(pid, s);
    } catch {
      // Gone already.
    }
  };
  kill(child.pid, sig);
  const hard = setTimeout(() => kill(-child.pid, "SIGKILL"), graceMs);
  hard.unref();
}
