"""Per-process isolation inside the bwrap sandbox (Linux only, stdlib ctypes).

The grading sandbox keeps CAP_SYS_ADMIN and CAP_SETPCAP in its own user namespace (never on the
host) so that every judge and every candidate gets fresh mount, PID, IPC and network namespaces
with private tmpfs mounts over a read-only root: nothing one process leaves behind (files,
daemons, SysV objects, abstract sockets) is visible to another, and none can see or signal a
process outside its own PID namespace. Before any task or candidate code runs, the process
empties every capability set (bounding set included, verified), sets no_new_privs and installs
a seccomp filter against the kernel state namespaces do not separate (seccomp.py).
"""

import ctypes
import os

from . import seccomp

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWUTS = 0x04000000
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_DUMPABLE = 4
PR_SET_PDEATHSIG = 1
_CAP_VERSION_3 = 0x20080522


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def enter_private_namespaces(uts: bool = False) -> None:
    """New mount + PID + IPC + network namespaces (children are born in the new PID namespace);
    mounts made from now on never propagate back. /dev is re-mounted read-only (device nodes
    stay usable: a read-only mount does not stop writes to /dev/null). `uts` for a process that
    keeps CAP_SYS_ADMIN: its host name is then its own."""
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET | (CLONE_NEWUTS if uts else 0)
    _check(_libc.unshare(flags), "unshare")
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    make_readonly("/dev")


def private_scratch(box: str, box_mb: int) -> None:
    """Fresh tmpfs mounts for the process's workspace, /tmp and /dev/shm."""
    mount_tmpfs(box, box_mb)
    mount_tmpfs("/tmp", 1)
    mount_tmpfs("/dev/shm", 1)


def die_with_parent() -> None:
    _check(_libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0), "pdeathsig")


def mount_tmpfs(target: str, size_mb: int) -> None:
    opts = f"size={size_mb}m,mode=0755,nr_inodes=16384".encode()
    _check(_libc.mount(b"tmpfs", target.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts), f"tmpfs {target}")


def mount_proc() -> None:
    _check(_libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV, None), "mount proc")


def restrict_keeping_caps() -> None:
    """no_new_privs and the seccomp filter, capabilities kept (the candidate template needs
    CAP_SYS_ADMIN to give each candidate its own namespaces); not dumpable, so no process of the
    sandbox can read or trace it."""
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    seccomp.deny_shared_kernel_state()
    set_dumpable(False)


def make_readonly(path: str) -> None:
    p = path.encode()
    _check(_libc.mount(p, p, None, MS_BIND | MS_REC, None), f"bind {path}")
    _check(_libc.mount(p, p, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None), f"remount ro {path}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_all_privileges() -> None:
    """Empty bounding, ambient, effective, permitted and inheritable sets; no_new_privs."""
    for cap in range(64):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() == 22:
            break  # EINVAL: past the last capability this kernel knows
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    left = {k: v for k, v in cap_sets().items() if v != 0}
    if left:
        raise OSError(f"capabilities left after dropping them: {left}")
    seccomp.deny_shared_kernel_state()


def cap_sets() -> dict:
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:")):
                key, value = line.split()
                out[key.rstrip(":")] = int(value, 16)
    return out


def set_dumpable(on: bool) -> None:
    # Off for trusted processes: same-uid processes can then neither ptrace them nor read their
    # memory. On again for the candidate, whose own /proc/self files need it.
    _libc.prctl(PR_SET_DUMPABLE, 1 if on else 0, 0, 0, 0)


def effective_caps() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return 0
