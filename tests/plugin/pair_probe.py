"""Two children graded at once try every kernel object they could share (docs/threat-model.md,
"What two children share"): one sends, the other tries to receive.  Run by
tests/plugin/test_channels.py as a grader would be run, in each platform mode.

Usage: ``python pair_probe.py``; prints ``{"fence": ..., "channels": {name: "open" |
"closed"}}``: "open" when the receiving child saw what the sending child did.
"""

from __future__ import annotations

import json
import os
import sys

from pytest_rlsys.grading.isolation import ChildProcess
from pytest_rlsys.grading.outcomes import Limits, SentCall

# Both children load this file.  Each channel has a ``send_*`` (the first child) and a
# ``receive_*`` (the second): the receiver answers True when it learnt the sender's bit.
PAIR = r"""
import ctypes, errno, fcntl, mmap, os, signal, socket, struct
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_X86 = os.uname().machine == "x86_64"
_FUTEX, _MSGGET, _ADD_KEY, _KEYCTL, _MQ_OPEN, _INOTIFY_INIT1 = (
    (202, 68, 248, 250, 240, 294) if _X86 else (98, 186, 217, 219, 180, 26)
)
_SHARED = os.__file__  # a standard-library file both children can read: one inode
_KEEP = []  # what the sender holds open until the grader closes it
_WATCH = []  # its inotify descriptor
_GOT = []  # signals the receiver got


def _flock_struct(kind):  # struct flock: type, whence, start, len, pid
    return struct.pack("hh4xqqi4x", kind, 0, 7, 1, 0)


def _locked(command):
    fd = os.open(_SHARED, os.O_RDONLY)
    try:
        got = fcntl.fcntl(fd, command, _flock_struct(fcntl.F_WRLCK))
        return struct.unpack("hh4xqqi4x", got)[0] != fcntl.F_UNLCK
    except OSError:
        return False
    finally:
        os.close(fd)


def send_posix_lock(tag):
    fd = os.open(_SHARED, os.O_RDONLY)
    _KEEP.append(fd)
    fcntl.fcntl(fd, fcntl.F_SETLK, _flock_struct(fcntl.F_RDLCK))


def receive_posix_lock(tag):
    return _locked(fcntl.F_GETLK)


def send_ofd_lock(tag):
    fd = os.open(_SHARED, os.O_RDONLY)
    _KEEP.append(fd)
    fcntl.fcntl(fd, 37, _flock_struct(fcntl.F_RDLCK))  # F_OFD_SETLK


def receive_ofd_lock(tag):
    return _locked(36)  # F_OFD_GETLK


def send_flock(tag):
    fd = os.open(_SHARED, os.O_RDONLY)
    _KEEP.append(fd)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def receive_flock(tag):
    fd = os.open(_SHARED, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno == errno.EWOULDBLOCK  # held by the other child
    finally:
        os.close(fd)
    return False


def _mapped(path):
    _libc.mmap.restype = ctypes.c_void_p
    _libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                           ctypes.c_int, ctypes.c_long]
    fd = os.open(path, os.O_RDONLY)
    try:
        return _libc.mmap(None, 4096, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED: one page cache
    finally:
        os.close(fd)


def send_futex(tag):
    # Waits on the first word of the shared mapping until the other child wakes it.
    word = ctypes.c_uint32.from_address(_mapped(_SHARED))
    timeout = struct.pack("qq", 4, 0)
    return _libc.syscall(_FUTEX, ctypes.byref(word), 0, word.value, timeout, None, 0) == 0


def receive_futex(tag):
    import time
    word = ctypes.c_uint32.from_address(_mapped(_SHARED))
    for _ in range(300):  # until the sender waits (its call may not have begun yet)
        if _libc.syscall(_FUTEX, ctypes.byref(word), 1, 1, None, None, 0) > 0:  # FUTEX_WAKE
            return True
        time.sleep(0.01)
    return False


def _file(tag):
    return "/dev/shm/" + tag, "/tmp/" + tag


def send_shared_file(tag):
    for path in _file(tag):
        try:
            with open(path, "w") as fh:
                fh.write("hidden-input-7")
        except OSError:
            pass


def receive_shared_file(tag):
    for path in _file(tag):
        try:
            with open(path) as fh:
                if "hidden-input-7" in fh.read():
                    return True
        except OSError:
            pass
    return False


def send_file_name(tag):
    for folder in ("/dev/shm", "/tmp", "/var/tmp"):
        try:
            os.mkdir(folder + "/" + tag + "-name")
        except OSError:
            pass


def receive_file_name(tag):
    return any(
        os.path.lexists(folder + "/" + tag + "-name") for folder in ("/dev/shm", "/tmp", "/var/tmp")
    )


def send_abstract_socket(tag):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("\0" + tag)
    server.listen(1)
    _KEEP.append(server)


def receive_abstract_socket(tag):
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.connect("\0" + tag)
        return True
    except OSError:
        return False


def send_sysv(tag):
    _libc.syscall(_MSGGET, 0x7A11, 0o1666)  # IPC_CREAT | 0666
    queue = ("/" + tag).encode()
    _libc.syscall(_MQ_OPEN, queue, 0o102, 0o666, None)


def receive_sysv(tag):
    queue = ("/" + tag).encode()
    return _libc.syscall(_MSGGET, 0x7A11, 0) >= 0 or _libc.syscall(_MQ_OPEN, queue, 0, 0, None) >= 0


def send_keyring(tag):
    # A key in the uid's user keyring (-4), which every process of that uid shares.
    _libc.syscall(_ADD_KEY, b"user", tag.encode(), b"7", 1, ctypes.c_long(-4))


def receive_keyring(tag):
    return _libc.syscall(_KEYCTL, 10, ctypes.c_long(-4), b"user", tag.encode(), 0) > 0  # SEARCH


def send_inotify(tag):
    fd = _libc.syscall(_INOTIFY_INIT1, os.O_NONBLOCK)
    if fd >= 0:
        _WATCH.append(fd)
        _libc.inotify_add_watch(fd, os.path.dirname(_SHARED).encode(), 0x20)  # IN_OPEN


def receive_inotify(tag):
    return False  # the receiving end is the sender's own watch: see ``inotify_events``


def inotify_events(tag):
    if not _WATCH:
        return False
    try:
        return len(os.read(_WATCH[0], 4096)) > 0
    except OSError:
        return False


def my_pid(tag):
    signal.signal(signal.SIGUSR1, lambda *_: _GOT.append(1))
    return os.getpid()


def send_signal(pid):
    if pid != os.getpid():  # in another PID namespace the number may be the sender's own
        os.kill(pid, signal.SIGUSR1)


def receive_signal(tag):
    return bool(_GOT)


def statfs_probe(tag):
    try:
        os.statvfs(".")
        return True  # the free space of a file system other children write to
    except OSError:
        return False
"""

