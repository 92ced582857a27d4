"""One group's raw evidence as the driver writes it: the record, flushed to disk
atomically after every phase (a group that dies leaves what it recorded), and the
helpers that shape what goes into it."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any


def json_safe(value: Any) -> Any:
    """A copy JSON can hold: non-finite floats become None (a skipped step's
    grad_norm is NaN), other odd values their text."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    # Made safe first: a record that cannot be written would lose the failure it holds.
    tmp.write_text(json.dumps(json_safe(data), indent=1, allow_nan=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


class GroupRecord:
    """The raw evidence of one group, flushed to disk as it grows."""

    def __init__(self, path: Path, spec: dict[str, Any]) -> None:
        self.path = path
        self.data: dict[str, Any] = {
            "group": spec["group"],
            "free_cache_engine": spec["free_cache_engine"],
            "status": "running",
            "failure": None,
            "overrides": spec["overrides"],
            "config": None,
            "rollout_source_sha256": spec["rollout_source_sha256"],
            "adapter_sha256": spec["initial_lora_sha256"],
            "initial_lora_sha256": None,
            "updated_lora_sha256": None,
            "update_completed": False,
            "sync_completed": False,
            "init_steps": [],
            "events": [],
            "resume_calls": [],
            "samples": [],
            "actor_memory": {},
            "generation": {},
            "update": {},
            "environment": {},
            "sampler_errors": [],
        }

    def flush(self) -> None:
        write_json_atomic(self.path, self.data)


def init_steps(events: list[Any]) -> list[dict[str, Any]]:
    starts: dict[str, float] = {}
    steps = []
    for ev in events:
        if ev.kind == "start":
            starts[ev.phase] = ev.t_s
        elif ev.phase in starts:
            steps.append({"name": ev.phase, "start_s": starts.pop(ev.phase), "end_s": ev.t_s})
    return steps


def merge_samples(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen = {(s["t_s"], s.get("reason")) for s in a}
    merged = a + [s for s in b if (s["t_s"], s.get("reason")) not in seen]
    return sorted(merged, key=lambda s: s["t_s"])
