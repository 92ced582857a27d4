"""The checks on what a group claims to have run from: adapters, configs, rollout
source, and the run's status (initial_lora_match, updated_lora_match, config_paired,
rollout_source_match, update_and_sync).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from pytest_rlsys.resultfile.checks.coherence import (
    coherence_problems,
    impossible_numbers,
    placeholder,
)
from pytest_rlsys.resultfile.checks.configuration import config_problems
from pytest_rlsys.resultfile.checks.evidence import (
    as_number,
    group_of,
    hash_pair,
    listing,
    mappings,
    outcome,
    section,
    short_hash,
)
from pytest_rlsys.resultfile.checks.identity import (
    config_diff,
    config_sha256,
    lookup,
    model_identity,
)
from pytest_rlsys.resultfile.checks.sequence import sequence_problems
from pytest_rlsys.resultfile.checks.stack import stack_problems
from pytest_rlsys.resultfile.checks.timeline import (
    closed_as_failed,
    end_details,
    incomplete,
    phase_windows,
    window_text,
)
from pytest_rlsys.resultfile.checks.vocabulary import (
    EXPECTED_FREE_CACHE_ENGINE,
    FREE_CACHE_ENGINE_PATH,
    GROUP_NAMES,
    PARALLEL_SIZE_PATHS,
    PARALLEL_SOURCE,
    PARALLEL_WORLD_PATHS,
    REQUIRED_CONFIG_KEYS,
    CheckResult,
    Doc,
)


def _placeholders(doc: Doc, key: str, what: str) -> list[str]:
    found: list[str] = []
    for name in GROUP_NAMES:
        digest = group_of(doc, name).get(key)
        why = placeholder(digest)
        if why:
            found.append(f"{name}'s {what} {short_hash(digest)} is a placeholder: {why}")
    return found


def check_initial_lora_match(doc: Doc) -> CheckResult:
    """Both groups start from the same LoRA adapter (equal initial hashes)."""
    rel = group_of(doc, "release").get("initial_lora_sha256")
    ret = group_of(doc, "retain").get("initial_lora_sha256")
    fake = _placeholders(doc, "initial_lora_sha256", "initial LoRA hash")
    if isinstance(rel, str) and rel == ret and not fake:
        return CheckResult(True, f"both groups start from LoRA {short_hash(rel)}")
    problems: list[str] = []
    if not (isinstance(rel, str) and rel == ret):
        a, b, where = hash_pair(rel, ret)
        problems.append(
            f"initial LoRA hashes differ: release {a}, retain {b}{where}; "
            "the groups did not start from the same adapter"
        )
    return CheckResult(False, "; ".join(problems + fake))


def check_updated_lora_match(doc: Doc) -> CheckResult:
    """Both updates produced the same adapter, and it differs from the initial one."""
    problems: list[str] = []
    updated: dict[str, object] = {}
    for name in GROUP_NAMES:
        group = group_of(doc, name)
        after, before = group.get("updated_lora_sha256"), group.get("initial_lora_sha256")
        updated[name] = after
        if not isinstance(after, str):
            problems.append(f"{name} has no updated LoRA hash (null)")
        elif after == before:
            problems.append(
                f"{name}'s LoRA hash did not change in the update ({short_hash(after)})"
            )
    problems += _placeholders(doc, "updated_lora_sha256", "updated LoRA hash")
    rel, ret = updated["release"], updated["retain"]
    if isinstance(rel, str) and rel == ret:
        # The runner measures the two saved adapters' L2 distance (runner._updated_l2)
        # and records it on each update's end: equal tensors are 0 apart.
        for name in GROUP_NAMES:
            for detail in end_details(mappings(group_of(doc, name).get("events")), "update"):
                l2 = as_number(detail.get("updated_lora_l2_between_groups"))
                if l2 is not None and l2 > 0:
                    problems.append(
                        f"both updates give LoRA {short_hash(rel)}, yet {name}'s update records "
                        f"an L2 distance of {l2:g} between the two updated adapters: equal "
                        "adapters are 0 apart"
                    )
                    break
    if isinstance(rel, str) and isinstance(ret, str) and rel != ret:
        a, b, where = hash_pair(rel, ret)
        problems.append(f"updated LoRA hashes differ: release {a}, retain {b}{where}")
    return outcome(problems, f"both updates give LoRA {short_hash(rel)}, changed from the initial")


_SNAPSHOT = re.compile(r"models--[^/\\]+[/\\]snapshots[/\\]([0-9a-fA-F]{7,64})")


def _same_number(a: object, b: object) -> bool:
    x, y = as_number(a), as_number(b)
    return x is not None and x == y


def _merged(found: dict[tuple[str, str], list[str]]) -> list[str]:
    """(template with {who}, noun) -> groups; groups saying the same are named once."""
    return [
        # replace, not format: the values quoted in a template may hold braces.
        template.replace("{who}", f"{names[0]}'s {noun}" if len(names) == 1 else f"both {noun}s")
        for (template, noun), names in found.items()
    ]


# The workload block's numbers and the config keys that must say the same.
_WORKLOAD_KEYS = (
    ("lora_rank", "actor_rollout_ref.model.lora_rank"),
    ("lora_alpha", "actor_rollout_ref.model.lora_alpha"),
    ("update_count", "actor_rollout_ref.actor.optim.total_training_steps"),
    ("update_count", "trainer.total_training_steps"),
    ("prompt_count", "data.train_batch_size"),
)


def _model_templates(model: str, revision: object, path: str) -> Iterator[str]:
    """How a config's model path contradicts the workload's model and revision."""
    mine, theirs = model_identity(model), model_identity(path)
    # Compare what can be compared: two hub ids, or two local paths.
    if mine and theirs and mine[0] == theirs[0] and mine[1] != theirs[1]:
        yield f"the workload names model {model!r} but the model path is {path!r} in {{who}}"
    elif mine and theirs and mine[0] != theirs[0] and not revision:
        # A local folder against a hub id: only the pinned revision identifies it.
        yield (
            f"the workload names model {model!r} and {{who}} loads {path!r}, and with no "
            "model_revision nothing says they are the same weights"
        )
    snapshot = _SNAPSHOT.search(path)
    if snapshot and isinstance(revision, str) and revision:
        a, b = snapshot.group(1).lower(), revision.lower()
        if not (a.startswith(b) or b.startswith(a)):
            yield (
                f"the workload pins model_revision {revision!r} but {{who}} loads the "
                f"cache snapshot {snapshot.group(1)!r}"
            )


def _config_templates(workload: Mapping[str, Any], config: Mapping[str, Any]) -> Iterator[str]:
    """How one config contradicts the workload block (model, LoRA, counts)."""
    present, path = lookup(config, "actor_rollout_ref.model.path")
    model = workload.get("model")
    if present and isinstance(path, str) and isinstance(model, str):
        yield from _model_templates(model, workload.get("model_revision"), path)
    for key, dotted in _WORKLOAD_KEYS:
        present, value = lookup(config, dotted)
        known = present and key in workload and value is not None
        if known and not _same_number(workload[key], value):
            yield f"the workload's {key} is {workload[key]!r} but {dotted}={value!r} in {{who}}"


def _workload_problems(doc: Doc, configs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The workload block must say what both configs say (model, LoRA, update count)."""
    workload = doc.get("workload")
    if not isinstance(workload, Mapping):
        return []
    found: dict[tuple[str, str], list[str]] = {}
    for name, config in configs.items():
        for template in _config_templates(workload, config):
            found.setdefault((template, "config"), []).append(name)
    count = as_number(workload.get("update_count"))
    for name in GROUP_NAMES if count is not None else ():
        events = mappings(group_of(doc, name).get("events"))
        updates = sum(1 for e in events if e.get("phase") == "update" and e.get("kind") == "start")
        if updates and updates != count:
            template = (
                f"the workload's update_count is {workload.get('update_count')!r} but "
                f"there are {updates} update phase(s) in {{who}}"
            )
            found.setdefault((template, "event list"), []).append(name)
    return _merged(found)


