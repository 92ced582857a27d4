"""The fence a child runs behind: which mechanisms this machine gives, the plan the child
applies to itself (Landlock, a seccomp allow-list, rlimits), and the level it records.

The child applies the plan before it reads the submission (``child.py``); this module only
decides what the plan is and names the result.  Rules: docs/threat-model.md, "The fence,
per mode".
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.messages import LABELS, Msg

# What a fence leaves open, in the run header's fence line (the fence's own words, en + zh).
FENCE_OPEN = {
    "seccomp": Msg(
        "processes, IPC objects, sockets and kernel keys: the child can create them",
        "进程、IPC 对象、套接字和内核密钥：子进程可以创建它们",
    ),
    "landlock": Msg(
        "files: the child reads and writes whatever its uid can",
        "文件：子进程可以读写其 uid 能读写的任何文件",
    ),
    "reads": Msg(
        "files: the child reads whatever its uid can (it can write, create or remove none): "
        "keep every copy of the reference on this machine unreadable to other users",
        "文件：子进程可以读取其 uid 能读取的任何文件（不能写入、创建或删除）："
        "请让本机上参考答案的每份副本都不可被其他用户读取",
    ),
    "proc": Msg(
        "other processes: the child reads what each shows under /proc (its name, signal "
        "masks, sizes), so submissions are graded one at a time: run one grader per machine",
        "其他进程：子进程可以读取每个进程在 /proc 下显示的内容（名称、信号掩码、大小），"
        "因此提交逐份评分：每台机器只运行一个评分器",
    ),
    "signals": Msg(
        "signals: the child can signal every process of its uid",
        "信号：子进程可以向其 uid 的所有进程发送信号",
    ),
}

__all__ = [
    "EXIT_FENCE_FAILED",
    "FENCE_TMPFS",
    "LEVELS",
    "Fence",
    "FenceTooWeak",
    "bwrap_fence",
    "describe",
    "fence_arguments",
    "for_limits",
    "landlock_abi",
    "machine_fence",
    "plan",
    "require",
    "seccomp_program",
]

# Weakest first: a level holds every guarantee of the ones before it.
LEVELS = ("none", "seccomp", "landlock", "bubblewrap")
EXIT_FENCE_FAILED = 86  # child.py exits with this when a mechanism of its plan failed

# What each missing mechanism leaves open (printed by ``rlsys fence``).
PLATFORM = "left to the platform: memory and CPU shares, disk quotas, kernel escapes"


class FenceTooWeak(ValueError):
    """This machine gives a weaker fence than the one required."""


@dataclass(frozen=True)
class Fence:
    """The fence one child runs (or would run) behind."""

    level: str
    mechanisms: tuple[str, ...]
    unprotected: tuple[str, ...] = ()  # what stays open, by its key in FENCE_OPEN

    def line(self, lang: str = "en") -> str:
        """One line for the terminal header: the level, its mechanisms, what stays open."""
        named = "; ".join(FENCE_OPEN[key].get(lang) for key in self.unprotected)
        open_ = LABELS["head_open"].fill(lang, {"what": named}) if named else ""
        return f"{self.level} ({', '.join(self.mechanisms)}){open_}"

    @property
    def one_at_a_time(self) -> bool:
        """Whether children of two submissions must never run at the same time: where
        /proc is not hidden from them (docs/threat-model.md, "What two children share")."""
        return "proc" in self.unprotected

    def record(self) -> dict[str, object]:
        return {"level": self.level, "mechanisms": list(self.mechanisms)}


@functools.cache
def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (or it is disabled, or a
    seccomp filter above this process refuses it)."""
    try:
        from landlock import landlock_abi_version

        return max(0, int(landlock_abi_version()))
    except Exception:  # the package's errors for ENOSYS/EOPNOTSUPP, or no libc
        return 0


