"""Runs a command as a grading platform would start it, for the fence's tests: under a
seccomp filter that refuses what the platform refuses, then ``exec``.

Modes: ``container`` refuses unshare, setns, mount and the namespace flags of clone (and
clone3 with ENOSYS), as Docker's default profile does; ``no-landlock`` makes
landlock_create_ruleset fail with ENOSYS (a kernel without Landlock); ``container+no-landlock``
both.  Usage: ``python platform_filter.py MODE COMMAND...``
"""

from __future__ import annotations

import errno
import os
import sys

import pyseccomp as sc

# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
_NAMESPACE_FLAGS = (0x20000, 0x2000000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000)


def main() -> None:
    mode, command = sys.argv[1], sys.argv[2:]
    rules = sc.SyscallFilter(sc.ALLOW)
    if "container" in mode:
        for name in ("unshare", "setns", "mount", "umount2", "pivot_root"):
            rules.add_rule(sc.ERRNO(errno.EPERM), name)
        for flag in _NAMESPACE_FLAGS:
            rules.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    if "no-landlock" in mode:
        rules.add_rule(sc.ERRNO(errno.ENOSYS), "landlock_create_ruleset")
    rules.load()
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
