"""Input generators for the hidden cases.

Fairness: generated numbers are exact binary fractions, so every sum is exact whatever
the order, and values that are not tied differ by far more than any tolerance.  No case
probes where the chapter's reference and a stricter reading differ (exact vs tolerant
float ties closer than 1e-9, numeric strings, fabric ids with surrounding spaces); see
docs/battery-rules.md.  A rule's probe is a fixed input in its TODO's ``todoN_probes``:
the random cases here add coverage, they are never the only case that shows a misreading.

Stability: the seed picks names and magnitudes only.  The shape of every input (how many
stages, whether there is a tie, where the arrival rate lies, ints or floats, a same-pool
edge, a partial overlap...) is fixed by the caller, and every list the answer must sort is
declared out of order, so whether a defect shows does not depend on the seed.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Literal

from pytest_rlsys.messages import Msg

__all__ = [
    "BAD_VALUES",
    "STAGES",
    "Arrival",
    "cross",
    "declared_backwards",
    "edge",
    "gen_edges",
    "gen_pipeline",
    "num",
    "out_of_order",
    "shuffled",
]

STAGES = ["rollout", "reward", "reference", "learner", "verifier", "critic", "judge"]
LEVELS = [20, 30, 40, 60, 80, 120, 160]
Arrival = Literal["zero", "below", "at_capacity", "between", "above_all"]


def num(value: float, as_int: bool) -> int | float:
    """An integral value as int when ``as_int``, else as float: both must be accepted."""
    if as_int and float(value).is_integer():
        return int(value)
    return float(value)


def out_of_order(rng: random.Random, names: list[str]) -> list[str]:
    """``names`` shuffled and never in sorted order (when there are two or more)."""
    order = list(names)
    rng.shuffle(order)
    if len(order) > 1 and order == sorted(order):
        order.reverse()
    return order


def declared_backwards(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The same mapping declared in reverse name order: every part of it that an answer
    must list sorted (ties, unstable stages...) then arrives out of order."""
    return {key: mapping[key] for key in sorted(mapping, reverse=True)}