# What a standard-library computation needs once it is running (its start-up ran before
# the filter).  Paths are fenced by Landlock, not here; what is missing fails with EPERM.
_ALLOWED = (  # names, split where the filter is built
    # memory
    "brk mmap munmap mremap mprotect madvise "
    # open descriptors
    "read write readv writev pread64 pwrite64 preadv pwritev lseek close fstat newfstatat "
    "stat lstat statx getdents getdents64 dup dup2 dup3 fsync "
    "fdatasync ftruncate sendfile copy_file_range pipe pipe2 "
    # paths (Landlock decides which; ``_WRITES`` below)
    "access faccessat faccessat2 readlink readlinkat getcwd chdir fchdir "
    # waiting and time
    "poll ppoll select pselect6 epoll_create epoll_create1 epoll_ctl epoll_wait "
    "epoll_pwait clock_gettime clock_getres clock_nanosleep nanosleep gettimeofday time "
    "alarm setitimer getitimer "
    # signals to itself, its own identity
    "rt_sigaction rt_sigprocmask rt_sigreturn sigaltstack rt_sigpending rt_sigsuspend "
    "rt_sigtimedwait pause getpid getppid gettid getuid geteuid getgid getegid getresuid "
    "getresgid getgroups getpgrp getpgid getsid getrusage times uname "
    "sched_getaffinity sched_yield getpriority getrlimit getcpu getrandom "
    "set_robust_list rseq set_tid_address exit exit_group "
    # on the socketpair below (no socket() or connect() is allowed, so no other exists)
    "getsockname getpeername sendto recvfrom sendmsg recvmsg shutdown getsockopt setsockopt"
)
# What writes to a path: allowed only where something confines where (Landlock: beneath
# the child's scratch folder; bubblewrap: its private tmpfs, the host's root read-only).
# Elsewhere nothing would, and a file or a name left in a shared folder is a channel to
# another child and a change to the grader's user's files: open only to read, and none
# of these.
_WRITES = (
    "mkdir mkdirat rmdir unlink unlinkat rename renameat renameat2 truncate symlink "
    "symlinkat link linkat openat2"
)
_OPEN_WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC  # O_TMPFILE needs a write mode
# prctl options that read state or name the thread; PR_SET_PDEATHSIG (1), DUMPABLE,
# SECCOMP, NO_NEW_PRIVS, PTRACER and CHILD_SUBREAPER are not among them.
_PRCTL_SAFE = (2, 3, 15, 16, 21, 23, 30, 39)  # GET_PDEATHSIG, GET_DUMPABLE, SET/GET_NAME...
# fcntl commands on its own descriptors: DUPFD, GETFD, SETFD, GETFL, SETFL, GETOWN,
# DUPFD_CLOEXEC, the pipe size and the seals.  Not F_SETOWN(_EX) or F_SETSIG: with O_ASYNC
# they make the kernel send the grader any signal (a clean-room attack stopped and killed
# a grader that way where Landlock's signal scope is missing).  Nothing keyed by an inode
# that another process can also open (docs/threat-model.md, "What two children share"):
# no record locks (GETLK/SETLK/SETLKW and the OFD ones carried a hidden input from one
# child to another through a lock on a standard-library file, in every mode), no leases,
# no dnotify; and, above, no flock, no fadvise (evicting a shared file's pages), no
# statfs (a file system's free space), no sysinfo (the machine's memory and process
# count), no umask (the child's files stay 0600/0700: ``child.py``).
_FCNTL_SAFE = (0, 1, 2, 3, 4, 9, 1030, 1031, 1032, 1033, 1034)
# futex only with FUTEX_PRIVATE_FLAG: a shared futex is keyed by the inode and offset of
# a shared mapping, so two children mapping one read-only library file could wait and
# wake each other through it.  Python's and glibc's own locks are process-private.
_FUTEX_PRIVATE = 128
# TCGETS (isatty), TIOCGWINSZ (terminal size), FIONCLEX/FIOCLEX (Python's way to set
# close-on-exec: tempfile.TemporaryFile failed without them), FIONREAD, FIONBIO.
_IOCTL_SAFE = (0x5401, 0x5413, 0x5450, 0x5451, 0x541B, 0x5421)


