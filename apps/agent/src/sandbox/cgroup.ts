import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

// Resource limits for one sandbox's process tree. cgroup v2 when its pids+memory controllers are
// delegated to us, otherwise the v1 hierarchies (pids, memory, cpu) when writable; absent both,
// `null` and the caller relies on rlimits alone (and says so).

const ROOT = "/sys/fs/cgroup";

export type CgroupLimits = { pids: number; memoryMb: number; cpus: number };

export type Cgroup = {
  version: 1 | 2;
  /** Directories a process must be written into (cgroup.procs), one per hierarchy. */
  dirs: string[];
  counters(): { oomKills: number; pidsMaxHits: number; peakMemoryKb: number | null; cpuMs: number | null };
  resetPeak(): void;
  /** The memory charged to the sandbox now (page cache of its tmpfs mounts included). */
  memoryKb(): number;
  procs(): number[];
  destroy(): void;
};

const read = (p: string): string => {
  try {
    return readFileSync(p, "utf8");
  } catch {
    return "";
  }
};
const field = (text: string, key: string): number => {
  const m = new RegExp(`^${key} (\\d+)$`, "m").exec(text);
  return m ? Number(m[1]) : 0;
};
const ownPath = (controller: string): string => {
  for (const line of read("/proc/self/cgroup").split("\n")) {
    const [, ctrls, path] = line.split(":");
    if (ctrls !== undefined && ctrls.split(",").includes(controller)) return path ?? "/";
  }
  return "/";
};

function v2Root(): string | null {
  for (const base of [ROOT, join(ROOT, "unified")]) {
    const ctrls = read(join(base, "cgroup.controllers")).split(/\s+/);
    if (ctrls.includes("pids") && ctrls.includes("memory")) return base;
  }
  return null;
}

export function createCgroup(limits: CgroupLimits): Cgroup | null {
  const name = `agentlab-sbx-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    const v2 = v2Root();
    return v2 ? createV2(join(v2, name), limits) : createV1(name, limits);
  } catch {
    return null; // not writable here: rlimits only
  }
}

function createV2(dir: string, l: CgroupLimits): Cgroup {
  mkdirSync(dir);
  writeFileSync(join(dir, "pids.max"), String(l.pids));
  writeFileSync(join(dir, "memory.max"), String(l.memoryMb << 20));
  if (existsSync(join(dir, "memory.swap.max"))) writeFileSync(join(dir, "memory.swap.max"), "0");
  if (existsSync(join(dir, "cpu.max"))) writeFileSync(join(dir, "cpu.max"), `${Math.round(l.cpus * 100000)} 100000`);
  return {
    version: 2,
    dirs: [dir],
    counters: () => ({
      oomKills: field(read(join(dir, "memory.events")), "oom_kill"),
      pidsMaxHits: field(read(join(dir, "pids.events")), "max"),
      peakMemoryKb: existsSync(join(dir, "memory.peak"))
        ? Math.round(Number(read(join(dir, "memory.peak"))) / 1024)
        : null,
      cpuMs: field(read(join(dir, "cpu.stat")), "usage_usec") / 1000,
    }),
    resetPeak: () => undefined,
    memoryKb: () => Math.round(Number(read(join(dir, "memory.current")) || 0) / 1024),
    procs: () => procsOf([dir]),
    destroy: () => destroyDirs([dir], true),
  };
}

function createV1(name: string, l: CgroupLimits): Cgroup {
  const pids = join(ROOT, "pids", ownPath("pids"), name);
  const mem = join(ROOT, "memory", ownPath("memory"), name);
  const cpuBase = join(ROOT, "cpu");
  const cpu = existsSync(join(cpuBase, "cgroup.procs")) ? join(cpuBase, ownPath("cpu"), name) : null;
  const acctBase = join(ROOT, "cpuacct");
  const acct =
    existsSync(join(acctBase, "cgroup.procs")) && acctBase !== cpuBase
      ? join(acctBase, ownPath("cpuacct"), name)
      : null;
  const dirs = [pids, mem, ...(cpu ? [cpu] : []), ...(acct ? [acct] : [])];
  try {
    for (const d of dirs) mkdirSync(d);
    writeFileSync(join(pids, "pids.max"), String(l.pids));
    writeFileSync(join(mem, "memory.limit_in_bytes"), String(l.memoryMb << 20));
    try {
      writeFileSync(join(mem, "memory.memsw.limit_in_bytes"), String(l.memoryMb << 20));
    } catch {
      // swap accounting off: memory.limit_in_bytes alone
    }
    if (cpu) writeFileSync(join(cpu, "cpu.cfs_quota_us"), String(Math.round(l.cpus * 100000)));
  } catch (e) {
    destroyDirs(dirs, false);
    throw e;
  }
  return {
    version: 1,
    dirs,
    counters: () => ({
      oomKills: field(read(join(mem, "memory.oom_control")), "oom_kill"),
      pidsMaxHits: field(read(join(pids, "pids.events")), "max"),
      peakMemoryKb: Math.round(Number(read(join(mem, "memory.max_usage_in_bytes")) || 0) / 1024),
      cpuMs: acct ? Number(read(join(acct, "cpuacct.usage")) || 0) / 1e6 : null,
    }),
    resetPeak: () => {
      try {
        writeFileSync(join(mem, "memory.max_usage_in_bytes"), "0");
      } catch {
        // best effort: the peak then spans the sandbox's lifetime
      }
    },
    memoryKb: () => Math.round(Number(read(join(mem, "memory.usage_in_bytes")) || 0) / 1024),
    procs: () => procsOf(dirs),
    destroy: () => destroyDirs(dirs, false),
  };
}

function procsOf(dirs: string[]): number[] {
  const out = new Set<number>();
  for (const d of dirs) for (const p of read(join(d, "cgroup.procs")).split("\n")) if (p.trim()) out.add(Number(p));
  return [...out];
}

// Kills whatever is still inside, then removes the directories (retrying while the kernel reaps).
function destroyDirs(dirs: string[], v2: boolean): void {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (v2 && existsSync(join(dirs[0] ?? "", "cgroup.kill"))) {
      try {
        writeFileSync(join(dirs[0] ?? "", "cgroup.kill"), "1");
      } catch {
        // fall through to per-pid kill
      }
    }
    for (const pid of procsOf(dirs)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    let left = 0;
    for (const d of dirs) {
      if (!existsSync(d)) continue;
      try {
        rmdirSync(d);
      } catch {
        left++;
      }
    }
    if (left === 0) return;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  }
}

/** Our cgroups still present (for leak checks in tests and `doctor`). */
export function leftoverCgroups(): string[] {
  const out: string[] = [];
  const scan = (dir: string) => {
    try {
      for (const e of readdirSync(dir, { withFileTypes: true }))
        if (e.isDirectory() && e.name.startsWith(`agentlab-sbx-${process.pid}-`)) out.push(join(dir, e.name));
    } catch {
      // hierarchy absent
    }
  };
  const v2 = v2Root();
  if (v2) scan(v2);
  for (const c of ["pids", "memory", "cpu"]) scan(join(ROOT, c, ownPath(c)));
  return out;
}