CHANNELS = ("posix_lock", "ofd_lock", "flock", "shared_file", "file_name", "abstract_socket",
            "sysv", "keyring")  # fmt: skip
FUNCTIONS = [
    *(f"{side}_{name}" for name in (*CHANNELS, "futex", "inotify") for side in ("send", "receive")),
    "inotify_events", "my_pid", "send_signal", "receive_signal", "statfs_probe",
]  # fmt: skip


def _value(child: ChildProcess, func: str, arg: object) -> object:
    outcome = child.call(func, [arg], {})
    return outcome.value if outcome.kind == "returned" else None


def main() -> None:
    tag = "rlsysP" + str(os.getpid())
    sender = ChildProcess(PAIR, "pair.py", FUNCTIONS, Limits(call_timeout_s=10))
    receiver = ChildProcess(PAIR, "pair.py", FUNCTIONS, Limits(call_timeout_s=10))
    found: dict[str, str] = {}
    try:
        for name in CHANNELS:
            sender.call(f"send_{name}", [tag], {})
            found[name] = "open" if _value(receiver, f"receive_{name}", tag) is True else "closed"
        # futex: the sender waits (its call stays open) while the receiver wakes it.
        waiting = sender.begin_call("send_futex", [tag], {})
        woke = _value(receiver, "receive_futex", tag) is True
        if isinstance(waiting, SentCall):
            woke = sender.end_call(waiting).value is True or woke
        found["futex"] = "open" if woke else "closed"
        # inotify: the sender watches the standard library, the receiver opens a file there.
        sender.call("send_inotify", [tag], {})
        receiver.call("receive_inotify", [tag], {})
        found["inotify"] = "open" if _value(sender, "inotify_events", tag) is True else "closed"
        # signals: the sender signals the receiver's process by its pid on the host.
        pid = receiver.proc.pid if receiver.proc is not None else 0
        inner = _value(receiver, "my_pid", tag)
        for target in {pid, inner}:
            if target:
                sender.call("send_signal", [target], {})
        found["signal"] = "open" if _value(receiver, "receive_signal", tag) is True else "closed"
        found["statfs"] = "open" if _value(receiver, "statfs_probe", tag) is True else "closed"
        record = sender.fence.record() if sender.fence else None
    finally:
        sender.close()
        receiver.close()
        for folder in ("/dev/shm", "/tmp", "/var/tmp"):
            for path in (f"{folder}/{tag}", f"{folder}/{tag}-name"):
                if os.path.isdir(path):
                    os.rmdir(path)
                elif os.path.lexists(path):
                    os.unlink(path)
    print(json.dumps({"fence": record, "channels": found}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
