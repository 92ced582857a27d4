"""Attacks one child with the fence's attack classes and prints what happened, as JSON
(run by tests/plugin/test_fence.py as a grader would be run, in each platform mode).

Usage: ``python fence_probe.py SEED_FILE VENV_FOLDER REFERENCE BATTERY_FOLDER`` (files of
the grader's user the child must not reach); prints
``{"fence": ..., "attacks": {name: "refused" | "done"}, "left": [...]}``.
"""

from __future__ import annotations

import json
import os
import sys

from pytest_rlsys.grading import private
from pytest_rlsys.grading.isolation import ChildProcess
from pytest_rlsys.grading.outcomes import Limits

ATTACKS = r"""
import ctypes, fcntl, os, socket
_libc = ctypes.CDLL(None, use_errno=True)
_X86 = os.uname().machine == "x86_64"
_MQ_OPEN = 240 if _X86 else 180
# fanotify_init, timer_create, ptrace, process_vm_readv (pidfd_open is 434 on both)
_FANOTIFY, _TIMER, _PTRACE, _VM_READ = (300, 222, 101, 310) if _X86 else (262, 107, 117, 270)

def _try(action):
    try:
        return "refused" if action() is False else "done"
    except OSError:
        return "refused"

def attack(marker, grader, seed, venv, reference, battery):
    _libc.prctl(15, marker.encode(), 0, 0, 0)  # PR_SET_NAME: how the test finds this process
    queue, pth = b"/" + marker.encode(), os.path.join(venv, marker + ".pth")
    return {
        "pdeathsig": _try(lambda: _libc.prctl(1, 0, 0, 0, 0) == 0),
        "mq_open": _try(lambda: _libc.syscall(_MQ_OPEN, queue, 0o102, 0o600, None) >= 0),
        "tmp_folders": _try(lambda: [os.makedirs(f"/tmp/{marker}/{i}") for i in range(50)]),
        "venv_write": _try(lambda: open(pth, "w").write("import os")),
        "reference": _try(lambda: open(reference).read(100)),
        "battery": _try(lambda: os.listdir(battery)),
        "seed": _try(lambda: open(seed).read()),
        "grader_cmdline": _try(lambda: open("/proc/%d/cmdline" % grader, "rb").read()),
        "fork": _try(lambda: os.fork() and False),
        "socket": _try(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)),
        "signal_grader": _try(lambda: os.kill(grader, 0)),
        # SIGIO's owner and signal: with O_ASYNC, the kernel would signal the grader.
        "sigio_owner": _try(lambda: fcntl.fcntl(os.pipe()[0], fcntl.F_SETOWN, grader)),
        "sigio_signal": _try(lambda: fcntl.fcntl(os.pipe()[0], 10, 19)),  # F_SETSIG, SIGSTOP
        # Objects another process could reach by a name or an inode (test_channels.py
        # grades the pairs): a lease, a change notice, a FIFO, a mode others can read.
        "lease": _try(lambda: fcntl.fcntl(_own_file(), 1024, fcntl.F_RDLCK)),  # F_SETLEASE
        "dnotify": _try(lambda: fcntl.fcntl(os.open(".", os.O_RDONLY), 1026, 0x80000001)),
        "fifo": _try(lambda: os.mkfifo(marker + ".fifo")),
        "umask": _try(lambda: os.umask(0)),
        "fanotify": _try(lambda: _libc.syscall(_FANOTIFY, 0, 0) >= 0),
        "timer": _try(lambda: _libc.syscall(_TIMER, 1, None, ctypes.byref(ctypes.c_int())) == 0),
        "ptrace": _try(lambda: _libc.syscall(_PTRACE, 16, grader, 0, 0) == 0),  # ATTACH
        "process_vm": _try(lambda: _libc.syscall(_VM_READ, grader, None, 0, None, 0, 0) >= 0),
        "pidfd": _try(lambda: _libc.syscall(434, grader, 0) >= 0),
    }


def _own_file():
    with open("leased", "w") as fh:
        fh.write("x")
    return os.open("leased", os.O_RDONLY)
"""


def main() -> None:
    seed, venv, reference, battery = sys.argv[1:5]
    marker = "rlsysF" + str(os.getpid())
    if os.geteuid() == 0:
        private.protect_private_files()  # as the grader does before a child runs
    child = ChildProcess(ATTACKS, "attacks.py", ["attack"], Limits())
    args = [marker, os.getpid(), seed, venv, reference, battery]
    outcome = child.call("attack", args, {})
    record = child.fence.record() if child.fence else None
    child.close()
    left = [p for p in (f"/tmp/{marker}", os.path.join(venv, marker + ".pth")) if os.path.exists(p)]
    print(json.dumps({"fence": record, "attacks": outcome.value, "left": left}))


if __name__ == "__main__":
    main()