def shuffled(rng: random.Random, mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The same mapping, declared in an order that is not sorted."""
    return {key: mapping[key] for key in out_of_order(rng, list(mapping))}


def gen_pipeline(
    rng: random.Random,
    stages: int,
    *,
    tie: bool = False,
    arrival: Arrival = "below",
    ints: bool = True,
) -> tuple[dict[str, Any], int | float, dict[str, Any]]:
    """Rates, arrival rate and multipliers with exactly the requested shape.

    ``tie``: at least two stages share the minimum effective rate (else it is unique).
    ``arrival``: where the arrival rate lies relative to the effective rates; with
    "at_capacity" the bottlenecks' margin is exactly 0, with "between" some stages (the
    bottlenecks) are unstable and some are not.
    """
    names = rng.sample(STAGES, stages)
    if stages == 1:
        tie = False
        if arrival == "between":
            arrival = "above_all"
    levels = sorted(rng.sample(LEVELS, stages))
    if tie:
        levels[1] = levels[0]
    if arrival == "between" and levels[-1] == levels[0]:
        arrival = "above_all"  # two tied stages and nothing above them
    effective = dict(zip(names, levels, strict=True))
    # At least one fractional multiplier and one above 1, so rate / m and rate * m differ.
    multipliers = {n: rng.choice([1, 2, 4, 8, 0.5, 0.25]) for n in names}
    multipliers[names[0]] = 0.5
    if stages > 1:
        multipliers[names[1]] = rng.choice([2, 4])
    rates = {n: num(effective[n] * multipliers[n], ints) for n in names}
    low, high = min(levels), max(levels)
    above = min(v for v in levels if v > low) if arrival == "between" else low
    arrival_rate = {
        "zero": 0,
        "below": low / 2,
        "at_capacity": low,
        "between": (low + above) / 2,
        "above_all": high + 4,
    }[arrival]
    return (
        declared_backwards(rates),
        num(arrival_rate, ints),
        shuffled(rng, {n: num(m, ints) for n, m in multipliers.items()}),
    )


def edge(source: str, target: str, fabric: str, **fields: Any) -> dict[str, Any]:
    """A valid edge, its fields in the template's order, with plain default numbers;
    ``fields`` override them or add fields."""
    return {
        "source": source,
        "target": target,
        "bytes_per_item": 1000,
        "items_per_work_unit": 1,
        "work_units_per_second": 1,
        "bandwidth_bytes_per_s": 1000,
        "overlap_fraction": 0,
        "fabric_id": fabric,
        **fields,
    }


def gen_edges(
    rng: random.Random,
    count: int,
    *,
    fabrics: int = 2,
    tie: bool = False,
    same_pool: bool = True,
    ints: bool = True,
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """``count`` cross-pool edges over ``fabrics`` fabrics (every fabric used, each with
    one bandwidth), plus one same-pool edge when ``same_pool``.

    The first edge has a partial overlap, one item per work unit and half a work unit per
    second; the second (if any) has no overlap.  With ``tie`` every edge is on the first
    fabric and a second fabric, named to sort first but declared last, carries a copy of
    them: the two tie exactly.
    """
    components = rng.sample(STAGES, 6)
    placement = {c: "AB"[i % 2] for i, c in enumerate(components)}
    placement = {c: placement[c] for c in out_of_order(rng, components)}
    pool_a = [c for c in components if placement[c] == "A"]
    pool_b = [c for c in components if placement[c] == "B"]
    names = [f"fabric-{chr(ord('a') + i)}" for i in range(fabrics)]
    bandwidths = [1024, 2048, 4096]
    rng.shuffle(bandwidths)
    bandwidth = {name: bandwidths[i % 3] for i, name in enumerate(names)}
    edges: list[dict[str, Any]] = []
    for index in range(count):
        source, target = rng.choice(pool_a), rng.choice(pool_b)
        if rng.random() < 0.5:
            source, target = target, source
        if tie:
            fabric = names[0]
        else:
            fabric = names[index % fabrics] if index < fabrics else rng.choice(names)
        overlap = 0.25 if index == 0 else 0 if index == 1 else rng.choice([0, 0.25, 0.5, 0.75])
        edges.append(
            edge(
                source,
                target,
                fabric,
                bytes_per_item=rng.choice([64, 100, 250, 500, 1000, 4096]),
                items_per_work_unit=num(1 if index == 0 else rng.choice([2, 3, 4]), ints),
                work_units_per_second=num(0.5 if index == 0 else rng.choice([1, 2, 5]), ints),
                bandwidth_bytes_per_s=num(bandwidth[fabric], ints),
                overlap_fraction=num(overlap, ints),
            )
        )
    if tie:
        edges += [dict(e, fabric_id="aux-fabric") for e in edges]
    if same_pool:
        local = edge(
            pool_a[0],
            pool_a[1],
            edges[0]["fabric_id"],
            bytes_per_item=4096,
            items_per_work_unit=num(2, ints),
            work_units_per_second=num(4, ints),
            bandwidth_bytes_per_s=edges[0]["bandwidth_bytes_per_s"],
            overlap_fraction=num(0, ints),
        )
        edges.insert(rng.randrange(1, len(edges) + 1), local)
    return edges, placement


def cross(edge: Mapping[str, Any], placement: Mapping[str, str]) -> bool:
    return placement[edge["source"]] != placement[edge["target"]]


# Each bad value with its words, article included ("refuses a NaN bandwidth").
BAD_VALUES: dict[str, tuple[float, Msg]] = {
    "nan": (float("nan"), Msg("a NaN", " NaN ")),
    "inf": (float("inf"), Msg("an infinite", "无穷")),
    "zero": (0, Msg("a zero", "为零的")),
    "negative": (-1.5, Msg("a negative", "负")),
    "above_1": (1.5, Msg("an out-of-range (1.5)", "超出范围（1.5）的")),
}