@functools.cache
def seccomp_program(writes: bool = True) -> bytes | None:
    """The child's seccomp allow-list as classic BPF, built with libseccomp: deny by
    default (EPERM; a call through another syscall ABI kills), ``_ALLOWED`` allowed,
    ``_WRITES`` and opening to write only with ``writes`` (else open only to read), and
    argument filters for prctl, fcntl, ioctl, futex (private only), prlimit64 (read only)
    and, without Landlock's
    signal scope (ABI 6), kill (own process group only; tgkill refused).  None where
    libseccomp is not available."""
    try:
        with _sonames_first():
            import pyseccomp as sc

        rules = sc.SyscallFilter(sc.ERRNO(errno.EPERM))
        for name in (_ALLOWED + (" open openat " + _WRITES if writes else "")).split():
            try:
                rules.add_rule(sc.ALLOW, name)
            except Exception:  # a call this architecture does not have (e.g. open on arm64)
                continue
        if not writes:
            for name, flags in (("open", 1), ("openat", 2)):
                with contextlib.suppress(Exception):  # no open on arm64
                    rules.add_rule(sc.ALLOW, name, sc.Arg(flags, sc.MASKED_EQ, _OPEN_WRITES, 0))
        for option in _PRCTL_SAFE:
            rules.add_rule(sc.ALLOW, "prctl", sc.Arg(0, sc.EQ, option))
        for command in _FCNTL_SAFE:
            rules.add_rule(sc.ALLOW, "fcntl", sc.Arg(1, sc.EQ, command))
        for request in _IOCTL_SAFE:
            rules.add_rule(sc.ALLOW, "ioctl", sc.Arg(1, sc.EQ, request))
        rules.add_rule(sc.ALLOW, "futex", sc.Arg(1, sc.MASKED_EQ, _FUTEX_PRIVATE, _FUTEX_PRIVATE))
        if landlock_abi() >= 6:
            # Landlock scopes signals to the child itself: raise(), abort() and
            # os.kill(os.getpid(), ...) mean what they mean outside.
            for name in ("kill", "tgkill", "tkill"):
                rules.add_rule(sc.ALLOW, name)
        else:  # without the scope, the child's own process group only
            rules.add_rule(sc.ALLOW, "kill", sc.Arg(0, sc.EQ, 0))
        rules.add_rule(sc.ALLOW, "prlimit64", sc.Arg(2, sc.EQ, 0))
        # A connected pair inside the process (asyncio's self-pipe): AF_UNIX only, and no
        # socket() at all, so nothing can be reached or bound.
        rules.add_rule(sc.ALLOW, "socketpair", sc.Arg(0, sc.EQ, 1))
        with tempfile.TemporaryFile() as out:
            rules.export_bpf(out)
            out.seek(0)
            return out.read()
    except Exception:  # no libseccomp on this machine
        return None


_PREPARING: list[threading.Thread] = []


def prepare() -> None:
    """Find this machine's fence (bubblewrap's probe; Landlock's ABI and the seccomp
    program: processes started and libraries looked up, most of a child's start on the
    grader's side) on two threads, once per process, while the grader starts; whoever
    needs the fence first waits for them (``machine_fence``, ``bwrap_fence``, ``plan``)."""
    if not _PREPARING:
        threads = [threading.Thread(target=_preparing, args=(job,), daemon=True) for job in _JOBS]
        for thread in threads:
            thread.start()
        _PREPARING.extend(threads)


def _probe_root() -> None:
    if os.geteuid() == 0:
        bwrap_fence()


def _prepare_filters() -> None:
    # The variant ``plan`` sends; without Landlock it waits for bubblewrap's probe.
    seccomp_program(writes=landlock_abi() > 0 or bwrap_fence() is not None)


_JOBS = (_probe_root, _prepare_filters)
_ON_PREPARING_THREAD = threading.local()


def _preparing(job: Callable[[], None]) -> None:
    _ON_PREPARING_THREAD.yes = True  # its own waits for the fence do not wait for itself
    with contextlib.suppress(Exception):  # met again, and reported, where it is needed
        job()


def _prepared() -> None:
    if not getattr(_ON_PREPARING_THREAD, "yes", False):
        for thread in _PREPARING:
            thread.join()


@contextlib.contextmanager
def _sonames_first() -> Iterator[None]:
    """pyseccomp finds libc and libseccomp with ``ctypes.util.find_library``, which runs
    ``ldconfig -p`` once for each (12 ms a grade); their usual sonames are tried first,
    loaded by the dynamic linker from the same places, and the lookup only where they fail."""
    import ctypes
    import ctypes.util

    find = ctypes.util.find_library

    def first(name: str) -> str | None:
        soname = {"c": "libc.so.6", "seccomp": "libseccomp.so.2"}.get(name)
        try:
            return soname if soname and ctypes.CDLL(soname) else find(name)
        except OSError:
            return find(name)

    ctypes.util.find_library = first
    try:
        yield
    finally:
        ctypes.util.find_library = find