def _parallel_problems(name: str, config: Mapping[str, Any]) -> list[str]:
    """The rollout's parallel sizes fit the GPUs the config gives the trainer: verl builds
    the rollout mesh from the worker world (trainer.n_gpus_per_node x trainer.nnodes) and
    asserts it divides by tensor x data x pipeline parallel sizes (docs/result-files.md)."""
    gpus = [lookup(config, path) for path in PARALLEL_WORLD_PATHS]
    sizes = [lookup(config, path) for path in PARALLEL_SIZE_PATHS]
    if not gpus[0][0] or not sizes[0][0]:
        return []  # only where the config records both the GPUs and the tensor parallel size
    values = [value if present else 1 for present, value in gpus + sizes]
    numbers = [n for n in values if isinstance(n, int) and not isinstance(n, bool) and n >= 1]
    if len(numbers) != len(values):
        return []  # a value that is no positive integer is judged by ENGINE_RANGES or nowhere
    world = numbers[0] * numbers[1]
    needed = numbers[2] * numbers[3] * numbers[4]
    if world % needed == 0:
        return []
    return [
        f"{name}'s config runs the rollout on {world} GPU(s) (trainer.n_gpus_per_node x "
        f"nnodes) but asks for {needed} per replica (tensor x data x pipeline parallel "
        f"size): verl asserts the world divides by it ({PARALLEL_SOURCE}): no run starts"
    ]


