import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDb } from "./helpers/db";

// `npm start`'s own process (scripts/start.mjs) as a user runs it, API-only (AGENTLAB_DASHBOARD=0
// skips the Next build, which is not what is under test): the port check before the build, the
// local agent's supervisor, and a stop that takes the server and the agent down with it.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function listen(port = 0): Promise<Server> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen({ port, host: "127.0.0.1", exclusive: true }, () => resolve(srv));
  });
}
const portOf = (srv: Server) => {
  const addr = srv.address();
  return typeof addr === "object" && addr ? addr.port : 0;
};
const close = (srv: Server) => new Promise((r) => srv.close(r));

/** `node scripts/start.mjs`, or with `viaNpm` `npm start` itself (a stop signal goes to npm's pid). */
function startScript(env: Record<string, string>, viaNpm = false) {
  let out = "";
  const [cmd, args] = viaNpm ? ["npm", ["start", "--silent"]] : [process.execPath, [join(ROOT, "scripts/start.mjs")]];
  const proc = spawn(cmd, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, AGENTLAB_NO_APT: "1", HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  proc.stdout?.on("data", (b: Buffer) => (out += b.toString()));
  proc.stderr?.on("data", (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  return { proc, exited, output: () => out };
}

async function until(what: string, ready: () => boolean | Promise<boolean>, timeoutMs: number, output: () => string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output:\n${output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Every process below `pid` (the server, tsx's child, the agent), from ps. */
function descendants(pid: number): number[] {
  const rows = spawnSync("ps", ["-eo", "pid=,ppid="], { encoding: "utf8" }).stdout.trim().split("\n");
  const pairs = rows.map((r) => r.trim().split(/\s+/).map(Number));
  const found: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of pairs) {
      if (parent !== p || child === undefined) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

describe("npm start (scripts/start.mjs)", () => {
  it("refuses a taken port in one line naming a free PORT=, before any build", async () => {
    const taken = await listen();
    const port = portOf(taken);
    try {
      const run = startScript({ PORT: String(port) });
      const code = await run.exited;
      const lines = run.output().trim().split("\n");
      expect(code).toBe(2);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use`));
      const suggested = Number(/PORT=(\d+) npm start/.exec(lines[0] ?? "")?.[1]);
      expect(suggested).not.toBe(port);
      // The suggestion is real: that port binds.
      await close(await listen(suggested));
    } finally {
      await close(taken);
    }
  });

  describe("running", () => {
    let db: TestDb;
    let dataDir: string;
    let run: ReturnType<typeof startScript>;
    let url: string;
    beforeAll(async () => {
      db = await createTestDatabase();
      dataDir = await mkdtemp(join(tmpdir(), "agentlab-npm-start-"));
      const free = await listen();
      const port = portOf(free);
      await close(free);
      url = `http://127.0.0.1:${port}`;
      run = startScript(
        {
          PORT: String(port),
          DATABASE_URL: db.url,
          AGENTLAB_DATA_DIR: join(dataDir, "data"),
          AGENTLAB_DASHBOARD: "0",
          AGENTLAB_SANDBOX: "process",
        },
        true,
      );
      await until("the local agent to connect", () => /local agent: connected/.test(run.output()), 240_000, run.output);
    }, 300_000);
    afterAll(async () => {
      // A failed test leaves nothing behind: the server has its own process group, out of npm's reach.
      if (run.proc.exitCode === null) {
        for (const pid of [...descendants(run.proc.pid ?? 0), run.proc.pid ?? 0])
          if (alive(pid)) process.kill(pid, "SIGKILL");
      }
      await db?.drop();
      await rm(dataDir, { recursive: true, force: true });
    });

    const health = async () =>
      (await (await fetch(`${url}/api/health`)).json()) as {
        agentsOnline: number;
        localAgent: { state: string; restarts?: number };
      };
    const agentPids = async () =>
      (await readFile(join(dataDir, "data/logs/server.log"), "utf8"))
        .split("\n")
        .filter((l) => l.includes('"local agent started"'))
        .map((l) => (JSON.parse(l) as { pid: number }).pid);

    it("prints a short summary and keeps the JSON log lines in the data dir's log file", async () => {
      const out = run.output();
      expect(out).toMatch(/agentlab is running at http:\/\/localhost:\d+/);
      expect(out).toMatch(/Logs \(JSON\): .*data\/logs\/server\.log/);
      expect(out.split("\n").filter((l) => l.trimStart().startsWith("{"))).toEqual([]);
      expect(out.split("\n").length).toBeLessThan(20);
      const log = await readFile(join(dataDir, "data/logs/server.log"), "utf8");
      expect(log).toMatch(/"msg":"database migrated"/);
      expect(log).toMatch(/"app":"agentlab-agent".*"msg":"connected to server"/);
    });

    it("restarts the local agent after kill -9", async () => {
      await until("the agent online", async () => (await health()).agentsOnline === 1, 60_000, run.output);
      const [first] = await agentPids();
      expect(first).toBeTypeOf("number");
      expect(alive(first ?? 0)).toBe(true);
      process.kill(first ?? 0, "SIGKILL");
      await until("the agent to die", () => !alive(first ?? 0), 10_000, run.output);
      await until("a second agent start", async () => (await agentPids()).length === 2, 30_000, run.output);
      const second = (await agentPids())[1] ?? 0;
      expect(second).not.toBe(first);
      expect(alive(second)).toBe(true);
      await until(
        "the restarted agent online",
        async () => /local agent: connected[\s\S]*local agent: connected/.test(run.output()),
        120_000,
        run.output,
      );
      expect(run.output()).toMatch(/local agent: exited \(SIGKILL\); restarting in 1 s/);
      await until("the agent online again", async () => (await health()).agentsOnline === 1, 60_000, run.output);
      expect((await health()).localAgent).toEqual({ state: "running", restarts: 1 });
    }, 240_000);

    it("SIGTERM to npm stops the server and the agent with it", async () => {
      const children = descendants(run.proc.pid ?? 0);
      // start.mjs, tsx, the server it runs, the agent: all alive before the signal. (With a shell
      // between npm and start.mjs, npm's signal ended the shell and left the rest running.)
      expect(children.length).toBeGreaterThanOrEqual(4);
      expect(children.every(alive)).toBe(true);
      run.proc.kill("SIGTERM");
      await run.exited;
      await until("every child to exit", () => !children.some(alive), 30_000, run.output);
      await expect(fetch(`${url}/api/health`)).rejects.toThrow();
    }, 60_000);
  });
});
