"""Process supervision for the isolation boundary: the drain of a child's output, killing
a child's whole tree, the grader's SIGTERM/SIGHUP handler, and the subreaper that collects a
bubblewrap init (``isolation`` runs the children)."""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from typing import Protocol

from pytest_rlsys.escaping import clean_output


class Killable(Protocol):
    def kill(self) -> None: ...


# Every child started and not yet collected: a SIGTERM/SIGHUP of the grader kills them,
# and so does the end of the interpreter, however it unwinds (a Ctrl-C during start-up, a
# second one in a batch, a standby child nobody took): each is killed and its scratch
# folder removed.  Held strongly: a child dropped without ``kill`` is still one to end.
LIVE: set[Killable] = set()
_HANDLERS_INSTALLED = False
OUTERS: set[int] = set()  # the outer bwrap of every live fenced child


class OutputDrain(threading.Thread):
    """Reads the child's stdout+stderr, keeping only the first ``cap`` bytes.  Every read
    is made under the lock, so ``settle`` can take in what is still in the pipe."""

    def __init__(self, fd: int, cap: int) -> None:
        super().__init__(daemon=True)
        self.fd, self.cap = fd, cap
        os.set_blocking(fd, False)
        self.kept = bytearray()
        self.total = 0
        self.lock = threading.Lock()
        self.ended = False

    def run(self) -> None:
        waiter = select.poll()
        waiter.register(self.fd, select.POLLIN)
        try:
            while not self.ended:
                waiter.poll()
                with self.lock:
                    self._take()
        finally:
            with self.lock:
                self.ended = True
                os.close(self.fd)

    def _take(self) -> bool:
        """One read of the pipe (lock held); False when it holds nothing now or has ended."""
        if self.ended:
            return False
        try:
            chunk = os.read(self.fd, 65536)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        if not chunk:
            self.ended = True
            return False
        self.total += len(chunk)
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]
        return True

    def settle(self) -> None:
        """Take in everything the child wrote so far (it flushes before each reply, so
        after a reply this is all it printed until then)."""
        with self.lock:
            while self._take():
                pass

    def text(self) -> str:
        with self.lock:
            body = clean_output(self.kept.decode("utf-8", "replace"))
            dropped = self.total - len(self.kept)
        return body + (f"\n... [{dropped} more bytes of output dropped]" if dropped > 0 else "")


def _kill_live_children() -> None:
    """Kill and collect every child still running (a grader that is being ended)."""
    for child in list(LIVE):
        with contextlib.suppress(Exception):
            child.kill()


def _at_exit() -> None:
    """The interpreter is ending (a Ctrl-C may be why): a second Ctrl-C must not cut the
    cleanup of the children short, so it is ignored from here on."""
    if threading.current_thread() is threading.main_thread():
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    _kill_live_children()


atexit.register(_at_exit)


def install_signal_handlers() -> None:
    """On SIGTERM (and SIGHUP) the grader kills its children and removes what they
    left before it ends, as it would on a normal exit; SIGINT already unwinds through
    every ``close``.  Installed once, from the main thread, over the default action only
    (a handler the host program chose is kept)."""
    global _HANDLERS_INSTALLED
    if _HANDLERS_INSTALLED or threading.current_thread() is not threading.main_thread():
        return
    _HANDLERS_INSTALLED = True
    for number in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(number) == signal.SIG_DFL:
                signal.signal(number, _end_on_signal)


def _end_on_signal(number: int, frame: object) -> None:
    _kill_live_children()
    signal.signal(number, signal.SIG_DFL)
    os.kill(os.getpid(), number)  # end as the signal would have ended it


def kill_tree(proc: subprocess.Popen[bytes], fenced: bool) -> None:
    """SIGKILL the child's whole process group.  Inside the fence, the namespace's first
    process goes first, so that bwrap sees it die and exits by itself: the PID namespace
    then takes every other process with it, and nothing is left for a subreaper to
    inherit unreaped."""
    if fenced:
        for pid in _children_of(proc.pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=1)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


_SUBREAPER_LOCK = threading.Lock()
_WAS_SUBREAPER: bool | None = None  # what this process was before the first fence


def _prctl(option: int, arg: int) -> int:
    import ctypes

    return int(ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0))


def become_subreaper() -> None:
    """bwrap's outer process can end a moment before the init it started (when the
    child is killed); the init then goes to the nearest subreaper.  Being one while a
    fence lives, the grader collects it itself (``reap_fence_inits``) instead of
    leaving it to whoever started the grader."""
    global _WAS_SUBREAPER
    with _SUBREAPER_LOCK, contextlib.suppress(Exception):
        if _WAS_SUBREAPER is None:
            import ctypes

            flag = ctypes.c_int(0)
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(37, ctypes.byref(flag), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
            _WAS_SUBREAPER = bool(flag.value)
        _prctl(36, 1)  # PR_SET_CHILD_SUBREAPER


def stop_being_subreaper() -> None:
    """Once no fence lives: a process that stays a subreaper inherits every orphan of
    whatever else it runs (a pytest session's other subprocesses), and nobody reaps
    those.  A process that was a subreaper before the first fence stays one."""
    with _SUBREAPER_LOCK, contextlib.suppress(Exception):
        if not OUTERS and _WAS_SUBREAPER is False:
            _prctl(36, 0)


def reap_fence_inits() -> None:
    """Collect the init of a fence that outlived its bwrap and was handed to this
    process, which happens only when this process is a subreaper (a test harness, a
    service manager): a ``bwrap`` child of ours that is no live child's outer bwrap.
    Otherwise init collects it, and this returns after one look at /proc."""
    me = os.getpid()
    deadline = time.monotonic() + 0.5
    while True:
        waiting = False
        for pid, state in _bwrap_children(me):
            if pid in OUTERS:
                continue
            if state == "Z":
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
            else:
                waiting = True  # an init still tearing its namespace down
        if not waiting or time.monotonic() > deadline:
            return
        time.sleep(0.002)


def _bwrap_children(parent: int) -> list[tuple[int, str]]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as fh:
                head, rest = fh.read().rsplit(")", 1)
            fields = rest.split()
        except (OSError, ValueError):
            continue
        if len(fields) > 1 and head.endswith("(bwrap") and fields[1] == str(parent):
            found.append((int(name), fields[0]))
    return found


def _children_of(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
            return [int(p) for p in fh.read().split()]
    except (OSError, ValueError):
        return []
