"""Child side of the isolation boundary.  NOT imported by the grader.

The parent runs this file's source with ``python -I -S -c`` (no site-packages, no
project code on the import path) in a scratch directory, optionally as an unprivileged
user.  Before it reads anything from the grader it fences itself with the plan in
argv[3] (``fence.plan``: rlimits, Landlock, the seccomp allow-list).  It speaks
length-prefixed JSON frames: requests on fd 0 (moved away from stdin before learner code
runs), replies on the fd named in argv[1].  Standard library only.
Everything it reports is re-checked by the parent; this side only has to be useful, the
parent's checks are what make scores trustworthy.
"""

from __future__ import annotations

import _json  # the C codec itself: ``json`` would import ``re`` and slow every start
import os
import resource
import sys
import types

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: the child starts a little faster
    from typing import Any

# Pristine references, taken before any learner code can patch builtins or modules.  The
# learner can still reach this module (it is __main__); the parent trusts nothing it says.
_type, _isinstance, _len, _str, _repr = type, isinstance, len, str, repr
_dict, _list, _float, _int, _bool = dict, list, float, int, bool
_callable, _memoryview, _min, _getattr = callable, memoryview, min, getattr
_float_repr, _int_repr, _str_str = float.__repr__, int.__repr__, str.__str__
_dict_items, _list_iter, _join = dict.items, list.__iter__, "".join
_read, _write, _exit, _set_blocking = os.read, os.write, os._exit, os.set_blocking
_BaseException, _Exception = BaseException, Exception
_ValueError, _NotImplementedError, _MemoryError = ValueError, NotImplementedError, MemoryError
_sys_stdout, _sys_stderr = sys.stdout, sys.stderr


# The C encoder and scanner objects themselves, built now: learner code that patches
# ``json`` (or anything else) later cannot reach them.
def _unencodable(value: Any) -> Any:
    raise TypeError("not plain data")  # never reached: _plain() sends only JSON types


_c_encode = _json.make_encoder(
    None, _unencodable, _json.encode_basestring_ascii, None, ":", ",", False, False, True
)


def _encode(value: Any) -> str:
    return _join(_c_encode(value, 0))


_CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


class _ScanContext:
    """What the C scanner reads from its context once, when built (as json.JSONDecoder)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


_scan_once = _json.make_scanner(_ScanContext())  # type: ignore[arg-type]  # a duck context
_MARK = "$rlsys_nonplain"
_MAX_NODES = 200_000
_MAX_DEPTH = 64
_CANARY_BYTES = 16 << 20
_EXIT_CHANNEL_LOST = 87  # the parent reads this status as "the reply channel was broken"
_EXIT_FENCE_FAILED = 86  # as fence.EXIT_FENCE_FAILED: the plan could not be applied


def _limits(spec: dict[str, Any]) -> None:
    plan = (
        ("RLIMIT_CORE", 0),
        ("RLIMIT_AS", spec.get("address_space_bytes")),
        ("RLIMIT_CPU", spec.get("cpu_seconds")),
        ("RLIMIT_FSIZE", spec.get("file_size_bytes")),
        ("RLIMIT_NOFILE", spec.get("open_files")),
        # 0 processes: fork, threads and daemons all fail, so nothing outlives the child.
        ("RLIMIT_NPROC", 0 if spec.get("no_processes") else None),
    )
    for name, value in plan:
        which = getattr(resource, name, None)
        if which is None or value is None:
            continue
        try:
            hard_now = resource.getrlimit(which)[1]
            soft = value if hard_now == resource.RLIM_INFINITY else min(value, hard_now)
            # CPU: leave a little headroom so SIGXCPU arrives before SIGKILL.
            hard = soft + 2 if name == "RLIMIT_CPU" and soft < hard_now else soft
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            pass


def _not_dumpable() -> None:
    """No core dumps (even to a core_pattern pipe), and no ptrace or /proc/<pid>/mem
    access from other processes of the same user, e.g. another submission's child."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except _BaseException:
        pass


def _seccomp(program: Any, libc: Any) -> bool:
    """Install the grader's seccomp allow-list (``fence.seccomp_program``, hex, built with
    libseccomp): every call it does not list fails with EPERM from here on, for this
    process and anything it could start.  False when it could not be installed."""
    if type(program) is not str or not program:
        return True  # no libseccomp where the grader runs: its fence says so
    import ctypes

    code = bytes.fromhex(program)
    buf = ctypes.create_string_buffer(code, len(code))

    class _Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = _Fprog(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p))
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    return _bool(libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0)  # PR_SET_SECCOMP, FILTER


def _is_dir(path: str) -> bool:
    try:
        return os.stat(path).st_mode & 0o170000 == 0o040000
    except OSError:
        return False


