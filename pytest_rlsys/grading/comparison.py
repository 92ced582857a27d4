"""Type-strict comparison and display of plain JSON data.

Only exact ``dict``/``list``/``str``/``int``/``float``/``bool``/``None`` count (``bool`` is
never a number here); numbers compare with a documented tolerance.  Values that were not
plain in the child arrive as ``{"$rlsys_nonplain": "<type>"}`` and never match.

Every function here is total over plain data: an int too large for a float (``2**1024``,
``-2**5000``) is just a number that is (almost always) wrong, never an OverflowError, and
one too long for ``repr`` is shown by its size.
"""

from __future__ import annotations

import math
import reprlib
from typing import Any

__all__ = ["ABS_TOL", "NONPLAIN_MARK", "REL_TOL", "mismatch", "numbers_match", "show", "type_name"]

REL_TOL = 1e-9
ABS_TOL = 1e-12
NONPLAIN_MARK = "$rlsys_nonplain"


def _number(value: Any) -> bool:
    return type(value) is int or type(value) is float


def numbers_match(expected: float, got: float) -> bool:
    """``math.isclose`` with the module's tolerances, for any pair of ints and floats."""
    try:
        return math.isclose(expected, got, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    except OverflowError:
        pass
    # An int beyond the float range: compare exactly, with the same tolerance rule.
    for value in (expected, got):
        if type(value) is float and not math.isfinite(value):
            return False  # inf and nan are close to no finite number, however large
    from fractions import Fraction  # rare: only for ints beyond the float range

    a, b = Fraction(expected), Fraction(got)
    return abs(a - b) <= max(Fraction(REL_TOL) * max(abs(a), abs(b)), Fraction(ABS_TOL))


def _same_items(expected: list[Any], got: list[Any]) -> bool:
    """``got`` holds the items of ``expected`` (with their counts) in another order."""
    if len(expected) > 200:  # quadratic: only for the short lists a result holds
        return False
    left = list(got)
    for want in expected:
        for index, have in enumerate(left):
            if mismatch(want, have) is None:
                del left[index]
                break
        else:
            return False
    return True


def type_name(value: Any) -> str:
    if type(value) is dict and NONPLAIN_MARK in value:
        return str(value[NONPLAIN_MARK])
    return type(value).__name__


def mismatch(expected: Any, got: Any, path: str = "$") -> str | None:
    """Return where and how ``got`` differs from ``expected``; None when they match.

    The message starts with the JSON path and a colon, so a caller that must not reveal
    values (hidden cases) can keep only the path.
    """
    if type(got) is dict and NONPLAIN_MARK in got:
        return f"{path}: got a {got[NONPLAIN_MARK]} object, expected plain {type_name(expected)}"
    if type(expected) is bool or expected is None:
        if got is not expected:
            return f"{path}: expected {show(expected)}, got {show(got)}"
        return None
    if _number(expected):
        if not _number(got):
            return f"{path}: expected a number, got {type_name(got)} {show(got)}"
        if not numbers_match(expected, got):
            return f"{path}: expected {show(expected)}, got {show(got)}"
        return None
    if type(expected) is str:
        if type(got) is not str or got != expected:
            return f"{path}: expected {show(expected)}, got {show(got)}"
        return None
    if type(expected) is list:
        if type(got) is not list:
            return f"{path}: expected a list, got {type_name(got)} {show(got)}"
        if len(got) != len(expected):
            return f"{path}: expected {show(expected)}, got {show(got)}"
        for index, (want, have) in enumerate(zip(expected, got, strict=True)):
            problem = mismatch(want, have, f"{path}[{index}]")
            if problem:
                if _same_items(expected, got):
                    return f"{path}: right items, wrong order"
                return problem
        return None
    if type(expected) is dict:
        if type(got) is not dict:
            return f"{path}: expected a dict, got {type_name(got)} {show(got)}"
        missing = [k for k in expected if k not in got]
        extra = [k for k in got if k not in expected]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing keys {sorted(missing)}")
            if extra:
                parts.append(f"unexpected keys {sorted(extra)}")
            return f"{path}: " + ", ".join(parts)
        for key, want in expected.items():
            problem = mismatch(want, got[key], f"{path}.{key}")
            if problem:
                return problem
        return None
    raise TypeError(f"expected value at {path} is not plain data: {type(expected).__name__}")


class _Show(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 256:  # repr of a huge int is slow, or refused past 4300 digits
            return f"<int of {x.bit_length()} bits>"
        return super().repr_int(x, level)


_SHOW = _Show()
_SHOW.maxdict = 12
_SHOW.maxlist = 12
_SHOW.maxstring = 80
_SHOW.maxother = 80
_SHOW.maxlevel = 4


def show(value: Any) -> str:
    """A short, safe rendering of plain data for messages."""
    if type(value) is dict and NONPLAIN_MARK in value:
        return f"<{value[NONPLAIN_MARK]}>"
    try:
        return _SHOW.repr(value)
    except (ValueError, RecursionError):  # never raise while describing an answer
        return f"<{type_name(value)}>"
