"""The system ledger as a tool: a topology file in, the capacity, transfer and admission
report out, computed by the reference implementation (SPEC §8).

Topology file (JSON or TOML; YAML with PyYAML installed)::

    stage_rates: {rollout: 240, reward: 160, learner: 80}
    items_per_work_unit: {rollout: 3, reward: 2, learner: 1}
    arrival_rate: 70
    placement: {rollout: A, reward: A, learner: B}
    edges: [{source: rollout, target: learner, bytes_per_item: 1000, ...}]
    memory_by_pool: {A: 30, B: 20}
    memory_limits: {A: 40, B: 24}
    version_sync_ok: true          # optional, default true
    recovery_ok: true              # optional, default true
    max_exposed_s_per_s: 0.1       # optional
    stage_phases: {rollout: rollout_before_update}   # optional, used with --result
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

from pytest_rlsys.escaping import clean
from pytest_rlsys.grading.battery import load_reference
from pytest_rlsys.safe_read import read_text, shorten

REQUIRED = (
    "stage_rates",
    "items_per_work_unit",
    "arrival_rate",
    "placement",
    "edges",
    "memory_by_pool",
    "memory_limits",
)
OPTIONAL = ("version_sync_ok", "recovery_ok", "max_exposed_s_per_s", "stage_phases")


class LedgerError(ValueError):
    """A topology or result file that cannot be used; the message says what to fix, in
    one bounded line (a value it quotes may be megabytes long)."""

    def __init__(self, message: str) -> None:
        super().__init__(shorten(message, MAX_ERROR_CHARS))


MAX_ERROR_CHARS = 600
MAX_TOPOLOGY_BYTES = 256 * 1024  # the example is 1.2 KB; a topology of a whole cluster fits


SUFFIXES = {".json": "JSON", ".toml": "TOML", ".yaml": "YAML", ".yml": "YAML"}
EDGE_NUMBERS = (
    "bytes_per_item",
    "items_per_work_unit",
    "work_units_per_second",
    "bandwidth_bytes_per_s",
)


def _is_number(value: Any) -> bool:
    # bool is an int to Python, never a rate or a byte count to a person.
    return type(value) in (int, float) and math.isfinite(value)


def _check_numbers(path: Path, data: dict[str, Any]) -> None:
    for key in ("stage_rates", "items_per_work_unit", "memory_by_pool", "memory_limits"):
        for name, value in data[key].items():
            if not _is_number(value):
                raise LedgerError(f"{path}: {key}.{name} must be a finite number, not {value!r}")
    for key in ("arrival_rate", "max_exposed_s_per_s"):
        if key in data and not _is_number(data[key]):
            raise LedgerError(f"{path}: {key} must be a finite number, not {data[key]!r}")
    for key in ("version_sync_ok", "recovery_ok"):
        if key in data and type(data[key]) is not bool:
            raise LedgerError(f"{path}: {key} must be true or false, not {data[key]!r}")
    unknown = sorted(set(data["memory_limits"]) - set(data["memory_by_pool"]))
    if unknown:
        raise LedgerError(
            f"{path}: memory_limits names pool(s) {unknown} that "
            f"memory_by_pool does not have (pools: "
            f"{sorted(data['memory_by_pool'])})"
        )
    for number, edge in enumerate(data["edges"], start=1):  # numbered as a person counts
        where = f"{path}: edge {number}"
        if type(edge) is not dict:
            raise LedgerError(f"{where} must be a mapping, not {edge!r}")
        missing = [k for k in ("source", "target", *EDGE_NUMBERS) if k not in edge]
        if missing:
            raise LedgerError(f"{where} lacks {missing}")
        for key in (*EDGE_NUMBERS, "overlap_fraction"):
            if key in edge and not _is_number(edge[key]):
                raise LedgerError(f"{where}: {key} must be a finite number, not {edge[key]!r}")


def _loader(yaml: Any) -> Any:
    """PyYAML's safe loader without aliases: ``*name`` repeats a node without its bytes,
    so a 600-byte file of nested aliases expands to billions of items.  A topology
    needs none; one is refused with its position."""

    class NoAliases(yaml.SafeLoader):  # type: ignore[misc]
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(
                    None, None, "aliases (*name) are not allowed in a topology", mark
                )
            return super().compose_node(parent, index)

    return NoAliases


def load_topology(path: Path) -> dict[str, Any]:
    if path.is_dir():  # before the suffix: a folder has none, and "file type" misleads
        raise LedgerError(
            f"{path} is a folder; give the topology file itself (.json, .toml, .yaml or "
            ".yml), e.g. examples/topology.json"
        )
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise LedgerError(
            f"{path}: unsupported file type {suffix or '(no extension)'!r}; "
            "give a .json, .toml, .yaml or .yml topology file"
        )
    try:  # the safe-read rule: a FIFO, a device or a link is refused before it is read
        text = read_text(path, MAX_TOPOLOGY_BYTES)  # editors may save JSON with a BOM
    except ValueError as exc:
        raise LedgerError(str(exc)) from None
    try:
        if suffix == ".toml":
            data: Any = tomllib.loads(text)
        elif suffix in (".yaml", ".yml"):
            try:
                import yaml
            except ImportError:
                raise LedgerError(
                    "YAML topologies need PyYAML: pip install "
                    "'pytest-rlsys[yaml]' (or give the topology as JSON "
                    "or TOML)"
                ) from None
            data = yaml.load(text, Loader=_loader(yaml))  # a SafeLoader: no Python objects
        else:
            data = json.loads(text)
    except LedgerError:
        raise
    except Exception as exc:  # each parser has its own error type; all mean "bad syntax"
        raise LedgerError(f"{path}: not valid {SUFFIXES[suffix]}: {exc}") from None
    if type(data) is not dict:
        raise LedgerError(f"{path}: the topology must be a mapping at the top level")
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise LedgerError(f"{path}: missing keys {missing} (required: {list(REQUIRED)})")
    unknown = sorted(set(data) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise LedgerError(f"{path}: unknown keys {unknown}")
    for key in (k for k in REQUIRED if k not in ("arrival_rate", "edges")):
        if type(data[key]) is not dict:
            raise LedgerError(f"{path}: '{key}' must be a mapping")
    if type(data["edges"]) is not list:
        raise LedgerError(f"{path}: 'edges' must be a list of mappings")
    _check_numbers(path, data)
    return data


def result_caveats(path: Path, doc: dict[str, Any]) -> list[str]:
    """What the result file itself says against using its durations: a run marked failed,
    checks that fail on its own evidence (unpaired configs, different adapters, ...)."""
    from pytest_rlsys.resultfile.checks import derive_checks

    caveats = []
    if doc.get("status") == "failed":
        recorded = doc.get("failure")
        failure: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
        caveats.append(
            f"{path} records a failed run (group {failure.get('group') or 'unknown'}, phase "
            f"{failure.get('phase') or 'unknown'}): its durations stop where the run did"
        )
    failed = [name for name, check in derive_checks(doc).items() if not check.passed]
    if failed:
        caveats.append(
            f"{path}: its own checks fail on its evidence ({', '.join(failed)}; "
            f"'rlsys result {path}' says why)"
        )
    if caveats:
        caveats.append(
            "the decision above rests on that run's durations and is no better than the "
            "run: rely on it only with a result file that 'rlsys result' passes"
        )
    return caveats


def rates_from_result(
    path: Path, stage_phases: dict[str, str], group: str, max_bytes: int | None = None
) -> tuple[dict[str, float], list[str]]:
    """Stage rate = 1 / measured duration of the phase each stage maps to, and the
    file's caveats (``result_caveats``).  ``max_bytes``: the largest file read
    (``--max-mib``; None: the reader's own limit)."""
    from pytest_rlsys.resultfile.loading import DEFAULT_MAX_BYTES, load_result_file

    # ledger --result takes --max-mib: its message may offer to raise the limit
    loaded = load_result_file(
        path, max_bytes=max_bytes or DEFAULT_MAX_BYTES, limit_option="--max-mib"
    )
    if not loaded.ok or loaded.doc is None:
        shown = (clean(error, newlines=False) for error in loaded.errors[:3])
        raise LedgerError(f"{path}: not a valid result file: " + "; ".join(shown))
    phases = loaded.doc["groups"][group]["phases"]
    rates = {}
    for stage, phase in stage_phases.items():
        entry = phases.get(phase)
        if entry is None:
            raise LedgerError(
                f"{path}: group {group!r} has no phase {phase!r} (has {sorted(phases)})"
            )
        duration = entry.get("duration_s")
        if not isinstance(duration, int | float) or duration <= 0:
            raise LedgerError(f"{path}: phase {phase!r} has no positive duration")
        rates[stage] = 1.0 / float(duration)
    return rates, result_caveats(path, loaded.doc)


def ledger_report(
    topology: dict[str, Any],
    result: Path | None = None,
    group: str = "release",
    max_bytes: int | None = None,
) -> dict[str, Any]:
    ref = load_reference()
    stage_rates = dict(topology["stage_rates"])
    caveats: list[str] = []
    if result is not None:
        phases = topology.get("stage_phases")
        if type(phases) is not dict or not phases:
            raise LedgerError(
                "--result needs 'stage_phases' in the topology (stage name -> phase name)"
            )
        measured, caveats = rates_from_result(result, phases, group, max_bytes)
        stage_rates.update(measured)
    try:
        capacity = ref.pipeline_capacity(
            stage_rates, topology["arrival_rate"], topology["items_per_work_unit"]
        )
        transfer = ref.transfer_ledger(topology["edges"], topology["placement"])
        kwargs = {}
        if "max_exposed_s_per_s" in topology:
            kwargs["max_exposed_s_per_s"] = topology["max_exposed_s_per_s"]
        admission = ref.evaluate_topology(
            capacity,
            topology["memory_by_pool"],
            topology["memory_limits"],
            transfer,
            topology.get("version_sync_ok", True),
            topology.get("recovery_ok", True),
            **kwargs,
        )
    except (ValueError, KeyError, TypeError) as exc:
        # The reference counts edges from 0; people count from 1.
        text = re.sub(r"\bedge (\d+)", lambda m: f"edge {int(m.group(1)) + 1}", str(exc))
        raise LedgerError(f"the topology is not consistent: {type(exc).__name__}: {text}") from None
    return {
        "capacity": capacity,
        "transfer": transfer,
        "admission": admission,
        "stage_rates": stage_rates,
        "result_caveats": caveats,
    }


def render_text(report: dict[str, Any]) -> str:
    cap, tr, adm = report["capacity"], report["transfer"], report["admission"]
    lines = ["capacity (work units/s)", f"  pipeline capacity: {cap['capacity']:g}"]
    for stage, rate in cap["effective_rates"].items():
        mark = "  <- bottleneck" if stage in cap["bottlenecks"] else ""
        lines.append(
            f"  {stage:<16} effective {rate:>10g}  margin {cap['queue_margins'][stage]:>+10g}{mark}"
        )
    lines.append(f"  queue stable: {cap['queue_stable']}")
    lines.append("transfer")
    lines.append(f"  cross-pool bytes/s: {tr['cross_pool_bytes_per_s']:g}")
    for fabric, value in tr["fabric_exposed_seconds_per_s"].items():
        mark = "  <- critical" if fabric in tr["critical_fabrics"] else ""
        lines.append(f"  {fabric:<16} exposed {value:g} s/s{mark}")
    lines.append("admission")
    lines.append(f"  decision: {adm['decision']}")
    lines.append(f"  reasons: {', '.join(adm['reasons']) or '-'}")
    lines += [f"  caveat: {caveat}" for caveat in report.get("result_caveats", [])]
    for key in ("over_limit_pools", "unstable_stages", "overloaded_fabrics"):
        if adm[key]:
            lines.append(f"  {key}: {', '.join(adm[key])}")
    lines.append(
        "A passing ledger only admits the topology to a real multi-worker "
        "experiment; it is not a throughput gain."
    )
    # Stage, pool and fabric names are the topology file's: each line stays one line.
    return "\n".join(clean(line, newlines=False) for line in lines) + "\n"
