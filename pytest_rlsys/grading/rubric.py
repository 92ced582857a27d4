"""Points: the default rubric, rubric files, and splitting points over cases.

A rubric file (TOML or JSON) overrides points without code changes::

    [todo1]            # any of todo1, todo2, todo3
    visible = 10       # points shared by the section's visible cases
    hidden = 20        # points shared by its hidden cases
    [weights]          # optional: relative weight of single cases (default 1, errors 0.5)
    "todo2.hidden.rows" = 2
    [gpu_result]
    per_check = 5      # points per check of a graded result file

Points are split in hundredths so that every section adds up exactly to its maximum.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_rlsys.safe_read import read_text, shorten

if TYPE_CHECKING:
    from pytest_rlsys.grading.battery import Case

DEFAULT_POINTS: dict[str, dict[str, float]] = {
    "todo1": {"visible": 10.0, "hidden": 20.0},
    "todo2": {"visible": 12.0, "hidden": 23.0},
    "todo3": {"visible": 12.0, "hidden": 23.0},
}
DEFAULT_PER_CHECK = 5.0


class RubricError(ValueError):
    """A rubric file that cannot be used; the message names the file and the key, in one
    bounded line (a value it quotes may be megabytes long)."""

    def __init__(self, message: str) -> None:
        super().__init__(shorten(message, 600))


MAX_RUBRIC_BYTES = 256 * 1024  # a rubric is a few lines; a per-case weight table fits


@dataclass(frozen=True)
class Rubric:
    points: dict[str, dict[str, float]] = field(
        default_factory=lambda: {k: dict(v) for k, v in DEFAULT_POINTS.items()}
    )
    weights: dict[str, float] = field(default_factory=dict)
    per_check: float = DEFAULT_PER_CHECK
    source: str = "default"
    sha256: str | None = None  # of the file's text; None: the package's default rubric


# Points and weights past this were summed to infinity, then cut into hundredths: the
# grader died with OverflowError (1e308), or showed 17-digit points (1e17).
MAX_RUBRIC_NUMBER = 1_000_000


def _number(value: Any, where: str) -> float:
    if type(value) not in (int, float) or not 0 <= value <= MAX_RUBRIC_NUMBER:
        raise RubricError(
            f"{where} must be a number from 0 to {MAX_RUBRIC_NUMBER:,}, got {value!r}"
        )
    return float(value)


def load_rubric(path: Path) -> Rubric:
    """Read a rubric file; every mistake is a RubricError naming where it is."""
    try:  # the safe-read rule: a FIFO, a device or a link is refused before it is read
        text = read_text(path, MAX_RUBRIC_BYTES)
    except ValueError as exc:
        raise RubricError(f"cannot read rubric file {exc}") from None
    import tomllib  # only when there is a rubric file

    try:
        data: Any = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (ValueError, RecursionError, tomllib.TOMLDecodeError) as exc:
        raise RubricError(
            f"rubric file {path} is not valid {path.suffix[1:] or 'TOML'}: {exc}"
        ) from None
    if type(data) is not dict:
        raise RubricError(f"rubric file {path} must hold a table/object at the top")
    points = {k: dict(v) for k, v in DEFAULT_POINTS.items()}
    weights: dict[str, float] = {}
    per_check = DEFAULT_PER_CHECK
    for key, value in data.items():
        where = f"{path}: [{key}]"
        if key in points:
            if type(value) is not dict:
                raise RubricError(f"{where} must be a table with 'visible' and/or 'hidden'")
            for part, amount in value.items():
                if part not in ("visible", "hidden"):
                    raise RubricError(
                        f"{where} has unknown key {part!r} (expected 'visible' or 'hidden')"
                    )
                points[key][part] = _number(amount, f"{where} {part}")
        elif key == "weights":
            if type(value) is not dict:
                raise RubricError(f"{where} must be a table of case id = weight")
            weights = {str(k): _number(v, f"{where} {k!r}") for k, v in value.items()}
        elif key == "gpu_result":
            if type(value) is not dict or set(value) - {"per_check"}:
                raise RubricError(f"{where} may only set 'per_check'")
            per_check = _number(value.get("per_check", DEFAULT_PER_CHECK), f"{where} per_check")
        else:
            raise RubricError(
                f"{path}: unknown section [{key}] (expected todo1, todo2, todo3, "
                "weights or gpu_result)"
            )
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Rubric(points, weights, per_check, str(path), digest)


def split_cents(total_cents: int, weights: Sequence[float]) -> list[int]:
    """Split ``total_cents`` over ``weights`` (largest remainder), summing exactly."""
    if not weights:
        return []
    scale = sum(weights)
    if scale <= 0:
        return [0] * len(weights)
    raw = [total_cents * w / scale for w in weights]
    cents = [math.floor(r) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: (cents[i] - raw[i], i))
    for i in order[: total_cents - sum(cents)]:
        cents[i] += 1
    return cents


def check_weights(rubric: Rubric, cases: Sequence[Case]) -> None:
    """Refuse a ``[weights]`` entry that names no case of the battery (a typo would
    otherwise weigh nothing and go unnoticed)."""
    unknown = set(rubric.weights) - {c.id for c in cases}
    if unknown:
        raise RubricError(
            f"{rubric.source}: [weights] names unknown cases: {', '.join(sorted(unknown))}; "
            'the case ids are the "id" of each test in a score report '
            "(`rlsys grade FILE --report score.json`)"
        )


def assign_points(cases: Sequence[Case], rubric: Rubric) -> dict[str, int]:
    """Case id -> max points in hundredths; fixed before anything runs."""
    check_weights(rubric, cases)
    out: dict[str, int] = {}
    for section, parts in rubric.points.items():
        for visibility, amount in parts.items():
            group = [c for c in cases if c.section == section and c.visibility == visibility]
            weights = [rubric.weights.get(c.id, c.weight) for c in group]
            for case, cents in zip(group, split_cents(round(amount * 100), weights), strict=True):
                out[case.id] = cents
    return out
