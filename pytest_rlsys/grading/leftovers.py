"""What a child may leave behind on a kernel without Landlock, and how the parent removes it.

Behind Landlock and the seccomp allow-list (``fence``) a child can write only in its
scratch folder and create no process or IPC object, so only ``remove_tree`` (of that
folder) is used there; behind the allow-list alone it can write nowhere at all.  The walk
and the sweep below run only where neither is there (``ChildProcess._sweeps``).

A child runs under its own fresh uid when the grader is root, so everything that uid owns
after the child is gone is the child's: processes, System V IPC objects (shared memory,
semaphores, message queues), POSIX shared memory and message queues (files in /dev/shm and
/dev/mqueue) and files in the world-writable temporary folders.  Each function here is
bounded in time and never raises: cleanup must not be able to stop a grade from being
recorded.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from pathlib import Path

__all__ = [
    "WORLD_WRITABLE",
    "clean_uid",
    "remove_tree",
    "scratch_made",
    "start_walk",
    "writable_folders",
]

# Where an unprivileged uid can create files on an ordinary Linux system.
WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue")
_IPC_RMID = 0
# Every scratch folder handed to a child, in order (tests check that their own are gone).
scratch_made: list[str] = []


# rm, then (only where it failed) chmod -R u+rwx and rm again: "$1" the tree, "$2" rm,
# "$3" chmod.
_REMOVE = (
    '"$2" -rf --one-file-system -- "$1" 2>/dev/null'
    ' || { "$3" -R u+rwx -- "$1"; "$2" -rf --one-file-system -- "$1"; }'
)


def remove_tree(path: str, timeout_s: float = 5.0) -> None:
    """Remove a folder tree of any depth or size, waiting at most ``timeout_s``.

    ``shutil.rmtree`` recurses in Python (a 3,000-level chain raises RecursionError) and
    cannot be stopped; ``rm -rf`` walks iteratively and, past the time limit, finishes in
    the background while grading goes on."""
    with contextlib.suppress(OSError):
        if not os.path.lexists(path):
            return
    if _small_tree(path):
        # The usual case (an empty or nearly empty scratch folder): no process to start.
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            return
    rm = shutil.which("rm", path="/usr/bin:/bin")
    chmod = shutil.which("chmod", path="/usr/bin:/bin")
    if rm is None or chmod is None:  # pragma: no cover - every Linux has both
        with contextlib.suppress(Exception):
            shutil.rmtree(path, ignore_errors=True)
        return
    # A folder the child made without read or search rights for its owner (mkdir with
    # mode 0300 or 0000; the child may not chmod) stops rm of a grader that is not root:
    # then its owner, the grader's user, gives itself the rights back and removes it.
    # chmod -R walks without following links, as rm does.
    try:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", _REMOVE, "sh", path, rm, chmod],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        # Finishes in the background; a daemon thread reaps it, so no zombie is left.
        threading.Thread(target=proc.wait, daemon=True).start()


def _small_tree(path: str, most: int = 256, deepest: int = 32) -> bool:
    """Whether ``path`` holds at most ``most`` entries, none deeper than ``deepest``:
    small enough for ``shutil.rmtree`` (recursive, unbounded) to be safe and quick."""
    pending = [(path, 0)]
    seen = 0
    try:
        while pending:
            folder, depth = pending.pop()
            if depth > deepest:
                return False
            with os.scandir(folder) as entries:
                for entry in entries:
                    seen += 1
                    if seen > most:
                        return False
                    if entry.is_dir(follow_symlinks=False):
                        pending.append((entry.path, depth + 1))
    except OSError:
        return False
    return True


def _kill_processes(uid: int) -> int:
    """SIGKILL every process whose real or effective uid is ``uid``; how many were found."""
    found = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", encoding="ascii", errors="replace") as fh:
                for line in fh:
                    if line.startswith("Uid:"):
                        ids = line.split()[1:3]
                        break
                else:
                    continue
        except OSError:
            continue
        if str(uid) in ids:
            found += 1
            with contextlib.suppress(OSError):
                os.kill(int(name), signal.SIGKILL)
    return found


def _sysv_objects(uid: int) -> list[tuple[str, int]]:
    """(kind, id) of every System V IPC object owned or created by ``uid``."""
    out: list[tuple[str, int]] = []
    for kind, id_column in (("shm", "shmid"), ("sem", "semid"), ("msg", "msqid")):
        try:
            lines = Path(f"/proc/sysvipc/{kind}").read_text(encoding="ascii").splitlines()
        except OSError:
            continue
        if not lines:
            continue
        header = lines[0].split()
        try:
            at_id, at_uid, at_cuid = (header.index(c) for c in (id_column, "uid", "cuid"))
        except ValueError:
            continue
        for line in lines[1:]:
            cols = line.split()
            with contextlib.suppress(IndexError, ValueError):
                if str(uid) in (cols[at_uid], cols[at_cuid]):
                    out.append((kind, int(cols[at_id])))
    return out


def _remove_sysv(objects: list[tuple[str, int]]) -> None:
    if not objects:
        return
    import ctypes  # only when there is something to remove

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover
        return
    for kind, ident in objects:
        with contextlib.suppress(Exception):
            if kind == "shm":
                libc.shmctl(ident, _IPC_RMID, None)
            elif kind == "sem":
                libc.semctl(ident, 0, _IPC_RMID)
            else:
                libc.msgctl(ident, _IPC_RMID, None)


def _remove_files(uid: int, folders: tuple[str, ...]) -> None:
    """Remove every entry owned by ``uid`` directly inside the world-writable folders
    (the only places it could create one); a folder is removed with all it holds."""
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_uid != uid:
                continue
            if stat.S_ISDIR(info.st_mode):
                remove_tree(entry.path)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


# Where the walk for writable folders never goes: kernel views.
_NOT_WALKED = ("/proc", "/sys")
WALK_MAX_FOLDERS = 200_000
WALK_MAX_SECONDS = 10.0
_walks: dict[int, tuple[threading.Thread, list[str]]] = {}
_walk_lock = threading.Lock()


# File systems whose folders count their subfolders in their link count (2: none), as
# GNU find's leaf optimisation assumes; on others (overlay, btrfs, network ones) a folder
# of link count 2 is still read.
_COUNTS_SUBFOLDERS = frozenset({"ext2", "ext3", "ext4", "xfs", "tmpfs"})


def _counting_devices() -> frozenset[int]:
    """The devices (``st_dev``) mounted here with a file system of ``_COUNTS_SUBFOLDERS``."""
    found: set[int] = set()
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in lines.splitlines():
        fields, _, rest = line.partition(" - ")
        major, _, minor = (fields.split()[2:3] or [""])[0].partition(":")
        if rest.split()[:1] and rest.split()[0] in _COUNTS_SUBFOLDERS:
            with contextlib.suppress(ValueError):
                found.add(os.makedev(int(major), int(minor)))
    return frozenset(found)


def _walk(gid: int, found: list[str]) -> None:
    """Iterative: every folder a child of group ``gid`` may create an entry in (writable
    by others, or by its group), below folders it may enter (searchable by others).  A
    folder with no subfolder (link count 2 where that count is exact) is not read: most
    folders of a machine are such leaves, and the walk's cost is the folders it reads."""
    pending, seen, stop = ["/"], 0, time.monotonic() + WALK_MAX_SECONDS
    exact = _counting_devices()
    while pending and seen < WALK_MAX_FOLDERS and time.monotonic() < stop:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                children = [e for e in entries if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for entry in children:
            seen += 1
            if entry.path in _NOT_WALKED:
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            mode = info.st_mode
            if mode & stat.S_IWOTH or (mode & stat.S_IWGRP and info.st_gid == gid):
                found.append(entry.path)
            if info.st_nlink == 2 and info.st_dev in exact:
                continue  # no folder below it
            if mode & stat.S_IXOTH or (mode & stat.S_IXGRP and info.st_gid == gid):
                pending.append(entry.path)  # a folder the child cannot enter is skipped


def start_walk(gid: int = 65534) -> None:
    """Begin finding ``writable_folders`` in the background (once per process and gid),
    so that the walk overlaps the first child's run."""
    with _walk_lock:
        if gid not in _walks:
            found: list[str] = []
            thread = threading.Thread(target=_walk, args=(gid, found), daemon=True)
            _walks[gid] = (thread, found)
            thread.start()


def writable_folders(gid: int = 65534) -> tuple[str, ...]:
    """Every folder an unprivileged child of group ``gid`` could create an entry in,
    nested ones included (``/tmp/.X11-unix``, ``/run/lock``), found once per process by
    an iterative walk of the whole file system (bounded: ``WALK_MAX_FOLDERS`` folders,
    ``WALK_MAX_SECONDS``); the four usual places always count."""
    start_walk(gid)
    thread, found = _walks[gid]
    thread.join(WALK_MAX_SECONDS)
    return tuple(dict.fromkeys([*WORLD_WRITABLE, *list(found)]))


def clean_uid(uid: int, folders: tuple[str, ...] | None = None, gid: int = 65534) -> None:
    """Remove everything ``uid`` still owns: processes first (so nothing recreates what is
    removed next), then System V IPC objects, then its entries in every writable folder
    (``writable_folders``).  Only for a uid that belongs to one child alone (the fresh
    uid of ``--rlsys-child-user auto``)."""
    for _ in range(3):  # a process that was mid-fork when the first sweep ran
        if not _kill_processes(uid):
            break
    _remove_sysv(_sysv_objects(uid))
    _remove_files(uid, folders if folders is not None else writable_folders(gid))


_STALE_SWEPT: list[bool] = []  # once per grading process


def remove_stale_scratch() -> None:
    """Remove the scratch folders of graders that are gone (killed with SIGKILL, so
    they could not): ``rlsys-child-PID-*`` in the temporary folder whose PID is no live
    process.  Once per process; a reused PID only keeps a folder until the next time."""
    if _STALE_SWEPT:
        return
    _STALE_SWEPT.append(True)
    base = tempfile.gettempdir()
    names: list[str] = []
    with contextlib.suppress(OSError):
        names = os.listdir(base)
    for name in names:
        pid = name.split("-")[2] if name.startswith("rlsys-child-") else ""
        if not pid.isdigit() or os.path.exists(f"/proc/{pid}"):
            continue
        # Another grader's leftover: failing to remove it must never cost this grading
        # a case (it runs as the first child starts), whatever the removal raises.
        with contextlib.suppress(Exception):
            remove_tree(os.path.join(base, name), timeout_s=1.0)
