"""The template's statements, each with the derivation of its edge cases (``edges``)."""

from __future__ import annotations

import random

from pytest_rlsys.grading.battery.builder import BatteryBuilder
from pytest_rlsys.grading.battery.edges import Statement
from pytest_rlsys.grading.battery.edges_ledger import (
    derive_bandwidth_pairs,
    derive_critical_ties,
    derive_edge_signs,
    derive_ledger_containers,
    derive_overlap_edges,
    derive_pool_names,
    derive_same_pool_bandwidth,
)
from pytest_rlsys.grading.battery.edges_pipeline import (
    derive_arrival_sign,
    derive_margins,
    derive_rate_signs,
    derive_stage_names,
    derive_ties,
)
from pytest_rlsys.grading.battery.edges_topology import (
    derive_exposures,
    derive_ledger_signs,
    derive_limit_names,
    derive_memory_limits,
    derive_topology_containers,
)

__all__ = ["STATEMENTS", "add_edges"]

STATEMENTS: tuple[Statement, ...] = (
    Statement("todo1", "bottlenecks", "tolerance", derive_ties),
    Statement("todo1", "unstable", "exact", derive_margins),
    Statement("todo1", "arrival", "negative", derive_arrival_sign),
    Statement("todo1", "positive", "positive", derive_rate_signs),
    Statement("todo1", "names", "names", derive_stage_names),
    Statement("todo2", "bandwidths", "tolerance+pairwise", derive_bandwidth_pairs),
    Statement("todo2", "bandwidths", "pairwise", derive_same_pool_bandwidth),
    Statement("todo2", "overlap", "exact", derive_overlap_edges),
    Statement("todo2", "positive", "positive+negative", derive_edge_signs),
    Statement("todo2", "critical", "exact+pairwise", derive_critical_ties),
    Statement("todo2", "totals", "container", derive_ledger_containers),
    Statement("todo2", "names", "names", derive_pool_names),
    Statement("todo3", "no_limit", "exact", derive_memory_limits),
    Statement("todo3", "pressures", "exact", derive_exposures),
    Statement("todo3", "ledger", "negative", derive_ledger_signs),
    Statement("todo3", "decision", "container", derive_topology_containers),
    Statement("todo3", "names", "names", derive_limit_names),
)


def add_edges(b: BatteryBuilder, section: str, rng: random.Random) -> None:
    """Every case derived from ``section``'s statements, in the table's order."""
    for statement in STATEMENTS:
        if statement.section == section:
            statement.derive(b, rng, statement)
