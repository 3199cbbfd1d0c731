import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, connect, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// Real web instances: `apps/web/server/main.ts` as its own Node process (what `npm start` runs,
// here API-only: AGENTLAB_DASHBOARD=0 skips the Next build), and a TCP "load balancer" in front of
// them, so an agent keeps one URL while the instance behind it dies.

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const MAIN = join(ROOT, "apps/web/server/main.ts");
const LEADS_MSG = "this instance leads the background loops";

type InstanceProcess = {
  name: string;
  proc: ChildProcess;
  port: number;
  url: string;
  output(): string;
  /** When this process logged that it took the background loops (ms since epoch), or null. */
  ledAt(): number | null;
  exited: Promise<number | null>;
  stop(): Promise<void>;
};

/** Spawns main.ts in one process (node --import tsx: a kill -9 kills the server, not a wrapper). */
export async function spawnInstance(name: string, env: Record<string, string>): Promise<InstanceProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), `agentlab-inst-${name}-`));
  const proc = spawn(process.execPath, ["--import", "tsx", MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: "production",
      PORT: "0",
      HOST: "127.0.0.1",
      AGENTLAB_DATA_DIR: dataDir,
      AGENTLAB_DASHBOARD: "0",
      AGENTLAB_LOCAL_AGENT: "0",
      LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let ledAt: number | null = null;
  const onData = (b: Buffer) => {
    out += b.toString();
    if (ledAt === null && out.includes(LEADS_MSG)) ledAt = Date.now();
  };
  proc.stdout?.on("data", onData);
  proc.stderr?.on("data", onData);
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  const deadline = Date.now() + 120_000;
  let port = 0;
  while (!port) {
    const m = /agentlab is running at http:\/\/localhost:(\d+)/.exec(out);
    if (m) port = Number(m[1]);
    else if (proc.exitCode !== null || Date.now() > deadline)
      throw new Error(`instance ${name} did not start:\n${out.slice(-4000)}`);
    else await new Promise((r) => setTimeout(r, 100));
  }
  return {
    name,
    proc,
    port,
    url: `http://127.0.0.1:${port}`,
    output: () => out,
    ledAt: () => ledAt,
    exited,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGTERM");
        await exited;
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export type Balancer = {
  url: string;
  /** The instance new connections go to. */
  route(port: number): void;
  /** Connections accepted, by the port they were sent to. */
  connections: Map<number, number>;
  close(): Promise<void>;
};

/** A TCP pass-through on loopback: every new connection goes to the current target port. */
export async function startBalancer(initial: number): Promise<Balancer> {
  let target = initial;
  const open = new Set<Socket>();
  const connections = new Map<number, number>();
  const server: Server = createServer((client) => {
    const port = target;
    connections.set(port, (connections.get(port) ?? 0) + 1);
    const upstream = connect(port, "127.0.0.1");
    open.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    route: (p) => void (target = p),
    connections,
    async close() {
      open.forEach((s) => s.destroy());
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
