"""A dynamic birthmark: how a submission behaves where the template leaves it free
(instructor-only; docs/similarity.md, "The behaviour sign").

Tamada et al. ("Design and evaluation of dynamic software birthmarks based on API calls",
2004) and Schuler, Dallmeier and Lindig ("A dynamic birthmark for Java", ASE 2007) compare
programs by what they do, not how they are written: a copy restructured past every textual
rule still computes what its original computed.  Here the "what" is read on inputs whose
outcome the template does not specify (numbers as strings or bools, fabric ids with spaces
or of another type, reports missing keys, several bad fields at once): the battery grades
nothing there, so independent correct solutions are free to differ, and they do.

This module is pure: the probes (plain data), the reduction of one call's outcome to a token,
the shipped references' tokens and the score.  Running the probes in the grader's fenced
child is ``probes.py``'s (``Grader.answer``).  Nothing here changes a score.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_rlsys.grading.outcomes import CallOutcome

# Flagged at this weighted share of the probes agreeing with a reference's tokens, or more:
# set on tests/corpora/similarity/ midway between independent work's highest (0.865, three
# files whose authors knew the references) and the lowest disguised copy (0.896).
THRESHOLD = 0.88
# The child's stand-in for a value that is not plain data (child.py's ``_MARK``).
NONPLAIN_MARK = "$rlsys_nonplain"
# A probe not made (the budget spent, its function timed out twice, no such function).
NOT_RUN = "not_run"
REFERENCES_FILE = Path(__file__).with_name("birthmark_references.txt")
# How many of the calibration set's independent correct solutions had each token: a
# classmate's tokens are weighed by it as a reference's are (``alike``).
INDEPENDENT_FILE = Path(__file__).with_name("birthmark_independent.txt")


@dataclass(frozen=True)
class Probe:
    """One call: ``func`` of the exercise with these arguments (plain JSON data)."""

    name: str
    func: str
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)


# -- the probes -----------------------------------------------------------------------------
# Every input below is one the template's docstrings say nothing about (docs/similarity.md
# lists the rule each relies on); the battery never grades them.

_RATES = {"a": 4, "b": 2}
_ITEMS = {"a": 2, "b": 1}


def _pc(name: str, rates: Any = None, arrival: Any = 1, items: Any = None) -> Probe:
    rates = dict(_RATES) if rates is None else rates
    items = dict(_ITEMS) if items is None else items
    return Probe(name, "pipeline_capacity", (rates, arrival, items))


_PLACEMENT = {"s": "p0", "t": "p1", "u": "p0", "v": "p1"}


def _edge(**fields: Any) -> dict[str, Any]:
    """A valid cross-pool edge s -> t with ``fields`` changed (None removes a field)."""
    edge: dict[str, Any] = {
        "source": "s",
        "target": "t",
        "bytes_per_item": 100.0,
        "items_per_work_unit": 2.0,
        "work_units_per_second": 3.0,
        "bandwidth_bytes_per_s": 1000.0,
        "overlap_fraction": 0.5,
        "fabric_id": "f1",
    }
    edge.update(fields)
    return {key: value for key, value in edge.items() if value is not None}


def _same(**fields: Any) -> dict[str, Any]:
    """A valid same-pool edge s -> u with ``fields`` changed (None removes a field)."""
    return _edge(target="u", **fields)


def _tl(name: str, *edges: dict[str, Any]) -> Probe:
    return Probe(name, "transfer_ledger", (list(edges), dict(_PLACEMENT)))


_CAP = {"unstable_stages": [], "queue_stable": True}
_TRANSFER = {"fabric_exposed_seconds_per_s": {"f1": 0.05}, "critical_exposed_seconds_per_s": 0.05}


def _et(
    name: str,
    cap: Any = None,
    memory: Any = None,
    limits: Any = None,
    transfer: Any = None,
    version: Any = True,
    recovery: Any = True,
    **kwargs: Any,
) -> Probe:
    cap = dict(_CAP) if cap is None else cap
    memory = {"p0": 10} if memory is None else memory
    limits = {"p0": 20} if limits is None else limits
    transfer = dict(_TRANSFER) if transfer is None else transfer
    args = (cap, memory, limits, transfer, version, recovery)
    return Probe(name, "evaluate_topology", args, kwargs)


_NAN = float("nan")
CANDIDATES: tuple[Probe, ...] = (
    # TODO 1: numbers of other types, and several bad fields at once (which is met first).
    _pc("pc_rate_str", rates={"a": "4", "b": 2}),
    _pc("pc_rate_word", rates={"a": "four", "b": 2}),
    _pc("pc_rate_str_nan", rates={"a": "nan", "b": 2}),
    _pc("pc_rate_bool", rates={"a": True, "b": 2}, items={"a": 1, "b": 1}),
    _pc("pc_rate_none", rates={"a": None, "b": 2}),
    _pc("pc_rate_list", rates={"a": [4], "b": 2}),
    _pc("pc_arrival_str", arrival="1"),
    _pc("pc_arrival_word", arrival="one"),
    _pc("pc_arrival_none", arrival=None),
    _pc("pc_items_str", items={"a": "2", "b": 1}),
    _pc("pc_rate_none_arrival_negative", rates={"a": None, "b": 2}, arrival=-1),
    _pc("pc_rate_word_arrival_negative", rates={"a": "four", "b": 2}, arrival=-1),
    _pc("pc_items_none_arrival_nan", items={"a": None, "b": 1}, arrival=_NAN),
    _pc("pc_items_none_extra_stage", items={"a": 2, "b": 1, "c": None}),
    _pc("pc_rate_str_mismatch", rates={"a": "4"}, items={"b": 1}),
    _pc("pc_empty_arrival_none", rates={}, items={}, arrival=None),
    _pc("pc_empty_arrival_word", rates={}, items={}, arrival="one"),
    _pc("pc_rate_none_mismatch", rates={"a": None}, items={"b": 1}),
    # TODO 2: int or float results, same-pool edges missing fields, fabric ids' spelling.
    _tl(
        "tl_all_ints",
        _edge(
            bytes_per_item=100,
            items_per_work_unit=2,
            work_units_per_second=3,
            bandwidth_bytes_per_s=1000,
            overlap_fraction=None,
        ),
    ),
    _tl(
        "tl_same_pool_ints",
        _same(
            bytes_per_item=100,
            items_per_work_unit=2,
            work_units_per_second=3,
            bandwidth_bytes_per_s=1000,
            overlap_fraction=0,
        ),
    ),
    _tl("tl_no_edges"),
    _tl("tl_same_pool_only_endpoints", {"source": "s", "target": "u"}),
    _tl("tl_same_pool_no_bandwidth", _same(bandwidth_bytes_per_s=None)),
    _tl("tl_same_pool_no_bytes", _same(bytes_per_item=None)),
    _tl("tl_same_pool_bandwidth_none", {**_same(), "bandwidth_bytes_per_s": None}),
    _tl("tl_same_pool_bandwidth_word", _same(bandwidth_bytes_per_s="fast")),
    _tl("tl_fabric_spaces", _edge(fabric_id=" f1 ")),
    _tl("tl_fabric_two_spellings", _edge(fabric_id=" f1"), _edge(source="v", target="u")),
    _tl(
        "tl_fabric_spellings_bandwidth_differs",
        _edge(fabric_id=" f1"),
        _edge(bandwidth_bytes_per_s=2000.0),
    ),
    _tl("tl_fabric_int", _edge(fabric_id=5)),
    _tl("tl_fabric_int_and_str", _edge(fabric_id=5), _edge(fabric_id="5", source="v", target="u")),
    _tl("tl_fabric_float", _edge(fabric_id=1.5)),
    _tl("tl_fabric_list", _edge(fabric_id=["f1"])),
    _tl("tl_fabric_bool", _edge(fabric_id=True)),
    _tl("tl_bytes_str", _edge(bytes_per_item="100")),
    _tl("tl_bytes_word", _edge(bytes_per_item="many")),
    _tl("tl_bandwidth_str", _edge(bandwidth_bytes_per_s="1000")),
    _tl("tl_overlap_str", _edge(overlap_fraction="0.5")),
    _tl("tl_overlap_none", {**_edge(), "overlap_fraction": None}),
    _tl("tl_rate_bool", _edge(work_units_per_second=True)),
    _tl("tl_edge_has_result_keys", _edge(traffic_bytes_per_s=5, cross_pool="yes")),
    _tl("tl_no_bandwidth_blank_fabric", _edge(bandwidth_bytes_per_s=None, fabric_id="  ")),
    _tl("tl_no_bytes_overlap_two", _edge(bytes_per_item=None, overlap_fraction=2.0)),
    _tl("tl_no_rate_unknown_target", _edge(work_units_per_second=None, target="zz")),
    _tl("tl_word_then_unknown_endpoint", _edge(bytes_per_item="many"), _edge(target="zz")),
    _tl("tl_none_then_unknown_endpoint", {**_edge(), "bytes_per_item": None}, _edge(target="zz")),
    _tl("tl_blank_fabric_then_word", _edge(fabric_id=" "), _edge(bytes_per_item="many")),
    _tl("tl_no_fabric_key_then_none", _edge(fabric_id=None), {**_edge(), "overlap_fraction": None}),
    # TODO 3: reports missing keys or contradicting themselves, truthy flags, other types.
    _et("et_cap_unstable_key_missing_unstable", cap={"queue_stable": False}),
    _et("et_cap_unstable_key_missing_stable", cap={"queue_stable": True}),
    _et("et_cap_says_unstable_lists_none", cap={"unstable_stages": [], "queue_stable": False}),
    _et("et_cap_says_stable_lists_one", cap={"unstable_stages": ["x"], "queue_stable": True}),
    _et("et_cap_only_unstable_list", cap={"unstable_stages": ["x"]}),
    _et("et_cap_empty", cap={}),
    _et(
        "et_critical_over_no_fabric",
        transfer={"fabric_exposed_seconds_per_s": {}, "critical_exposed_seconds_per_s": 0.5},
    ),
    _et("et_transfer_critical_only", transfer={"critical_exposed_seconds_per_s": 0.05}),
    _et(
        "et_transfer_fabric_over_no_critical", transfer={"fabric_exposed_seconds_per_s": {"f": 0.5}}
    ),
    _et(
        "et_transfer_fabric_under_no_critical",
        transfer={"fabric_exposed_seconds_per_s": {"f": 0.05}},
    ),
    _et("et_transfer_empty", transfer={}),
    _et("et_critical_nan", transfer={**_TRANSFER, "critical_exposed_seconds_per_s": _NAN}),
    _et("et_critical_negative", transfer={**_TRANSFER, "critical_exposed_seconds_per_s": -1.0}),
    _et("et_critical_str", transfer={**_TRANSFER, "critical_exposed_seconds_per_s": "0.5"}),
    _et("et_version_zero", version=0),
    _et("et_version_none", version=None),
    _et("et_recovery_empty_str", recovery=""),
    _et("et_memory_str", memory={"p0": "10"}),
    _et("et_memory_and_limit_str", memory={"p0": "9"}, limits={"p0": "10"}),
    _et("et_budget_str", max_exposed_s_per_s="0.1"),
    _et("et_exposure_str", transfer={**_TRANSFER, "fabric_exposed_seconds_per_s": {"f1": "0.5"}}),
    _et("et_limit_none_unused_pool", limits={"p0": 20, "p9": None}),
    _et("et_memory_nan_cap_empty", cap={}, memory={"p0": _NAN}),
    _et(
        "et_exposure_nan_transfer_no_critical",
        transfer={"fabric_exposed_seconds_per_s": {"f": _NAN}},
    ),
    _et("et_budget_nan_cap_empty", cap={}, max_exposed_s_per_s=_NAN),
)


def probes() -> tuple[Probe, ...]:
    """The candidates that tell solutions apart: those the shipped references' file weighs
    above 0 for a reference (``birthmark_references.txt``; a candidate on which every
    independent correct solution of the calibration set agreed with both references says
    nothing and is left out)."""
    kept = {name for ref in reference_tokens() for name, (_, weight) in ref.items() if weight > 0}
    return tuple(probe for probe in CANDIDATES if probe.name in kept)


# -- outcomes as tokens ---------------------------------------------------------------------


def _canonical(value: Any) -> str:
    """A text that two plain values share exactly when they are the same data: types kept
    (1, 1.0, True and "1" differ), floats to 9 significant digits (a sum in another order
    is the same), dict entries by key, the child's stand-in for a non-plain value as one
    word (its text is the submission's choice)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return f"i{value}"
    if isinstance(value, float):
        return "f" + ("nan" if math.isnan(value) else format(value, ".9g"))
    if isinstance(value, str):
        return "s" + repr(value)
    if isinstance(value, list):
        return "[" + ",".join(_canonical(item) for item in value) + "]"
    if isinstance(value, dict):
        if NONPLAIN_MARK in value:
            return "<nonplain>"
        items = sorted((str(key), _canonical(item)) for key, item in value.items())
        return "{" + ",".join(f"{key!r}:{item}" for key, item in items) + "}"
    return "<nonplain>"  # never from the parent's decoder; kept total


def token(outcome: CallOutcome) -> str:
    """One call's outcome as a short word: the class family of an exception (never its
    message), a digest of a returned value, or what stopped the call.  A returned value's
    token always starts with ``value:``, so no value can spell another kind's token."""
    if outcome.kind == "returned":
        digest = hashlib.blake2b(_canonical(outcome.value).encode(), digest_size=8).hexdigest()
        return "value:" + digest
    if outcome.kind == "raised" and outcome.not_implemented:
        return "raise:NotImplementedError"  # a TODO not written agrees with nothing
    if outcome.kind == "raised":
        return "raise:ValueError" if outcome.value_error else "raise:other"
    if outcome.kind == "timeout":
        return "timeout"
    if outcome.kind in ("crashed", "protocol"):
        return "crashed"
    return NOT_RUN  # missing function, load failed, the grader's own limits


# -- references and the score ---------------------------------------------------------------

# A reference's view of one probe: its token, and the probe's weight, the share of the
# calibration set's independent correct solutions whose token differs from it (a trait
# every solution shares proves nothing; one no independent solution has proves most).
Reference = Mapping[str, tuple[str, float]]


@functools.lru_cache(maxsize=1)
def reference_tokens() -> tuple[Reference, ...]:
    """solutions/'s and the chapter's printed reference's tokens and weights, as shipped in
    ``birthmark_references.txt`` (never their code): "NAME TOKEN WEIGHT TOKEN WEIGHT" a line,
    solutions/ first.  () when the file is missing or unreadable."""
    ours: dict[str, tuple[str, float]] = {}
    chapter: dict[str, tuple[str, float]] = {}
    try:
        text = REFERENCES_FILE.read_text("utf-8")
        for line in text.splitlines():
            words = line.split()
            if len(words) == 5 and not line.startswith("#"):
                ours[words[0]] = (words[1], float(words[2]))
                chapter[words[0]] = (words[3], float(words[4]))
    except (OSError, ValueError):
        return ()
    return ours, chapter


# How many independent correct solutions had each token of each probe, and of how many.
Tally = tuple[int, Mapping[str, Mapping[str, int]]]


def weighed(tokens: Mapping[str, str], counts: Tally) -> Reference:
    """``tokens`` as a reference: each probe's weight is the share of the counted
    independent solutions whose token differs from this one (1 for a token none had)."""
    total, seen = counts
    total = max(1, total)
    return {
        name: (mine, 1 - seen.get(name, {}).get(mine, 0) / total) for name, mine in tokens.items()
    }


@functools.lru_cache(maxsize=1)
def independent_tally() -> Tally:
    """The shipped tally (``INDEPENDENT_FILE``); (0, {}) when missing or unreadable."""
    seen: dict[str, dict[str, int]] = {}
    try:
        text = INDEPENDENT_FILE.read_text("utf-8")
        total = int(text.split("\n", 1)[0].split(";")[0].split()[-1])
        for line in text.splitlines()[1:]:
            name, count, mine = line.split()
            seen.setdefault(name, {})[mine] = int(count)
    except (OSError, ValueError, IndexError):
        return 0, {}
    return total, seen


def agreement(mine: Mapping[str, str], reference: Reference) -> float | None:
    """The weighted share of the probes on which ``mine`` has the reference's token (None
    when no weighed probe was measured: nothing to judge)."""
    total = agreed = 0.0
    for name, (theirs, weight) in reference.items():
        if name in mine and weight > 0:
            total += weight
            agreed += weight if mine[name] == theirs else 0.0
    return agreed / total if total > 0 else None


def behaviour(
    mine: Mapping[str, str], references: Sequence[Reference] | None = None
) -> float | None:
    """The higher agreement with either reference (None when nothing was measured)."""
    found = [
        share
        for share in (
            agreement(mine, ref)
            for ref in (reference_tokens() if references is None else references)
        )
        if share is not None
    ]
    return max(found) if found else None


def alike(mine: Mapping[str, str], theirs: Mapping[str, str]) -> float | None:
    """How far two submissions behave alike where the template is silent: each one's
    agreement with the other taken as a reference, weighed by the shipped tally (a token
    every independent solution had weighs 0), the higher of the two; None when either was
    not measured or nothing is weighed.  A disguised copy does what its original does
    (1.0 unless its copier changed what it computes); two files that differ on the probes
    are not one program twice."""
    if not mine or not theirs or not independent_tally()[0]:
        return None
    shares = [
        share
        for share in (
            agreement(mine, weighed(theirs, independent_tally())),
            agreement(theirs, weighed(mine, independent_tally())),
        )
        if share is not None
    ]
    return max(shares) if shares else None


def provided(tokens: Mapping[str, str]) -> frozenset[str]:
    """The exercise's functions the file gave the probes (one that is missing has every
    probe ``not_run``)."""
    funcs = {probe.name: probe.func for probe in CANDIDATES}
    return frozenset(
        funcs[name] for name, mine in tokens.items() if name in funcs and mine != NOT_RUN
    )
