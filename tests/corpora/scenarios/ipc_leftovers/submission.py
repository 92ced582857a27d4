"""Creates System V shared memory (attached, touched, detached, never removed), a semaphore
set, a message queue, a POSIX shared-memory file and files in /tmp and /var/tmp, hoping they
outlive the child and pin memory or carry data to the next submission."""

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p
IPC_PRIVATE, IPC_CREAT = 0, 0o1000
for _ in range(4):
    ident = _libc.shmget(IPC_PRIVATE, 16 << 20, IPC_CREAT | 0o666)
    if ident >= 0:
        address = _libc.shmat(ident, None, 0)
        if address not in (None, ctypes.c_void_p(-1).value):
            ctypes.memset(address, 1, 16 << 20)
            _libc.shmdt(ctypes.c_void_p(address))
_libc.semget(IPC_PRIVATE, 4, IPC_CREAT | 0o666)
_libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o666)
for folder in ("/dev/shm", "/tmp", "/var/tmp"):
    for name in ("rlsys-leftover-file", "rlsys-leftover-dir"):
        try:
            path = os.path.join(folder, name + "-" + str(os.getuid()))
            if name.endswith("dir"):
                os.makedirs(os.path.join(path, "inner"))
            else:
                with open(path, "w") as fh:
                    fh.write("left for the next submission")
        except OSError:
            pass


def pipeline_capacity(*args, **kwargs):
    return _pipeline_capacity(*args, **kwargs)


def transfer_ledger(*args, **kwargs):
    return _transfer_ledger(*args, **kwargs)


def evaluate_topology(*args, **kwargs):
    return _evaluate_topology(*args, **kwargs)

# rlsys-scenario: the honest part (tests/corpora/scenarios/honest_part.py) is appended here
