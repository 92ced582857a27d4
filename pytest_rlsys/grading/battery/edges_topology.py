"""TODO 3, ``evaluate_topology``: the cases derived from its statements (``edges``)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.edges import (
    BIG_INTS,
    EDGE_WEIGHT,
    TINY,
    Statement,
    edge_id,
    exact_edges,
    magnitudes,
    number_tag,
)
from pytest_rlsys.grading.battery.model import RESULT_KEYS, Call
from pytest_rlsys.messages import Msg

__all__ = [
    "derive_exposures",
    "derive_ledger_signs",
    "derive_limit_names",
    "derive_memory_limits",
    "derive_topology_containers",
]

P3 = "evaluate_topology"
K3 = RESULT_KEYS[P3]
STABLE = {
    "capacity": 8.0,
    "effective_rates": {"rollout": 8.0},
    "bottlenecks": ["rollout"],
    "queue_margins": {"rollout": 8.0},
    "unstable_stages": [],
    "queue_stable": True,
}


def _transfer(exposures: dict[str, Any]) -> dict[str, Any]:
    critical = max(exposures.values(), default=0.0)
    return {
        "cross_pool_bytes_per_s": 0.0,
        "fabric_exposed_seconds_per_s": exposures,
        "critical_exposed_seconds_per_s": critical,
        "critical_fabrics": sorted(k for k, v in exposures.items() if v == critical),
        "rows": [],
    }


def _topology(
    memory: dict[str, Any], limits: dict[str, Any], exposures: dict[str, Any], *threshold: Any
) -> Call:
    return Call(P3, (STABLE, memory, limits, _transfer(exposures), True, True, *threshold))


def _exact_points(c: float) -> list[tuple[str, Any, Any]]:
    """(label, value, constant): the exact edges of ``c``, and ints past 2**53."""
    points: list[tuple[str, Any, Any]] = [(label, v, c) for label, v in exact_edges(c)]
    if c == 1.0:
        for big in BIG_INTS:
            tag = "2_53" if big == 2**53 else "1e20"
            points += [
                (f"int_{tag}_plus_1_over", big + 1, big),
                (f"int_{tag}_at", big + 1, big + 1),
                (f"int_{tag}_under", big, big + 1),
            ]
    return points


def derive_memory_limits(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """no_limit / hard: memory at the exact edges of its limit ("more than" is >)."""
    for magnitude in (0.0, *magnitudes()):
        for label, used, limit in _exact_points(magnitude):
            if magnitude not in (0.0, 1.0) and label in ("half", "one_and_a_half", "double"):
                continue
            pool, other = rng.sample(["pool-a", "pool-b", "gpu-0", "gpu-1"], 2)
            over = used > limit
            b.diff(
                edge_id("memory", number_tag(magnitude), label),
                Msg(
                    f"memory {used!r} against a limit of {limit!r}: "
                    + ("over it" if over else "within it"),
                    f"显存 {used!r}、上限 {limit!r}：" + ("超限" if over else "未超限"),
                ),
                s.rule,
                _topology({pool: used, other: 1}, {other: 2, pool: limit}, {}),
                K3,
                EDGE_WEIGHT,
            )
    b.diff(
        edge_id("memory", "limit_minus_zero"),
        Msg("memory 0 against a limit of -0.0 is within it", "显存 0、上限 -0.0：未超限"),
        s.rule,
        _topology({"gpu-0": 0}, {"gpu-0": -0.0}, {}),
        K3,
        EDGE_WEIGHT,
    )


def derive_exposures(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """pressures: a fabric's exposure at the exact edges of the threshold (> is strict),
    the default 0.1 included (the threshold then not passed)."""
    for threshold in (0.1, 0.0, *magnitudes()):
        for label, exposed, limit in _exact_points(threshold):
            if threshold not in (0.0, 0.1, 1.0) and label in ("half", "one_and_a_half", "double"):
                continue
            if type(limit) is int and float(limit) != limit:
                continue  # the chapter converts the threshold with float(): not graded
            fabric, quiet = rng.sample(["fabric-a", "fabric-b", "nvlink", "pcie"], 2)
            default = threshold == 0.1 and type(limit) is float
            call = _topology({}, {}, {fabric: exposed, quiet: 0}, *(() if default else (limit,)))
            above = exposed > limit
            b.diff(
                edge_id("exposure", "default" if default else number_tag(threshold), label),
                Msg(
                    f"an exposure of {exposed!r} against a threshold of {limit!r}"
                    + (" (the default)" if default else "")
                    + (": above it" if above else ": not above it"),
                    f"暴露 {exposed!r}、阈值 {limit!r}"
                    + ("（默认值）" if default else "")
                    + ("：高于阈值" if above else "：不高于阈值"),
                ),
                s.rule,
                call,
                K3,
                EDGE_WEIGHT,
            )


_LEDGER_WORDS = {
    "memory": ("a pool's memory", "资源池显存"),
    "limit": ("a memory limit", "显存上限"),
    "exposure": ("a fabric exposure", "互连域暴露"),
    "threshold": ("a max_exposed_s_per_s", " max_exposed_s_per_s"),
}


def derive_ledger_signs(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """ledger: -0.0 accepted, one ulp below 0 refused, for each ledger number."""
    valid = _topology({"gpu-0": 1}, {"gpu-0": 2}, {"nvlink": 0.05}, 0.1)
    fields: dict[str, Callable[[float], Call]] = {
        "memory": lambda v: _topology({"gpu-0": v}, {"gpu-0": 2}, {"nvlink": 0.05}, 0.1),
        "limit": lambda v: _topology({"gpu-0": 1}, {"gpu-0": v}, {"nvlink": 0.05}, 0.1),
        "exposure": lambda v: _topology({"gpu-0": 1}, {"gpu-0": 2}, {"nvlink": v}, 0.1),
        "threshold": lambda v: _topology({"gpu-0": 1}, {"gpu-0": 2}, {"nvlink": 0.05}, v),
    }
    for name, make in fields.items():
        # Titles in the template's words (its "Raises ValueError" sentence), not the ids.
        en, zh = _LEDGER_WORDS[name]
        b.refusal(
            edge_id(name, "ulp_below_0"),
            Msg(f"refuses {en} one ulp below 0", f"拒绝比 0 低一个 ulp 的{zh}"),
            s.rule,
            valid,
            make(-TINY),
        )
        b.diff(
            edge_id(name, "minus_zero"),
            Msg(f"accepts {en} of -0.0 (not below 0)", f"接受 -0.0 的{zh}（不低于 0）"),
            s.rule,
            make(-0.0),
            K3,
            EDGE_WEIGHT,
        )


def derive_topology_containers(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """decision: no pool, no limit, no fabric; one pool without a limit."""
    for label, call in (
        ("nothing", _topology({}, {}, {})),
        ("limits_only", _topology({}, {"gpu-0": 1}, {})),
        ("one_pool_no_limit", _topology({"gpu-0": 0}, {}, {})),
    ):
        b.diff(
            edge_id("topology", label),
            Msg(f"decides on {label.replace('_', ' ')}", f"在 {label} 上作出决定"),
            s.rule,
            call,
            K3,
            EDGE_WEIGHT,
        )


def derive_limit_names(b: BatteryBuilder, rng: random.Random, s: Statement) -> None:
    """names: a limit for 'gpu' is no limit for 'gpu '."""
    pool = rng.choice(["gpu", "pool-a", "A"])
    b.diff(
        edge_id("limit_names_with_whitespace"),
        Msg(
            "a limit declared for a name differing in whitespace is no limit",
            "为只在空白上不同的名称声明的上限不算该资源池的上限",
        ),
        s.rule,
        _topology({f"{pool} ": 1, pool: 1}, {pool: 2}, {}),
        K3,
        EDGE_WEIGHT,
    )