def machine_fence(own_uid: bool | None = None, namespaces: bool | None = None) -> Fence:
    """The fence a child gets on this machine: ``own_uid`` when it runs as another uid than
    the grader's (default: when root), ``namespaces`` when bubblewrap runs (probed when
    None and ``own_uid``)."""
    _prepared()
    if own_uid is None:
        own_uid = os.geteuid() == 0
    abi = landlock_abi()
    if namespaces is None:
        namespaces = own_uid and bwrap_fence() is not None
    # The variant ``plan`` sends (libseccomp builds both or neither): one build a process.
    seccomp = seccomp_program(writes=bool(namespaces) or abi > 0) is not None
    mechanisms = _mechanisms(abi, seccomp=seccomp, namespaces=bool(namespaces), own_uid=own_uid)
    level = "none"
    if seccomp:
        level = "seccomp"
        if abi:
            level = "bubblewrap" if namespaces else "landlock"
    unprotected = [] if seccomp else ["seccomp"]
    if not abi and not namespaces:  # without confinement the allow-list refuses writes
        unprotected.append("reads" if seccomp else "landlock")
        # Nothing hides /proc (Landlock refuses it, bubblewrap's PID namespace empties
        # it): what a child shows there of itself (its name, its signal masks, its
        # sizes) the other children read, so no two submissions' children run at once.
        unprotected.append("proc")
    if abi < 6 and not namespaces and not seccomp:  # seccomp allows only kill(0, ...)
        unprotected.append("signals")
    return Fence(level, tuple(mechanisms), tuple(unprotected))


def _mechanisms(abi: int, *, seccomp: bool, namespaces: bool, own_uid: bool) -> list[str]:
    """The mechanisms that fence a child, in the order ``rlsys fence`` lists them."""
    mechanisms = ["bubblewrap"] if namespaces else []
    if abi:
        mechanisms.append(f"landlock-abi-{abi}")
    if seccomp:
        mechanisms.append("seccomp-allow-list")
    mechanisms.append("rlimits")
    if own_uid:
        mechanisms.append("own-uid")
        if not abi and not seccomp:  # the allow-list leaves nothing to sweep (isolation)
            mechanisms.append("sweep")
    return mechanisms


def for_limits(limits: Limits) -> Fence:
    """The fence a child with these limits gets here (the terminal header's line)."""
    return machine_fence(own_uid=os.geteuid() == 0 and limits.child_user is not None)


def describe(have: Fence) -> str:
    """What ``rlsys fence`` prints: the level, its mechanisms, what stays open."""
    lines = [f"fence: {have.level}", *(f"  {m}" for m in have.mechanisms)]
    if have.unprotected:
        lines += ["not protected:", *(f"  {FENCE_OPEN[key].en}" for key in have.unprotected)]
    lines.append(PLATFORM)
    levels = " < ".join(LEVELS)
    lines.append(f"levels: {levels} (--require-fence LEVEL refuses a weaker one)")
    return "\n".join(lines) + "\n"


def require(needed: str | None, have: Fence) -> None:
    """Refuse (FenceTooWeak) when ``have`` is weaker than the level ``needed``."""
    if needed is None or LEVELS.index(have.level) >= LEVELS.index(needed):
        return
    raise FenceTooWeak(
        f"this machine gives the fence {have.level} ({', '.join(have.mechanisms)}), "
        f"weaker than the required "
        f"{needed!r}; run `rlsys fence` to see what is missing, grade where it is "
        "available (a kernel with Landlock, libseccomp installed, root with bubblewrap), "
        "or lower the requirement"
    )


def plan(scratch: str, limits: Limits, confined: bool = False) -> str:
    """What the child applies to itself before it reads the submission (argv, JSON);
    ``confined``: inside bubblewrap (its writes cannot leave its private tmpfs)."""
    _prepared()
    program = seccomp_program(writes=confined or landlock_abi() > 0)
    return json.dumps(
        {
            "scratch": scratch,
            "landlock": landlock_abi(),
            "seccomp": program.hex() if program else "",
            "limits": {
                "address_space_bytes": limits.address_space_mb * 1024 * 1024,
                "cpu_seconds": limits.cpu_seconds,
                "file_size_bytes": limits.file_size_mb * 1024 * 1024,
                "open_files": limits.open_files,
                "no_processes": True,
            },
        },
        separators=(",", ":"),
    )


# -- bubblewrap, as root where the kernel allows namespaces -------------------------------

_BWRAP: tuple[str, str] | None = None
_BWRAP_PROBED = False
_BWRAP_LOCK = threading.Lock()


