"""Child side of the isolation boundary.  NOT imported by the grader.

The parent runs this file's source with ``python -I -S -c`` (no site-packages, no
project code on the import path) in a scratch directory, optionally as an unprivileged
user.  It speaks length-prefixed JSON frames: requests on fd 0 (moved away from stdin
before learner code runs), replies on the fd named in argv[1].  Standard library only.
Everything it reports is re-checked by the parent; this side only has to be useful, the
parent's checks are what make scores trustworthy.
"""

import json
import os
import resource
import sys
import types

# Pristine references, taken before any learner code can patch builtins or modules.
_type, _isinstance, _len, _str, _repr = type, isinstance, len, str, repr
_dict, _list, _float, _int, _bool = dict, list, float, int, bool
_float_repr, _int_repr, _str_str = float.__repr__, int.__repr__, str.__str__
_dict_items, _list_iter = dict.items, list.__iter__
_read, _write, _BaseException, _Exception = os.read, os.write, BaseException, Exception
_ValueError, _NotImplementedError = ValueError, NotImplementedError
_encoder = json.JSONEncoder(ensure_ascii=True, allow_nan=True, check_circular=False)
_encode = _encoder.encode
_decoder = json.JSONDecoder()
_decode = _decoder.decode
_MARK = "$rlsys_nonplain"
_MAX_NODES = 200_000
_MAX_DEPTH = 64


def _limits(spec):
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


class _TooBig(Exception):
    pass


def _plain(value, depth, budget):
    """Copy ``value`` into exact JSON types; anything else becomes a marked stand-in."""
    budget[0] -= 1
    if budget[0] < 0 or depth > _MAX_DEPTH:
        raise _TooBig()
    kind = _type(value)
    if value is None or kind is _bool or kind is _str:
        return value
    if kind is _int:
        return value
    if kind is _float:
        return value
    if kind is _list:
        return [_plain(item, depth + 1, budget) for item in _list_iter(value)]
    if kind is _dict:
        out = {}
        for key, item in _dict_items(value):
            if _type(key) is not _str:
                return {_MARK: "dict with a key of type " + _type(key).__name__}
            out[key] = _plain(item, depth + 1, budget)
        if _MARK in out:
            return {_MARK: "dict using a reserved key"}
        return out
    # Subclasses of float/int/str/dict/list cross as their real value, read through the
    # base type's own methods so an overridden __eq__/__repr__/__float__ cannot lie.
    if _isinstance(value, _float):
        return _float(_float_repr(value))
    if _isinstance(value, _int) and not _isinstance(value, _bool):
        return _int(_int_repr(value))
    if _isinstance(value, _str):
        return _str_str(value)
    if _isinstance(value, _dict):
        return _plain(_dict(_dict_items(value)), depth, budget)
    if _isinstance(value, _list):
        return _plain(_list(_list_iter(value)), depth, budget)
    return {_MARK: kind.__module__ + "." + kind.__qualname__}


def _encode_value(value):
    try:
        return _plain(value, 0, [_MAX_NODES])
    except _TooBig:
        return {_MARK: "value too large or too deeply nested"}
    except _BaseException as exc:  # a hostile __iter__ and the like
        return {_MARK: "value could not be read: " + _type(exc).__name__}


def _send(fd, message):
    data = _encode(message).encode("utf-8")
    frame = _len(data).to_bytes(4, "big") + data
    view = memoryview(frame)
    while view:
        written = _write(fd, view)
        view = view[written:]


def _recv(fd):
    header = b""
    while _len(header) < 4:
        chunk = _read(fd, 4 - _len(header))
        if not chunk:
            return None
        header += chunk
    size = _int.from_bytes(header, "big")
    body = b""
    while _len(body) < size:
        chunk = _read(fd, min(1 << 20, size - _len(body)))
        if not chunk:
            return None
        body += chunk
    return _decode(body.decode("utf-8"))


def _describe(exc):
    kind = _type(exc)
    try:
        text = _str(exc)
    except _BaseException:
        text = "<unprintable>"
    return {
        "type": kind.__module__ + "." + kind.__qualname__ if kind.__module__ != "builtins"
        else kind.__qualname__,
        "value_error": _isinstance(exc, _ValueError),
        "not_implemented": _isinstance(exc, _NotImplementedError),
        "exception": _isinstance(exc, _Exception),
        "message": text[:500],
    }


def _load(request):
    name = "submission"
    module = types.ModuleType(name)
    module.__file__ = request["filename"]
    sys.modules[name] = module  # dataclasses and friends look their module up here
    try:
        code = compile(request["source"], request["filename"], "exec", dont_inherit=True)
    except SyntaxError as exc:
        return {"ok": False, "stage": "syntax", "error": _describe(exc),
                "line": exc.lineno, "offset": exc.offset, "text": (exc.text or "").rstrip()}
    try:
        exec(code, module.__dict__)
    except _BaseException as exc:
        return {"ok": False, "stage": "import", "error": _describe(exc)}
    found = {}
    for func in request["functions"]:
        found[func] = callable(module.__dict__.get(func))
    return {"ok": True, "functions": found, "module": module}


def main():
    reply_fd = _int(sys.argv[1])
    request_fd = os.dup(0)
    # Learner code gets an empty stdin; the request channel is ours alone.
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    hello = _recv(request_fd)
    if hello is None:
        return
    _limits(hello.get("limits", {}))
    sys.setrecursionlimit(hello.get("recursion_limit", 1000))
    loaded = _load(hello)
    module = loaded.pop("module", None)
    _send(reply_fd, loaded)
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
            reply = {"id": ident, "ok": False, "error": _describe(exc)}
        else:
            reply = {"id": ident, "ok": True, "value": _encode_value(result)}
        reply["args_after"] = _encode_value([request["args"], request["kwargs"]])
        sys.stdout.flush()
        _send(reply_fd, reply)


main()
