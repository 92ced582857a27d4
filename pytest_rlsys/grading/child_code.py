"""How the child's code reaches it: ``LOADER`` (``python -c``) runs child.py as the grader
compiled it (``child_code``), else compiles the source it is also given."""

from __future__ import annotations

import base64
import functools
import marshal
from importlib.machinery import SourceFileLoader
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType

CHILD_SOURCE = (Path(__file__).parent / "child.py").read_text(encoding="utf-8")

# The child runs ``LOADER``: it executes the child's code as this process compiled it
# (marshal data, argv[1]) when its interpreter reads this bytecode version, else compiles
# the source (argv[2]) itself; then the child sees only its own arguments.  Compiling
# child.py was a third of a fresh child's CPU (benchmarks/bench_profile.py); it is done
# once per grading process instead.
LOADER = (
    "import sys as _rlsys_sys, marshal as _rlsys_marshal, binascii as _rlsys_b\n"
    "_rlsys_ext = _rlsys_sys.modules.get('_frozen_importlib_external')\n"
    "_rlsys_code = (\n"
    "    _rlsys_marshal.loads(_rlsys_b.a2b_base64(_rlsys_sys.argv[1][32:]))\n"
    "    if _rlsys_sys.argv[1][:32] == getattr(_rlsys_ext, 'MAGIC_NUMBER', b'').hex().ljust(32)\n"
    "    else compile(_rlsys_sys.argv[2], '<string>', 'exec')\n"
    ")\n"
    "del _rlsys_sys.argv[1:3], _rlsys_ext, _rlsys_sys, _rlsys_marshal, _rlsys_b\n"
    "exec(_rlsys_code)\n"
)


@functools.cache
def child_code() -> str:
    """argv[1] of ``LOADER``: this interpreter's magic number (hex, 32 columns) and
    child.py compiled by it (marshal, base64): read from the package's own bytecode
    cache where the import system finds it current (compiling took 5-10 ms of every
    grade), each code object named ``<string>`` as compiled from argv[2], so that
    nothing in the child names the grader's folders."""
    path = str(Path(__file__).parent / "child.py")
    loaded = SourceFileLoader("_rlsys_child", path).get_code("_rlsys_child")
    code = marshal.dumps(as_string(loaded) if loaded else compile(CHILD_SOURCE, "<string>", "exec"))
    return MAGIC_NUMBER.hex().ljust(32) + base64.b64encode(code).decode("ascii")


def as_string(code: CodeType) -> CodeType:
    """``code`` and every code object in it, their file named ``<string>``."""
    inner = tuple(as_string(c) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_filename="<string>", co_consts=inner)