def bwrap_fence() -> tuple[str, str] | None:
    """``bwrap`` and ``setpriv`` (which drops to the child's uid inside) when bwrap runs
    here as root with every namespace the fence uses (mount, PID, IPC, network, UTS);
    None otherwise (no bubblewrap, not root, or a container that forbids namespaces):
    the fallback fence (``leftovers``) applies then.  Probed once per process, under a
    lock: a child started while the probe runs waits for its answer (it once took the
    "no bwrap" of a probe still running, and ran behind the fallback fence)."""
    global _BWRAP, _BWRAP_PROBED
    _prepared()
    with _BWRAP_LOCK:
        if not _BWRAP_PROBED:
            _BWRAP = _probe_bwrap()
            _BWRAP_PROBED = True
        return _BWRAP


def _probe_bwrap() -> tuple[str, str] | None:
    tool = shutil.which("bwrap", path="/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin")
    setpriv = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")
    if tool is None or setpriv is None or os.geteuid() != 0:
        return None
    if os.environ.get("RLSYS_NO_BWRAP"):  # the fallback fence on purpose (its tests)
        return None
    try:
        done = subprocess.run(
            # --as-pid-1: no init of bwrap's own that could outlive the probe.
            [tool, *fence_arguments("/tmp/rlsys-probe"), "--as-pid-1", "--", "/bin/true"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return (tool, setpriv) if done.returncode == 0 else None


# The writable places inside the fence: private tmpfs mounts, sized so that the disk of
# the machine is not the limit; everything else is the host's root, read-only.
FENCE_TMPFS = (("/tmp", 64), ("/var/tmp", 16), ("/dev/shm", 16), ("/run/lock", 1))


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _hidden_by_tmpfs(interpreter: str) -> list[str]:
    """The folders the child's interpreter needs (its venv or prefix, and the prefix
    its link points to) that lie under one of the fence's private tmpfs mounts (an
    interpreter installed below /tmp, as in a test root): bound back read-only, or the
    child could not start (exit 127).  Their permissions still apply inside."""
    found: list[str] = []
    for path in (os.path.abspath(interpreter), os.path.realpath(interpreter)):
        prefix = os.path.dirname(os.path.dirname(path))
        if prefix not in found and any(_under(prefix, tmp) for tmp, _ in FENCE_TMPFS):
            found.append(prefix)
    return found


def fence_arguments(scratch: str, interpreter: str = "") -> list[str]:
    """bwrap's options: the host's root read-only, a private tmpfs on every writable
    path, fresh /proc and /dev, new PID/IPC/network/UTS namespaces (the whole tree dies
    with the namespace's first process), SIGKILL when the grader dies, the seccomp
    and ``scratch`` made inside the private /tmp (the child's home and cwd).  The seccomp
    filter (``seccomp_program``) is installed by the child itself, fenced or not."""
    args = ["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc"]
    args += ["--unshare-net"]
    args += ["--unshare-uts", "--unshare-cgroup-try", "--ro-bind", "/", "/"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for path, mib in FENCE_TMPFS:
        if path == "/run/lock" and not os.path.isdir(path):
            continue
        args += ["--perms", "1777", "--size", str(mib * 1024 * 1024), "--tmpfs", path]
    for prefix in _hidden_by_tmpfs(interpreter) if interpreter else []:
        args += ["--ro-bind", prefix, prefix]
    args += ["--perms", "1777", "--dir", scratch, "--chdir", scratch]
    return args


SETSID = shutil.which("setsid", path="/usr/bin:/bin") or "/usr/bin/setsid"


def in_bubblewrap(
    command: list[str], scratch: str, interpreter: str, uid: int, gid: int, tools: tuple[str, str]
) -> list[str]:
    """bwrap (as root) builds the namespaces and mounts, setpriv drops to the child's
    uid/gid with no groups and no capabilities, then Python starts.  Inside, a root shell
    waits for the child (its exit status is the child's) and the child gets a session of
    its own: signals the submission sends (kill(-1), killpg of its parent's group) mean
    what they mean outside."""
    bwrap, setpriv = tools
    waiter = ["/bin/sh", "-c", '"$@"; exit $?', "sh", SETSID]
    drop = [setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
    drop += ["--inh-caps=-all", "--bounding-set=-all", "--"]
    return [bwrap, *fence_arguments(scratch, interpreter), "--", *waiter, *drop, *command]
