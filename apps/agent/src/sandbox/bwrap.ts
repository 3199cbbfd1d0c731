import { existsSync } from "node:fs";
import type { SandboxConfig, SandboxLimits } from "./types";

// The bubblewrap command line shared by one-shot runs and the grading zygote (brief §5): every
// namespace unshared (no network), no nested user namespaces, killed with its parent, its own
// session (no TIOCSTI), a cleared environment, no capabilities, read-only system directories and
// nothing of the host's /etc, /home, /root, /work, the agent's state or other tasks.

export const SANDBOX_ENV: Record<string, string> = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  HOME: "/tmp",
  LANG: "C.UTF-8",
  TZ: "UTC",
  PYTHONHASHSEED: "0",
  PYTHONDONTWRITEBYTECODE: "1",
  PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1",
};

export const GRADER_MOUNT = "/opt/grader";

export type BwrapOptions = {
  cfg: SandboxConfig;
  limits: SandboxLimits;
  /** Extra arguments placed before the command (workspace files, mount points …). */
  extra: string[];
  chdir: string;
  /** Capabilities kept inside the sandbox's own user namespace (the zygote's CAP_SYS_ADMIN). */
  capAdd?: string[];
  /** Make the sandbox's root read-only once its mounts exist (the grading zygote). */
  readOnlyRoot?: boolean;
};

export function bwrapArgv(o: BwrapOptions, argv: string[]): string[] {
  const a = [
    "bwrap",
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--clearenv",
  ];
  a.push("--cap-drop", "ALL");
  for (const c of o.capAdd ?? []) a.push("--cap-add", c);
  a.push("--uid", "65534", "--gid", "65534", "--hostname", "sandbox");
  a.push("--ro-bind", "/usr", "/usr");
  for (const l of ["bin", "lib", "lib64", "sbin"])
    if (existsSync(`/usr/${l}`)) a.push("--symlink", `usr/${l}`, `/${l}`);
  for (const p of ["/etc/alternatives", "/etc/ld.so.cache", "/etc/localtime"])
    if (existsSync(p)) a.push("--ro-bind", p, p);
  a.push("--proc", "/proc", "--dev", "/dev");
  a.push("--size", String(o.limits.tmpfsMb << 20), "--tmpfs", "/tmp");
  a.push("--ro-bind", o.cfg.graderDir, GRADER_MOUNT);
  for (const [k, v] of Object.entries(SANDBOX_ENV)) a.push("--setenv", k, v);
  a.push(...o.extra);
  if (o.readOnlyRoot) a.push("--remount-ro", "/");
  a.push("--chdir", o.chdir, "--", ...argv);
  return a;
}

/**
 * Wraps a command so that it enters the cgroup(s), gets its rlimits and drops to the unprivileged
 * host uid before bwrap starts: the sandbox's uid maps to `nobody` on the host, never to root.
 */
export function confinedArgv(
  cfg: SandboxConfig,
  limits: SandboxLimits,
  cgroupDirs: string[],
  argv: string[],
  opts: { cpuLimit: boolean; dropUid: boolean },
): { argv: string[]; env: Record<string, string> } {
  const rl = [`--nofile=${limits.openFiles}`, "--core=0", `--fsize=${limits.tmpfsMb << 20}`];
  if (opts.cpuLimit) rl.push(`--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`);
  const drop =
    opts.dropUid && process.getuid?.() === 0
      ? ["setpriv", `--reuid=${cfg.uid}`, `--regid=${cfg.gid}`, "--clear-groups", "--"]
      : [];
  // Ignored signals survive exec: a SIGTERM or SIGUSR2 sent to the agent's whole process tree
  // (systemctl stop/kill) cannot kill bwrap or the sandbox; the agent stops a sandbox with SIGKILL.
  const script =
    "trap '' TERM INT HUP USR1 USR2 QUIT; " +
    'for f in $AGENTLAB_CGROUPS; do echo $$ > "$f/cgroup.procs" || exit 125; done; unset AGENTLAB_CGROUPS; exec "$@"';
  return {
    argv: ["/bin/sh", "-c", script, "sh", "prlimit", ...rl, "--", ...drop, ...argv],
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", AGENTLAB_CGROUPS: cgroupDirs.join(" ") },
  };
}
