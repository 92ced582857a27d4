"""The chapter's three tests, re-expressed as plain pytest tests: the baseline that the
isolated battery is compared with.  The module under test comes from RLSYS_BENCH_TARGET."""

from __future__ import annotations

import importlib.util
import math
import os

import pytest

_spec = importlib.util.spec_from_file_location("bench_target", os.environ["RLSYS_BENCH_TARGET"])
assert _spec is not None and _spec.loader is not None
target = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(target)


def test_capacity() -> None:
    result = target.pipeline_capacity(
        {"rollout": 240, "reward": 160, "learner": 80},
        70,
        {"rollout": 3, "reward": 2, "learner": 1},
    )
    assert result["effective_rates"] == {"rollout": 80.0, "reward": 80.0, "learner": 80.0}
    assert result["bottlenecks"] == ["learner", "reward", "rollout"]
    assert result["unstable_stages"] == [] and result["queue_stable"] is True
    assert target.pipeline_capacity(
        {"rollout": 120, "reward": 80}, 90, {"rollout": 1, "reward": 1}
    )["unstable_stages"] == ["reward"]
    with pytest.raises(ValueError):
        target.pipeline_capacity({"rollout": 120}, 20, {"reward": 1})
    with pytest.raises(ValueError):
        target.pipeline_capacity({"rollout": math.nan}, 20, {"rollout": 1})


def _edge(
    src: str, dst: str, size: int, items: int, wups: int, bw: int, overlap: float, fabric: str
) -> dict[str, object]:
    return {
        "source": src,
        "target": dst,
        "bytes_per_item": size,
        "items_per_work_unit": items,
        "work_units_per_second": wups,
        "bandwidth_bytes_per_s": bw,
        "overlap_fraction": overlap,
        "fabric_id": fabric,
    }


EDGES = [
    _edge("rollout", "reward", 100, 2, 5, 1000, 0.5, "pcie-0"),
    _edge("learner", "rollout", 1000, 1, 1, 2000, 0.0, "pcie-1"),
    _edge("reward", "learner", 500, 1, 1, 2000, 0.0, "pcie-1"),
    _edge("verifier", "learner", 1000, 1, 1, 2000, 0.5, "pcie-2"),
]
PLACEMENT = {"rollout": "A", "reward": "A", "learner": "B", "verifier": "C"}


def test_transfer() -> None:
    report = target.transfer_ledger(EDGES, PLACEMENT)
    assert report["cross_pool_bytes_per_s"] == 2500
    assert report["fabric_exposed_seconds_per_s"] == {"pcie-1": 0.75, "pcie-2": 0.25}
    assert report["critical_exposed_seconds_per_s"] == 0.75
    assert report["critical_fabrics"] == ["pcie-1"]
    with pytest.raises(ValueError):
        target.transfer_ledger([dict(EDGES[1], overlap_fraction=1.2)], PLACEMENT)
    with pytest.raises(ValueError):
        target.transfer_ledger([EDGES[1], dict(EDGES[2], bandwidth_bytes_per_s=4000)], PLACEMENT)
    tied = target.transfer_ledger([EDGES[1], dict(EDGES[3], overlap_fraction=0.0)], PLACEMENT)
    assert tied["critical_fabrics"] == ["pcie-1", "pcie-2"]


def test_gate() -> None:
    ones = {"rollout": 1, "reward": 1}
    stable = target.pipeline_capacity({"rollout": 120, "reward": 80}, 70, ones)
    unstable = target.pipeline_capacity({"rollout": 120, "reward": 80}, 90, ones)
    low = {"fabric_exposed_seconds_per_s": {"pcie-0": 0.05}, "critical_exposed_seconds_per_s": 0.05}
    high = {
        "fabric_exposed_seconds_per_s": {"pcie-0": 0.20},
        "critical_exposed_seconds_per_s": 0.20,
    }
    accepted = target.evaluate_topology(stable, {"A": 30}, {"A": 40}, low, True, True)
    assert accepted["decision"] == "accept" and accepted["reasons"] == []
    tuned = target.evaluate_topology(unstable, {"A": 30}, {"A": 40}, high, True, True)
    assert tuned["decision"] == "tune"
    assert tuned["reasons"] == ["unstable_queue", "exposed_transfer"]
    assert tuned["unstable_stages"] == ["reward"] and tuned["overloaded_fabrics"] == ["pcie-0"]
    rejected = target.evaluate_topology(stable, {"A": 50}, {"A": 40}, high, False, False)
    assert rejected["decision"] == "reject"
    assert rejected["reasons"] == ["memory_limit", "version_sync", "recovery_not_ready"]
    with pytest.raises(ValueError):
        target.evaluate_topology(stable, {"A": math.nan}, {"A": 40}, low, True, True)
