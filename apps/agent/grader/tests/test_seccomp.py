"""The kernel-state seccomp filter: what the program answers, and that installing it cuts keyctl off."""

import errno
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from agentlab_grader import seccomp  # noqa: E402

X86 = seccomp._TABLES["x86_64"][0]
ARM = seccomp._TABLES["aarch64"][0]


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_program_denies_the_listed_calls_and_allows_the_rest(machine):
    arch, table = seccomp.syscall_table(machine)
    prog = seccomp.program(machine)
    for nr in table.values():
        assert seccomp.run_program(prog, nr, arch) == seccomp.RET_ERRNO | errno.EPERM
    listed = set(table.values())
    for nr in range(0, 460):
        if nr not in listed:
            assert seccomp.run_program(prog, nr, arch) == seccomp.RET_ALLOW, nr


def test_foreign_abis_are_refused_whole():
    prog = seccomp.program("x86_64")
    assert seccomp.run_program(prog, 288, 0x40000003) == seccomp.RET_ERRNO | errno.ENOSYS  # i386 keyctl
    assert seccomp.run_program(prog, 0x40000000 | 250, X86) == seccomp.RET_ERRNO | errno.EPERM  # x32 keyctl
    assert seccomp.run_program(seccomp.program("aarch64"), 250, X86) == seccomp.RET_ERRNO | errno.ENOSYS


def test_unknown_machine_is_refused():
    with pytest.raises(OSError, match="no seccomp table"):
        seccomp.program("sparc")


def _in_child(fn) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(fn())
        except BaseException:  # noqa: BLE001
            os._exit(99)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_installed_filter_cuts_the_keyring_off():
    if not seccomp.keyring_reachable():
        pytest.skip("this kernel has no reachable keyring: nothing to control against")

    def install() -> int:
        before = seccomp.keyring_reachable()  # positive control: reachable without the filter
        seccomp._libc.prctl(38, 1, 0, 0, 0)  # no_new_privs, as drop_all_privileges sets it
        seccomp.deny_shared_kernel_state()
        return (1 if before else 0) + (0 if seccomp.keyring_reachable() else 2)

    assert _in_child(install) == 3