def check_config_paired(doc: Doc) -> CheckResult:
    """The configs differ only in free_cache_engine, set as each group says, and agree
    with the workload block (model, LoRA rank and alpha, update and prompt counts)."""
    problems: list[str] = []
    configs: dict[str, Mapping[str, Any]] = {}
    for name in GROUP_NAMES:
        group = group_of(doc, name)
        config = group.get("config")
        if not isinstance(config, Mapping):
            problems.append(f"{name} has no config")
            continue
        configs[name] = config
        refused = config_problems(config)
        problems += [f"{name}'s config {p}: no run starts with it" for p in refused]
        problems += _parallel_problems(name, config)
        absent = [key for key in REQUIRED_CONFIG_KEYS if not lookup(config, key)[0]]
        if absent:
            problems.append(
                f"{name}'s config lacks {listing(absent)}: a resolved verl config sets every "
                "key the pairing is judged on (an absent key cannot agree)"
            )
        try:
            digest = config_sha256(config)
        except (TypeError, ValueError) as exc:
            problems.append(f"{name}'s config cannot be hashed: {exc}")
        else:
            if digest != group.get("config_sha256"):
                a, b, where = hash_pair(group.get("config_sha256"), digest)
                problems.append(
                    f"{name}'s config_sha256 {a} is not the hash of its config ({b}){where}"
                )
        flag = group.get("free_cache_engine")
        expected = EXPECTED_FREE_CACHE_ENGINE[name]
        if flag is not expected:
            problems.append(f"{name} has free_cache_engine={flag}, expected {expected}")
        present, value = lookup(config, FREE_CACHE_ENGINE_PATH)
        if not present:
            problems.append(f"{name}'s config has no {FREE_CACHE_ENGINE_PATH}")
        elif value is not flag:
            problems.append(
                f"{name}'s config sets {FREE_CACHE_ENGINE_PATH}={value} but the group says {flag}"
            )
    if len(configs) == 2:
        diff = config_diff(configs["release"], configs["retain"])
        other = [path for path in diff if path != FREE_CACHE_ENGINE_PATH]
        if other:
            problems.append(f"configs also differ at {listing(other)}")
        if FREE_CACHE_ENGINE_PATH not in diff and not problems:
            problems.append(f"configs do not differ at {FREE_CACHE_ENGINE_PATH}")
    problems += _workload_problems(doc, configs)
    problems += stack_problems(doc)
    return outcome(
        problems, f"configs differ only at {FREE_CACHE_ENGINE_PATH} and agree with the workload"
    )


