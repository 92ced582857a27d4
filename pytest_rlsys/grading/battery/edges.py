"""Edge cases derived from the template's statements, not listed (issue 42).

Each statement of the template that compares, tolerates, refuses or pairs values is one
row of ``STATEMENTS``: the rule it grades and the *kind* of comparison it states.  The
values sent are derived from that kind alone, as a property-testing library's
edge-biased strategies derive them (Hypothesis favours the same points):

- a stated constant ``c`` of an exact comparison (``<``, ``>``, ``==``, "negative" as
  ``< 0``): ``c`` itself, one ulp either side (``math.nextafter``), and 0.5x, 1.5x, 2x;
  at ``c == 0``: ``-0.0`` (not negative: ``-0.0 < 0`` is False) and the smallest
  subnormal either side;
- a stated tolerance (``math.isclose(rel_tol=1e-9, abs_tol=1e-12)``): gaps of 0.5x,
  0.99x, 1.01x, 1.5x and 2x the tolerance, relative (at 1 and 1e12) and absolute (near
  0).  The edge itself (1x) is not sent: there a formula's own rounding decides, and two
  correct spellings of the same tolerance may round apart; 1 % either side is a
  million times wider than any rounding of them, and closes a band off by any factor
  over 1.02 (a tolerance of 1.1e-9 for 1e-9);
- an exact comparison of values the learner's code receives as they are (TODO 3's
  memory, limits, exposures): ints past 2**53, where ``float()`` loses the difference;
- a pairwise rule: both orders of the pair (the larger value first, then last);
- a validation: the forbidden value alone, and two forbidden values whose ratio or
  product is allowed (a negative rate with a negative multiplier);
- a container: empty and one-element inputs; "may be 0": the zero-traffic edge.

Every value is exact in binary where a sum or a quotient is formed, so an exact-arithmetic
reading (``fractions``) and a float reading agree on every graded bit.  The seed picks
names only; whether a misreading shows never depends on it.  The statements and their
derivations: ``statements.STATEMENTS`` (one module per TODO); which statement produced
which cases: docs/battery-rules.md, "Derived edges".
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.generators import STAGES

__all__ = [
    "BIG_INTS",
    "EDGE_WEIGHT",
    "TINY",
    "Statement",
    "band_gaps",
    "edge_id",
    "exact_edges",
    "magnitudes",
    "number_tag",
    "pick_names",
]

# A derived value case weighs less than a listed one: they are many, one per point (and
# apart from REFUSAL_WEIGHT, which the fairness tests read as "a refusal case").
EDGE_WEIGHT = 0.4
REL_TOL, ABS_TOL = 1e-9, 1e-12
TINY = math.nextafter(0.0, math.inf)  # the smallest subnormal, 5e-324
BIG_INTS = (2**53, 10**20)  # where float() first, and then far, loses an int's last unit


def exact_edges(c: float) -> list[tuple[str, float]]:
    """The points of an exact comparison with the stated constant ``c``."""
    if c == 0:
        return [("minus_zero", -0.0), ("zero", 0.0), ("ulp_above_0", TINY)]
    return [
        ("ulp_below", math.nextafter(c, -math.inf)),
        ("at", c),
        ("ulp_above", math.nextafter(c, math.inf)),
        ("half", c * 0.5),
        ("one_and_a_half", c * 1.5),
        ("double", c * 2),
    ]


def band_gaps() -> list[tuple[str, float, float, float]]:
    """(label, base, other, k): ``other`` lies k tolerances from ``base``, relative at 1
    and at 1e12, absolute near 0; k in 0.5 and 0.99 (inside), 1.01, 1.5 and 2 (outside)."""
    out = []
    for k in (0.5, 0.99, 1.01, 1.5, 2.0):
        tag = str(k).replace(".", "_")
        out.append((f"rel_{tag}x", 1.0, 1.0 * (1 + k * REL_TOL), k))
        out.append((f"rel_large_{tag}x", 1e12, 1e12 * (1 + k * REL_TOL), k))
        out.append((f"abs_{tag}x", 1e-13, 1e-13 + k * ABS_TOL, k))
    return out


def magnitudes() -> tuple[float, ...]:
    """Where an exact comparison with a non-zero constant is probed: a subnormal (its ulp
    is the smallest float, so no epsilon guard survives),
    plain numbers, and numbers whose ulp is more than 1."""
    return (1e-320, 1.0, 1e17)


@dataclass(frozen=True)
class Statement:
    """One statement of the template: its TODO, the rule it grades (a key of that TODO's
    ``RULES``), the kind of comparison it states, and the derivation of its cases."""

    section: str
    rule: str
    kind: str  # exact | tolerance | negative | positive | pairwise | container | names
    derive: Callable[[BatteryBuilder, random.Random, Statement], None]


def edge_id(*parts: object) -> str:
    return "derived_" + "_".join(str(p) for p in parts if p != "")


def number_tag(value: float) -> str:
    """A number as a case id may spell it: 1e-300 -> 1em300, 1e+17 -> 1e17."""
    return f"{value:g}".replace("-", "m").replace("+", "").replace(".", "_")


def pick_names(rng: random.Random, count: int) -> list[str]:
    return rng.sample(STAGES, count)
