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
from dataclasses import dataclass
from typing import Any, Literal, cast

from pytest_rlsys.grading.verdicts import ValueDiff

__all__ = [
    "ABS_TOL",
    "EXPECTED_TYPE",
    "NONPLAIN_MARK",
    "REL_TOL",
    "Mismatch",
    "common_prefix",
    "find_mismatch",
    "find_mismatches",
    "numbers_match",
    "show",
    "show_around",
    "source",
    "type_name",
]

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
            if find_mismatch(want, have) is None:
                del left[index]
                break
        else:
            return False
    return True


def type_name(value: Any) -> str:
    if type(value) is dict and NONPLAIN_MARK in value:
        return str(value[NONPLAIN_MARK])
    return type(value).__name__


MismatchHow = Literal[
    "nonplain",
    "wrong_value",
    "not_a_number",
    "not_a_list",
    "not_a_dict",
    "not_a_str",
    "not_a_bool",
    "wrong_order",
    "keys",
]
# The plain type a mismatch's expected value has, in the words a failure names it by.
EXPECTED_TYPE: dict[type, str] = {
    list: "list",
    dict: "dict",
    str: "str",
    bool: "bool",
    int: "number",
    float: "number",
}


@dataclass(frozen=True)
class Mismatch:
    """Where and how ``got`` differs from ``expected`` (``diff`` is what a case keeps)."""

    path: str  # JSON path, built from the expected value's keys and indices only
    how: MismatchHow
    expected: Any = None
    got: Any = None
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()

    def diff(self) -> ValueDiff:
        """The record a case keeps: the values shown, never the values themselves."""
        want, got = show(self.expected), show(self.got)
        if type(self.expected) is str and type(self.got) is str:
            # reprlib cuts a long str in its middle, where the difference may lie.
            at = common_prefix(self.expected, self.got)
            want, got = show_around(self.expected, at), show_around(self.got, at)
        return ValueDiff(
            self.path,
            self.how,
            want=want,
            got=got,
            want_type=type_name(self.expected),
            got_type=type_name(self.got),
            missing=tuple(sorted(self.missing)),
            extra=tuple(sorted(self.extra)),
        )


def find_mismatch(expected: Any, got: Any, path: str = "$") -> Mismatch | None:
    """Where and how ``got`` differs from ``expected``; None when they match.  The path
    follows the expected value only: keys ``got`` invented never appear in it."""
    if type(got) is dict and NONPLAIN_MARK in got:
        return Mismatch(path, "nonplain", expected, got)
    kind = type(expected)
    if expected is not None and kind not in EXPECTED_TYPE:
        raise TypeError(f"expected value at {path} is not plain data: {kind.__name__}")
    if expected is not None and not (type(got) is kind or (_number(expected) and _number(got))):
        return Mismatch(path, cast(MismatchHow, "not_a_" + EXPECTED_TYPE[kind]), expected, got)
    if kind is list:
        return _list_mismatch(expected, got, path)
    if kind is dict:
        return _dict_mismatch(expected, got, path)
    same = numbers_match(expected, got) if _number(expected) else got == expected
    return None if same else Mismatch(path, "wrong_value", expected, got)


def _list_mismatch(expected: list[Any], got: list[Any], path: str) -> Mismatch | None:
    if len(got) != len(expected):
        return Mismatch(path, "wrong_value", expected, got)
    for index, (want, have) in enumerate(zip(expected, got, strict=True)):
        problem = find_mismatch(want, have, f"{path}[{index}]")
        if problem:
            return (
                Mismatch(path, "wrong_order", expected, got)
                if _same_items(expected, got)
                else problem
            )
    return None


def _dict_mismatch(expected: dict[str, Any], got: dict[str, Any], path: str) -> Mismatch | None:
    missing = tuple(k for k in expected if k not in got)
    extra = tuple(k for k in got if k not in expected)
    if missing or extra:
        return Mismatch(path, "keys", expected, got, missing, extra)
    for key, want in expected.items():
        problem = find_mismatch(want, got[key], f"{path}.{key}")
        if problem:
            return problem
    return None


def find_mismatches(expected: Any, got: Any, path: str = "$", limit: int = 3) -> list[Mismatch]:
    """The first ``limit`` places where ``got`` differs from ``expected``, in order, each as
    ``find_mismatch`` names it: a container whose own mismatch lies deeper is walked into,
    so the next differences are found past the first (iterative: the values are the
    submission's)."""
    found: list[Mismatch] = []
    pending: list[tuple[Any, Any, str]] = [(expected, got, path)]
    while pending and len(found) < limit:
        want, have, at = pending.pop()
        first = find_mismatch(want, have, at)
        if first is None:
            continue
        if first.path == at:  # this value itself differs (a type, a length, the order...)
            found.append(first)
        elif type(want) is dict:  # same keys, a value below differs
            pending += reversed([(want[k], have[k], f"{at}.{k}") for k in want])
        else:  # a list of the same length, in no other order
            pending += reversed(
                [(w, h, f"{at}[{i}]") for i, (w, h) in enumerate(zip(want, have, strict=True))]
            )
    return found


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


class _Unplain:
    """Stands for a value that was not plain in the child: shown as ``<type>``, never as
    the marker the child's encoding wraps it in."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _unmark(value: Any, depth: int = 0) -> Any:
    """``value`` with every non-plain marker replaced by an ``_Unplain`` (as deep as
    ``show`` looks)."""
    if type(value) is dict:
        if NONPLAIN_MARK in value:
            return _Unplain(str(value[NONPLAIN_MARK]))
        if depth > _SHOW.maxlevel:
            return value
        return {k: _unmark(v, depth + 1) for k, v in value.items()}
    if type(value) is list and depth <= _SHOW.maxlevel:
        # Past maxlist items reprlib shows "...": one more item keeps that, and the cost.
        return [_unmark(v, depth + 1) for v in value[: _SHOW.maxlist + 1]]
    return value


def show(value: Any) -> str:
    """A short, safe rendering of plain data for messages."""
    try:
        return _SHOW.repr(_unmark(value))
    except (ValueError, RecursionError):  # never raise while describing an answer
        return f"<{type_name(value)}>"


def float_source(value: float) -> str:
    """A float as Python source: ``repr`` writes the non-finite ones as the bare names
    ``nan`` and ``inf``, which a learner cannot paste back into Python."""
    if math.isfinite(value):
        return repr(value)
    if value != value:
        return "float('nan')"
    return "float('inf')" if value > 0 else "-float('inf')"


def source(value: Any) -> str:
    """The battery's own plain data (a call's arguments) as Python source that evaluates
    back to it, non-finite floats included (``float_source``).  Recursive: it is only
    given the battery's small literals, never a value from the submission."""
    if type(value) is float:
        return float_source(value)
    if type(value) is dict:
        return "{" + ", ".join(f"{source(k)}: {source(v)}" for k, v in value.items()) + "}"
    if type(value) is list:
        return "[" + ", ".join(source(v) for v in value) + "]"
    if type(value) is tuple:
        inner = ", ".join(source(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


def common_prefix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share from their start."""
    at = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        at += 1
    return at


def show_around(text: str, at: int, width: int = 80) -> str:
    """``text`` shown (``repr``) whole when it is short, else a window of ``width``
    characters that holds index ``at`` (where it differs from what was due), each cut end
    marked '…', so the difference is what stays in view."""
    if len(text) <= width:
        return repr(text)
    start = max(0, min(at - width // 4, len(text) - width))
    window = repr(text[start : start + width])
    return ("…" if start else "") + window + ("…" if start + width < len(text) else "")