def _readable() -> list[str]:
    """What the child may read once fenced: the standard library (every entry of its
    folder but site-packages, where the grader itself may be installed), the folders of
    the shared libraries this interpreter mapped (only the plain files of one that holds
    the standard library), and the loader's cache and time zones."""
    stdlib = [entry for entry in sys.path if entry]
    paths: list[str] = ["/etc/ld.so.cache", "/etc/localtime", "/usr/share/zoneinfo"]
    for entry in stdlib:
        if not _is_dir(entry):
            paths.append(entry)  # python3XX.zip
            continue
        for name in os.listdir(entry):
            if name not in ("site-packages", "dist-packages"):
                paths.append(entry + "/" + name)
    libraries = set()
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if _len(fields) == 6 and fields[5].startswith("/") and ".so" in fields[5]:
                libraries.add(os.path.dirname(fields[5].strip()))
    for folder in libraries:
        if any(entry.startswith(folder + "/") for entry in stdlib):
            paths += [folder + "/" + n for n in os.listdir(folder) if ".so" in n]
        else:
            paths.append(folder)
    return paths


def _landlock(abi: int, scratch: str, libc: Any) -> bool:
    """Landlock this process: write only beneath ``scratch``, read only ``_readable()``;
    ABI 4+ no TCP, ABI 6+ signals and abstract unix sockets scoped to itself.

    A ctypes binding of its own, not the ``landlock`` package: this file runs with
    ``-I -S`` and the standard library only (it must not read the grader's venv), and
    that package's ruleset knows neither network rights (ABI 4) nor scopes (ABI 6)."""
    import ctypes

    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    handled = (1 << 13) - 1  # EXECUTE .. MAKE_SYM (ABI 1)
    handled |= (1 << 13 if abi >= 2 else 0) | (1 << 14 if abi >= 3 else 0)  # REFER, TRUNCATE
    handled |= 1 << 15 if abi >= 5 else 0  # IOCTL_DEV
    attr = (ctypes.c_uint64 * 3)(handled, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = syscall(ctypes.c_long(444), ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if ruleset < 0:
        return False

    class _Beneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed", ctypes.c_uint64), ("fd", ctypes.c_int32)]

    on_files = handled & (1 | 2 | 4 | 1 << 14 | 1 << 15)  # rights a file rule may carry

    def allow(path: str, rights: int) -> bool:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return True  # not on this machine: nothing to allow
        try:
            rule = _Beneath(rights if _is_dir(path) else rights & on_files, fd)
            added = syscall(ctypes.c_long(445), ctypes.c_long(ruleset), 1, ctypes.byref(rule), 0)
            return _bool(added == 0)
        finally:
            os.close(fd)

    ok = allow(scratch, handled) and allow("/dev/null", 2 | 4)
    for path in _readable():
        ok = ok and allow(path, 1 | 4 | 8)  # EXECUTE, READ_FILE, READ_DIR
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: Landlock requires it
    ok = ok and syscall(ctypes.c_long(446), ctypes.c_long(ruleset), 0) == 0
    os.close(ruleset)
    return ok


def _fence(plan: dict[str, Any]) -> None:
    """Apply the grader's plan (``fence.plan``) before the submission is read: limits,
    then Landlock, then the seccomp allow-list.  A mechanism the plan names that cannot
    be applied ends this process: nothing runs behind less than the grader records."""
    _limits(plan.get("limits", {}))
    _not_dumpable()
    # Everything it creates is its own uid's alone (the allow-list then refuses umask and
    # chmod): without Landlock, another child's uid cannot read what this one leaves.
    os.umask(0o077)
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        abi = plan.get("landlock", 0)
        fenced = not abi or _landlock(abi, plan["scratch"], libc)
        fenced = fenced and _seccomp(plan.get("seccomp"), libc)
    except _BaseException:
        fenced = False
    if not fenced:
        _exit(_EXIT_FENCE_FAILED)


class _TooBig(Exception):
    pass


def _plain(value: Any, depth: int, budget: list[int]) -> Any:
    """Copy ``value`` into exact JSON types; anything else becomes a marked stand-in.

    ``budget`` is [items left, characters left]: a value too big to send is refused here,
    before a huge frame is built.
    """
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig()
    if depth > _MAX_DEPTH:
        return {_MARK: "value nested more than " + _str(_MAX_DEPTH) + " levels deep"}
    kind = _type(value)
    if value is None or kind is _bool or kind is _float:
        return value
    if kind is _int:
        if value.bit_length() > 10_000:  # its decimal text would pass the digit cap
            return {_MARK: "int with more than 3000 digits"}
        return value
    if kind is _str:
        budget[1] -= _len(value)
        if budget[1] < 0:
            raise _TooBig()
        return value
    if kind is _list:
        return [_plain(item, depth + 1, budget) for item in _list_iter(value)]
    if kind is _dict:
        return _plain_dict(value, depth, budget)
    return _plain_subclass(value, kind, depth, budget)


def _plain_dict(value: dict[Any, Any], depth: int, budget: list[int]) -> Any:
    out: dict[str, Any] = {}
    for key, item in _dict_items(value):
        if _type(key) is not _str:
            if not _isinstance(key, _str):
                return {_MARK: "dict with a key of type " + _type(key).__name__}
            key = _str_str(key)  # str subclasses (str enums) as keys: their real text
        out[key] = _plain(item, depth + 1, budget)
    if _len(out) != _len(value):  # a str subclass key and its plain twin
        return {_MARK: "dict with two keys that are the same string"}
    if _MARK in out:
        return {_MARK: "dict using a reserved key"}
    return out


def _plain_subclass(value: Any, kind: type, depth: int, budget: list[int]) -> Any:
    # Subclasses of float/int/str/dict/list cross as their real value, read through the
    # base type's own methods so an overridden __eq__/__repr__/__float__ cannot lie.
    if _isinstance(value, _float):
        return _float(_float_repr(value))
    if _isinstance(value, _int) and not _isinstance(value, _bool):
        return _int(_int_repr(value))
    if _isinstance(value, _str):
        return _plain(_str_str(value), depth, budget)
    if _isinstance(value, _dict):
        return _plain(_dict(_dict_items(value)), depth, budget)
    if _isinstance(value, _list):
        return _plain(_list(_list_iter(value)), depth, budget)
    return {_MARK: _type_name(kind)}


def _encode_value(value: Any, max_chars: int) -> Any:
    try:
        return _plain(value, 0, [_MAX_NODES, max_chars])
    except _TooBig:
        return {
            _MARK: "value too large to send (over "
            + _str(_MAX_NODES)
            + " items or "
            + _str(max_chars // (1 << 20))
            + " MiB of text)"
        }
    except _BaseException as exc:  # a hostile __iter__, a cycle through a subclass...
        return {_MARK: "value could not be read: " + _type_name(_type(exc))}


class _FrameTooBig(Exception):
    pass


def _send(fd: int, message: dict[str, Any], max_bytes: int) -> None:
    data = _encode(message).encode("utf-8")
    if _len(data) > max_bytes:
        raise _FrameTooBig()
    frame = _len(data).to_bytes(4, "big") + data
    view = _memoryview(frame)
    while view:
        try:
            written = _write(fd, view)
        except BlockingIOError:  # the learner made the fd non-blocking: wait, as before
            _set_blocking(fd, True)
            continue
        view = view[written:]


def _read_some(fd: int, size: int) -> bytes:
    try:
        return _read(fd, size)
    except BlockingIOError:  # the learner made the fd non-blocking: a race, not a grade
        _set_blocking(fd, True)
        return _read(fd, size)
    except OSError:  # the learner closed or replaced the request fd (os.dup2 over it)
        _exit(_EXIT_CHANNEL_LOST)


def _recv(fd: int) -> Any:
    header = b""
    while _len(header) < 4:
        chunk = _read_some(fd, 4 - _len(header))
        if not chunk:
            return None
        header += chunk
    size = _int.from_bytes(header, "big")
    body = b""
    while _len(body) < size:
        chunk = _read_some(fd, _min(1 << 20, size - _len(body)))
        if not chunk:
            return None
        body += chunk
    return _scan_once(body.decode("utf-8"), 0)[0]


def _type_name(kind: type) -> str:
    """``module.QualName`` read from the class dicts, so hostile descriptors do not run."""
    try:
        name: Any = _type.__dict__["__qualname__"].__get__(kind)
        module: Any = kind.__dict__.get("__module__")
        if _type(name) is not _str:
            return "?"
        if _type(module) is not _str:
            return _str(name)
        return _str(name if module == "builtins" else module + "." + name)
    except _BaseException:
        return "?"


def _describe(exc: BaseException) -> dict[str, Any]:
    kind = _type(exc)
    try:
        text = _str(exc)
        if _type(text) is not _str:
            text = "<unprintable>"
    except _BaseException:
        text = "<unprintable>"
    return {
        "type": _type_name(kind),
        "value_error": _isinstance(exc, _ValueError),
        "not_implemented": _isinstance(exc, _NotImplementedError),
        "exception": _isinstance(exc, _Exception),
        "message": text[:500],
    }


def _learner_line(exc: BaseException, filename: str) -> int | None:
    """The line of the submission's own file where ``exc`` was raised: the innermost
    traceback frame whose code comes from that file (nothing of the harness's)."""
    line = None
    try:
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                line = tb.tb_lineno
            tb = tb.tb_next
    except _BaseException:
        return None
    return line if _type(line) is _int else None


def _load(request: dict[str, Any]) -> dict[str, Any]:
    name = "submission"
    module = types.ModuleType(name)
    module.__file__ = request["filename"]
    sys.modules[name] = module  # dataclasses and friends look their module up here
    try:
        code = compile(request["source"], request["filename"], "exec", dont_inherit=True)
    except SyntaxError as exc:
        return {
            "ok": False,
            "stage": "syntax",
            "error": _describe(exc),
            "line": exc.lineno,
            "offset": exc.offset,
            "text": (exc.text or "").rstrip(),
        }
    except _BaseException as exc:  # too deep or too big to compile (RecursionError,
        # MemoryError, OverflowError), a NUL byte (ValueError): replies.parse_load words it
        return {"ok": False, "stage": "compile", "error": _describe(exc)}
    try:
        exec(code, module.__dict__)
    except _BaseException as exc:
        return {"ok": False, "stage": "import", "error": _describe(exc)}
    found: dict[str, bool] = {}
    for func in request["functions"]:
        found[func] = _callable(module.__dict__.get(func))
    return {"ok": True, "functions": found, "module": module}


def _flush() -> None:
    """Push what the learner printed into the output pipe before the reply is sent;
    a closed or replaced stdout must not take the harness down."""
    for stream in (sys.stdout, sys.stderr, _sys_stdout, _sys_stderr):
        try:  # noqa: SIM105  (contextlib.suppress would look up patchable builtins)
            stream.flush()
        except _BaseException:
            pass


def _reply(fd: int, message: dict[str, Any], max_bytes: int) -> None:
    """Send one reply; a reply that cannot be built or is too big becomes a short one."""
    try:
        _send(fd, message, max_bytes)
    except OSError:
        _exit(_EXIT_CHANNEL_LOST)  # the learner closed or replaced the reply fd
    except _BaseException as exc:  # MemoryError while encoding, a frame over the cap...
        too_big = _isinstance(exc, (_MemoryError, _FrameTooBig))
        short: dict[str, Any] = {
            "ok": False,
            "error": {
                "type": "ReplyTooLarge" if too_big else "ReplyNotSent",
                "value_error": False,
                "not_implemented": False,
                "exception": True,
                # Worded by the grader (replies.parse_call): the failure's class only.
                "message": "" if too_big else _type_name(_type(exc)),
            },
        }
        if "id" in message:
            short["id"] = message["id"]
        try:
            _send(fd, short, max_bytes)
        except _BaseException:
            _exit(_EXIT_CHANNEL_LOST)


def _die_with_parent(parent: int) -> None:
    """SIGKILL when the grader dies, however it dies (PR_SET_PDEATHSIG); a grader that is
    already gone (it died before this ran) ends this process at once."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    except _BaseException:
        pass
    if parent > 0 and os.getppid() != parent:
        _exit(_EXIT_CHANNEL_LOST)


def main() -> None:
    reply_fd = _int(sys.argv[1])
    _die_with_parent(_int(sys.argv[2]))
    _fence(_scan_once(sys.argv[3], 0)[0])
    request_fd = os.dup(0)
    # Learner code gets an empty stdin; the request channel is ours alone.
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    hello = _recv(request_fd)
    if hello is None:
        return
    sys.setrecursionlimit(hello.get("recursion_limit", 1000))
    max_bytes = hello.get("max_frame_bytes", 16 * 1024 * 1024)
    try:
        # The grader's own limits must leave room to work; if they do not, that is the
        # instructor's setting, reported before any learner code runs.
        _room = bytearray(_CANARY_BYTES)
        del _room
    except _MemoryError:
        loaded: dict[str, Any] = {
            "ok": False,
            "stage": "limits",
            "error": {"type": "MemoryError", "message": ""},  # worded by the grader
        }
    else:
        loaded = _load(hello)
    module = loaded.pop("module", None)
    _flush()
    _reply(reply_fd, loaded, max_bytes)
    if module is None:
        return
    namespace = module.__dict__
    while True:
        request = _recv(request_fd)
        if request is None:
            return
        ident = request["id"]
        func = namespace.get(request["func"])
        try:
            result = func(*request["args"], **request["kwargs"])
        except _BaseException as exc:  # SystemExit, KeyboardInterrupt, GeneratorExit too
            # (``exc`` and its traceback, with whatever memory its frames hold, are
            # dropped when this block ends.)
            reply: dict[str, Any] = {"id": ident, "ok": False, "error": _describe(exc)}
            reply["error"]["line"] = _learner_line(exc, hello["filename"])
        else:
            reply = {"id": ident, "ok": True, "value": _encode_value(result, max_bytes)}
            result = None  # let it go before the arguments are copied
        reply["args_after"] = _encode_value([request["args"], request["kwargs"]], max_bytes)
        _flush()
        _reply(reply_fd, reply, max_bytes)


main()
