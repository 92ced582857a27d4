"""Deadlines for the group's blocking waits, and the sweep of what a group leaves.

Rule: no wait of the closure run is without a deadline.

* Inside a group (:class:`Watchdog`): every step of the driver -- each phase,
  and the work between phases -- is armed with ``phase_timeout_s``. verl's
  weight sync has no deadline of its own: its sender blocks on a ZMQ socket
  and the driver's ``ray.get`` on it, so a receiver that fails (CUDA IPC
  refused, vLLM rejecting the adapter, an out-of-memory in the LoRA clone)
  would leave the group waiting forever (reproduced on CPU with verl's own
  ``BucketedWeightSender``). When a step's deadline passes, the watchdog
  interrupts the driver's main thread (SIGINT, which ends ``ray.get`` and
  asyncio waits; a second one seconds later if the first was absorbed, as
  ``asyncio.run`` absorbs it) so the ordinary failure path records the stuck
  step and shuts Ray down; if the driver has not ended ``grace_s`` later,
  the watchdog's own hard stop runs (write the record, exit 124).
* Around a group (the runner): the group's process has ``group_timeout_s``;
  at that deadline its whole process tree is killed (:func:`kill_tree`).
* After a group, however it ended, every process that carries the group's
  marker in its environment is killed (:func:`sweep_marked`). The marker is
  inherited by everything the group starts -- Ray's raylet and workers, the
  vLLM server and its non-daemon EngineCore children, which have no
  parent-death check of their own -- including processes that left the
  group's session, so nothing the group started outlives it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

MARKER_ENV = "RLSYS_CLOSURE_GROUP_TOKEN"


class Watchdog:
    """One armed deadline at a time, checked by a daemon thread.

    ``arm(label)`` (re)starts the clock for the step called ``label``;
    ``disarm()`` stops it. When an armed step runs past ``timeout_s``,
    ``on_expire(label, timeout_s)`` is called once, from the watchdog thread.
    """

    def __init__(
        self,
        timeout_s: float,
        on_expire: Callable[[str, float], None],
        *,
        clock: Callable[[], float] = time.monotonic,
        poll_s: float = 0.2,
    ) -> None:
        if not timeout_s > 0:
            raise ValueError(f"a deadline must be positive, got {timeout_s!r}")
        self.timeout_s = float(timeout_s)
        self._on_expire = on_expire
        self._clock = clock
        self._poll_s = poll_s
        self._lock = threading.Lock()
        self._label: str | None = None
        self._since = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.expired: str | None = None

    def arm(self, label: str) -> None:
        with self._lock:
            self._label, self._since = label, self._clock()

    def disarm(self) -> None:
        with self._lock:
            self._label = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="rlsys-watchdog", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None

    def check(self) -> str | None:
        """Fire if the armed step is overdue; returns the label that fired."""
        with self._lock:
            label = self._label
            overdue = label is not None and self._clock() - self._since > self.timeout_s
            if overdue:
                self._label = None
        if overdue and label is not None and self.expired is None:
            self.expired = label
            self._on_expire(label, self.timeout_s)
            return label
        return None

    def _loop(self) -> None:
        while not self._stop.wait(self._poll_s):
            if self.check() is not None:
                return


def interrupt_main_thread() -> None:
    """Deliver SIGINT to the main thread itself, so a blocking call there returns
    (``_thread.interrupt_main`` only sets a flag and leaves a blocked wait waiting)."""
    ident = threading.main_thread().ident
    if ident is not None:
        signal.pthread_kill(ident, signal.SIGINT)


# -- the runner's side: process trees -------------------------------------------------
def _children_of() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields after the last ')'.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1:
            tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (from /proc; empty where there is none)."""
    tree, out, todo = _children_of(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def marked_processes(token: str) -> list[int]:
    """Processes (of this user) whose environment holds ``MARKER_ENV=token``."""
    needle = f"{MARKER_ENV}={token}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            env = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] != "Z"  # a zombie holds no memory


def terminate(pids: Iterable[int], grace_s: float = 10.0) -> list[int]:
    """SIGTERM, then SIGKILL whatever is left after ``grace_s``; returns the pids signalled."""
    pids = [p for p in pids if p != os.getpid()]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        live = [p for p in pids if _alive(p)]
        if not live:
            break
        for p in live:
            with contextlib.suppress(OSError):
                os.kill(p, sig)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(_alive(p) for p in live):
            time.sleep(0.05)
    return pids


def sweep_marked(token: str, grace_s: float = 10.0) -> list[int]:
    """Kill every process still carrying the group's marker; returns their pids."""
    return terminate(marked_processes(token), grace_s)