def check_rollout_source_match(doc: Doc) -> CheckResult:
    """Both groups read the frozen rollout source named in the workload."""
    expected = section(doc, "workload").get("rollout_source_sha256")
    problems: list[str] = []
    for name in GROUP_NAMES:
        got = group_of(doc, name).get("rollout_source_sha256")
        if got != expected or got is None:
            a, b, where = hash_pair(got, expected)
            problems.append(f"{name} read rollout source {a}, the workload names {b}{where}")
    why = placeholder(expected)
    if why:
        problems.append(
            f"the workload's rollout source {short_hash(expected)} is a placeholder: {why}"
        )
    return outcome(problems, f"both groups read rollout source {short_hash(expected)}")


def record_problems(doc: Doc) -> list[str]:
    """Where the run's status and failure record, or the order of its records, are
    refuted by its evidence: a run marked completed whose evidence is incomplete, and
    every record the runner's state machine cannot produce (``checks.sequence``: a
    failure named where the group did not stop, a group run after a failed one, init
    steps out of order, ...), and update numbers that cannot be. Any of them contradicts the
    file (finding ``false_record``)."""
    problems = sequence_problems(doc)
    # An update number that cannot be (a negative loss) is no record of a run either.
    workload = section(doc, "workload")
    for name in GROUP_NAMES:
        problems += impossible_numbers(name, group_of(doc, name), workload)
    if doc.get("status") == "completed":
        problems = [
            f"the run is marked completed but {name}'s evidence is incomplete "
            f"({'; '.join(missing)})"
            for name in GROUP_NAMES
            if (missing := incomplete(group_of(doc, name)))
        ] + problems
    return problems


def _status_problems(doc: Doc) -> list[str]:
    """Besides what refutes the record: a failed run whose evidence is complete, or a
    named phase that ended normally (the work after a phase can fail too, so neither
    refutes the record; both fail the check)."""
    failure = doc.get("failure")
    if doc.get("status") != "failed" or not isinstance(failure, Mapping):
        return []
    where, phase = failure.get("group"), failure.get("phase")
    if not any(incomplete(group_of(doc, name)) for name in GROUP_NAMES):
        named = f" in {where}, but {where}'s" if where in GROUP_NAMES else " but both groups'"
        return [
            f"the run is marked failed{named} evidence is complete (every phase ended, "
            "update and sync completed)"
        ]
    events = mappings(group_of(doc, str(where)).get("events")) if where in GROUP_NAMES else []
    windows = phase_windows(events)
    if isinstance(phase, str) and phase in windows and not closed_as_failed(events, phase):
        return [
            f"the run is marked failed in {where}, phase {phase}, but {where}'s {phase} "
            f"({window_text(windows[phase])}) ended normally"
        ]
    return []


def check_update_and_sync(doc: Doc) -> CheckResult:
    """Both groups completed the update and the weight sync, with events to show it,
    and the run's status (and failure record) agrees with that evidence."""
    problems: list[str] = []
    for name in GROUP_NAMES:
        group = group_of(doc, name)
        windows = phase_windows(mappings(group.get("events")))
        for step in ("update", "sync"):
            if group.get(f"{step}_completed") is not True:
                problems.append(f"{name} reports {step}_completed={group.get(f'{step}_completed')}")
            elif step not in windows:
                problems.append(
                    f"{name} claims the {step} completed but has no {step} start/end events"
                )
            elif closed_as_failed(mappings(group.get("events")), step):
                problems.append(
                    f"{name} claims the {step} completed but its {step} ended as failed"
                )
        if group.get("update_completed") is True and group.get("updated_lora_sha256") is None:
            problems.append(f"{name} completed its update but has no updated LoRA hash")
    workload = section(doc, "workload")
    for name in GROUP_NAMES:
        problems += coherence_problems(name, group_of(doc, name), workload)
    problems += [p for p in record_problems(doc) if p not in problems] + _status_problems(doc)
    return outcome(
        problems, "both groups completed the update and the sync, and what they record of it agrees"
    )
