"""A seccomp filter against the kernel state that namespaces do not separate (stdlib ctypes only).

Every process of a warm sandbox shares one user namespace, so they share its kernel keyrings: a
candidate could leave a key (hidden answers, stolen tests) that a later candidate reads. The
judge and every candidate therefore install, before any task or candidate code runs, a classic
BPF filter that answers EPERM to the keyring calls (add_key, request_key, keyctl), and to
io_uring, bpf and userfaultfd (kernel attack surface no test needs). A foreign system-call ABI
(i386 through int 0x80, x32) could reach the same calls under other numbers, so it is refused
whole. The filter is inherited by every child and kept across exec; it can only be narrowed.
"""

import ctypes
import errno
import os
import platform
import struct

_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_X32_BIT = 0x40000000
KEY_SPEC_USER_KEYRING = -4
KEYCTL_GET_KEYRING_ID = 0

# (audit arch, {name: number}) per machine; the keyring calls come first (the self-check uses keyctl).
_TABLES = {
    "x86_64": (
        0xC000003E,
        {
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "bpf": 321,
            "userfaultfd": 323,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "bpf": 280,
            "userfaultfd": 282,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
        },
    ),
}


def syscall_table(machine: str | None = None) -> tuple:
    m = machine or platform.machine()
    if m not in _TABLES:
        raise OSError(f"no seccomp table for {m}: refusing to grade without the kernel-state filter")
    return _TABLES[m]


def program(machine: str | None = None) -> list:
    """The filter as (code, jt, jf, k) instructions: foreign ABI → ENOSYS, denied call → EPERM, else allow."""
    arch, table = syscall_table(machine)
    denied = sorted(table.values())
    head = [(_LD_W_ABS, 0, 0, 4), (_JEQ_K, 1, 0, arch), (_RET_K, 0, 0, RET_ERRNO | errno.ENOSYS), (_LD_W_ABS, 0, 0, 0)]
    checks = [(_JGE_K, 0, 0, _X32_BIT)] if arch == _TABLES["x86_64"][0] else []
    checks += [(_JEQ_K, 0, 0, nr) for nr in denied]
    # Each check jumps, when it matches, to the deny instruction after the final allow.
    body = [(code, len(checks) - i, 0, k) for i, (code, _jt, _jf, k) in enumerate(checks)]
    return head + body + [(_RET_K, 0, 0, RET_ALLOW), (_RET_K, 0, 0, RET_ERRNO | errno.EPERM)]


def run_program(prog: list, nr: int, arch: int) -> int:
    """What the filter answers for one call (a tiny classic-BPF interpreter, for the tests)."""
    data = struct.pack("<iI", nr, arch)
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = prog[pc]
        if code == _LD_W_ABS:
            acc = struct.unpack_from("<I", data, k)[0]
        elif code == _RET_K:
            return k
        elif code in (_JEQ_K, _JGE_K):
            hit = acc == k if code == _JEQ_K else acc >= k
            pc += jt if hit else jf
        else:
            raise ValueError(f"unknown instruction {code:#x}")
        pc += 1


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


def keyring_reachable() -> bool:
    """Whether this process can reach its user keyring (what the filter must make false)."""
    _arch, table = syscall_table()
    return _libc.syscall(table["keyctl"], KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0) >= 0


def deny_shared_kernel_state() -> None:
    """Installs the filter (no_new_privs must be set) and checks that keyctl is now refused."""
    prog = program()
    arr = (_SockFilter * len(prog))(*[_SockFilter(*ins) for ins in prog])
    fprog = _SockFprog(len(prog), arr)
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp filter: {os.strerror(err)}")
    if keyring_reachable():
        raise OSError("the seccomp filter is installed but keyctl still answers")
