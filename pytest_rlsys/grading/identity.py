"""Who the child runs as and which Python it runs: fresh uids, interpreter discovery, and
the private IPC namespace wrapper (each probed once per grading process); the fence it
runs behind is ``fence``'s."""

from __future__ import annotations

import itertools
import os
import pwd
import secrets
import shutil
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class ChildIdentity:
    """Who the child runs as when the grader is root."""

    uid: int
    gid: int
    name: str
    fresh: bool = False  # a uid of its own: whatever it owns afterwards is removed


# "auto": a fresh uid per child, from a range no account uses, so that children of graders
# running side by side (rlsys batch) cannot signal or read one another.  One process never
# hands out the same uid twice: a counter from a random start walks the whole range
# (about 2.4e9 uids), so submission k + 1000 cannot find what submission k left.
EPHEMERAL_UID_BASE = 1_900_000_000
_UID_SPAN = 2**32 - 2 - EPHEMERAL_UID_BASE  # 2**32 - 1 is (uid_t) -1
_uid_start = secrets.randbelow(_UID_SPAN)
_uid_counter = itertools.count()
_uid_lock = threading.Lock()
allocated_uids: list[int] = []  # every fresh uid this process used (tests check only these)


def _ephemeral_identity() -> ChildIdentity:
    try:
        gid = pwd.getpwnam("nobody").pw_gid
    except KeyError:
        gid = 65534
    while True:
        with _uid_lock:
            serial = next(_uid_counter)
            if serial >= _UID_SPAN:  # pragma: no cover - billions of children
                raise RuntimeError("no fresh uid left for this grading process")
            uid = EPHEMERAL_UID_BASE + (_uid_start + serial) % _UID_SPAN
        try:
            pwd.getpwuid(uid)
        except KeyError:
            with _uid_lock:
                allocated_uids.append(uid)
            return ChildIdentity(uid, gid, "a fresh unprivileged uid", fresh=True)


def child_identity(name: str | None) -> ChildIdentity | None:
    """The identity for ``--rlsys-child-user``: None when not root or when told 'none'."""
    if name is None or name == "none" or os.geteuid() != 0:
        return None
    if name == "auto":
        return _ephemeral_identity()
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise ValueError(f"no user named {name!r} on this machine") from None
    return ChildIdentity(entry.pw_uid, entry.pw_gid, entry.pw_name)


_INTERPRETER_CACHE: dict[tuple[str, bool], str | None] = {}


def _searchable_by_others(folder: str) -> bool:
    """Whether every folder from ``folder`` up to / is searchable by others."""
    while True:
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return False
        parent = os.path.dirname(folder)
        if parent == folder:
            return True
        folder = parent


def _others_can_reach(exe: str) -> bool:
    """Whether a user who is neither the owner nor in the group could run ``exe``: every
    folder on its path as named and on its real path searchable by others, the file
    executable by others.  Cheap (no process); the probe below still confirms a candidate
    that passes."""
    try:
        real = os.path.realpath(exe)
        # exec walks the path as named before it follows the link: a kit's venv python
        # is a link to a system Python others may run, but behind the venv's root-only
        # folder they cannot reach it (the first load then failed, "Permission denied").
        named = os.path.dirname(os.path.abspath(exe))
        return bool(
            os.stat(real).st_mode & stat.S_IXOTH
            and _searchable_by_others(os.path.dirname(real))
            and _searchable_by_others(named)
        )
    except OSError:
        return False


def _candidates() -> list[str]:
    """Interpreters to try for the child, this one first."""
    candidates = [sys.executable, os.path.realpath(sys.executable)]
    candidates += [
        p
        for p in (
            shutil.which(
                f"python{sys.version_info[0]}.{sys.version_info[1]}",
                path="/usr/local/bin:/usr/bin:/bin",
            ),
            shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin"),
        )
        if p
    ]
    return list(dict.fromkeys(candidates))


def likely_interpreter(user: ChildIdentity | None) -> str | None:
    """The first candidate ``user`` can reach (``_others_can_reach``), found without
    starting a process; ``child_interpreter`` confirms it with a probe when in doubt."""
    if user is None:
        # The grader's own Python may sit behind a folder its uid cannot search (a root
        # pyenv run by a dropped uid): a failed start and the probe would cost ~60 ms.
        return next((exe for exe in _candidates() if os.access(exe, os.X_OK)), sys.executable)
    return next((exe for exe in _candidates() if _others_can_reach(exe)), None)


def child_interpreter(user: ChildIdentity | None) -> str | None:
    """A Python the child's user can execute (a root-only pyenv cannot be), confirmed by
    starting it as that user."""
    # Any unprivileged identity needs the same thing (an interpreter "others" may run),
    # so one probe serves every fresh uid.
    key = (sys.executable, user is not None)
    if key in _INTERPRETER_CACHE:
        return _INTERPRETER_CACHE[key]
    found = None
    for exe in _candidates():
        if user is not None and not _others_can_reach(exe):
            continue  # e.g. a pyenv under a 0700 /root: no need to start it to know
        try:
            done = subprocess.run(
                [exe, "-I", "-S", "-c", "import _json, resource, types"],  # as child.py
                user=user.uid if user else None,
                group=user.gid if user else None,
                extra_groups=[] if user else None,
                cwd="/",
                capture_output=True,
                timeout=20,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0:
            found = exe
            break
    _INTERPRETER_CACHE[key] = found
    return found


_IPC_WRAPPER: list[str] | None = None
_IPC_PROBED = False
_IPC_LOCK = threading.Lock()


def ipc_namespace_wrapper() -> list[str]:
    """``unshare --ipc`` when this kernel lets the grader (root) create a private System V
    IPC namespace: the child's shared memory, semaphores and message queues then vanish
    with it.  Empty when not available (the uid sweep in ``leftovers`` still applies)."""
    global _IPC_WRAPPER, _IPC_PROBED
    # Under the lock, and marked probed only once the answer is known: a batch starts
    # children from several threads at once, and one that asked while the first probe
    # ran must wait for its answer, not take "no wrapper" for it.
    with _IPC_LOCK:
        if _IPC_PROBED:
            return _IPC_WRAPPER or []
        tool = shutil.which("unshare", path="/usr/bin:/bin:/usr/sbin:/sbin")
        if tool is not None and os.geteuid() == 0:
            try:
                done = subprocess.run(
                    [tool, "--ipc", "-G", "65534", "-S", "65534", "--", "true"],
                    capture_output=True,
                    timeout=10,
                    check=False,
                )
                if done.returncode == 0:
                    _IPC_WRAPPER = [tool, "--ipc"]
            except (OSError, subprocess.SubprocessError):
                pass
        _IPC_PROBED = True
        return _IPC_WRAPPER or []
