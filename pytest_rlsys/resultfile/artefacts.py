"""Check a result file against the raw artefacts its run kept.

No file can prove itself: a fabricated but self-consistent result passes every
check derived from its own evidence. The runner's raw artefacts are a second
witness. ``rlsys result FILE --artefacts DIR`` re-hashes the adapters and
compares the file's samples with the sampler's raw log. Layout::

    DIR/<group>/samples.jsonl                          one JSON object per line,
                                                       the fields of a resource sample
    DIR/<group>/adapters/initial/adapter_model.safetensors
    DIR/<group>/adapters/updated/adapter_model.safetensors

Adapters are hashed by the rule of ``gpu/rlsys_closure/lora.py``
(``lora_tensors_sha256``): LoRA tensors only, names normalised, sorted, and for
each its name, ``repr`` of its shape tuple and its float32 bytes. It is
re-implemented here on the safetensors format itself so that checking needs
neither torch nor safetensors (a test pins both to the same vector).

Only an artefact that was read and disagrees refutes a claim. One that is absent,
unreadable or malformed is missing evidence: the check it bears on is *unverified*,
never contradicted (an operator who names the wrong folder is not told the run lied).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_rlsys.resultfile.checks import GROUP_NAMES, TIME_TOLERANCE_S, hash_pair
from pytest_rlsys.resultfile.checks.evidence import same_mb, same_s, section
from pytest_rlsys.resultfile.checks.identity import lookup
from pytest_rlsys.safe_read import UnsafeFile, read_regular_file

__all__ = [
    "ADAPTER_WEIGHTS",
    "ARTEFACT_LAYOUT",
    "ArtefactError",
    "ArtefactFindings",
    "adapter_sha256",
    "artefact_problems",
    "lora_sha256",
    "normalize_lora_name",
    "read_samples_jsonl",
]

ADAPTER_WEIGHTS = "adapter_model.safetensors"
ARTEFACT_LAYOUT = (
    "DIR/<group>/samples.jsonl and DIR/<group>/adapters/<initial|updated>/" + ADAPTER_WEIGHTS
)
# label -> (the group field it must equal, the check it bears on)
ADAPTERS: dict[str, tuple[str, str]] = {
    "initial": ("initial_lora_sha256", "initial_lora_match"),
    "updated": ("updated_lora_sha256", "updated_lora_match"),
}
MAX_ADAPTER_BYTES = 4 * 1024**3
MAX_LOG_BYTES = 512 * 1024**2
_WRAPPERS = ("_fsdp_wrapped_module.", "_checkpoint_wrapped_module.", "_orig_mod.", "module.")
_SHOWN = 3
# Adam's step moves a weight by lr x m/(sqrt(v)+eps); with bias correction that ratio is
# 1 at the first step and stays below (1-beta1)/sqrt(1-beta2) ~ 3.2 (0.9, 0.999) after.
# Weight decay adds lr x wd x |w|, far below. So no weight moves more than this x lr a step.
ADAM_STEP_BOUND = 4.0


# What an operator who named the wrong folder needs: what --artefacts must be.
WHAT_TO_PASS = (
    "pass --artefacts the folder the run wrote beside its result file "
    "(LABEL.artefacts/ for LABEL.json, holding release/ and retain/)"
)


class ArtefactError(ValueError):
    """An artefact is missing or unreadable; the message names the file and why.
    ``absent``: there is no file at all at that path (the folder may be the wrong one)."""

    def __init__(self, message: str, *, absent: bool = False) -> None:
        super().__init__(message)
        self.absent = absent


@dataclass
class ArtefactFindings:
    """By the check each bears on: what the artefacts refute (the artefact was read and
    disagrees: a contradiction) and what they could not show (missing evidence)."""

    refuted: dict[str, list[str]] = field(default_factory=dict)
    unverified: dict[str, list[str]] = field(default_factory=dict)


def normalize_lora_name(name: str) -> str:
    """The same rule as ``rlsys_closure.lora.normalize_lora_name``."""
    for wrapper in _WRAPPERS:
        name = name.replace(wrapper, "")
    if name.startswith("base_model.model."):
        name = name[len("base_model.model.") :]
    return re.sub(r"\.(lora_[AB]|lora_embedding_[AB])\.[^.]+\.weight$", r".\1.weight", name)


def lora_sha256(tensors: Iterable[tuple[str, Sequence[int], bytes]]) -> str:
    """sha256 over sorted (normalised name, shape, float32 bytes) of the LoRA tensors."""
    items: dict[str, tuple[tuple[int, ...], bytes]] = {}
    for name, shape, data in tensors:
        if "lora_" in name:
            items[normalize_lora_name(name)] = (tuple(int(n) for n in shape), data)
    if not items:
        raise ArtefactError("no LoRA tensors to hash")
    digest = hashlib.sha256()
    for key in sorted(items):
        shape, data = items[key]
        digest.update(key.encode())
        digest.update(repr(shape).encode())
        digest.update(data)
    return digest.hexdigest()


def _float32_le(dtype: str, raw: bytes, count: int) -> bytes:
    """The tensor's values as little-endian float32 bytes, as torch's .to(float32) gives."""
    if dtype == "F32":
        return raw
    if dtype == "BF16":
        # bfloat16 is the top half of a float32: pad each value with two zero bytes.
        out = bytearray(4 * count)
        out[2::4] = raw[0::2]
        out[3::4] = raw[1::2]
        return bytes(out)
    if dtype in ("F16", "F64"):
        values = struct.unpack(f"<{count}{'e' if dtype == 'F16' else 'd'}", raw)
        try:
            converted = array("f", values)
        except OverflowError:  # a float64 beyond float32's range becomes inf, as in torch
            converted = array(
                "f",
                (
                    v if abs(v) <= 3.4028234663852886e38 else math.copysign(math.inf, v)
                    for v in values
                ),
            )
        if sys.byteorder == "big":
            converted.byteswap()
        return converted.tobytes()
    raise ArtefactError(f"tensor dtype {dtype} is not a floating-point LoRA weight")


_SIZES = {"F32": 4, "F16": 2, "BF16": 2, "F64": 8}


def _read_artefact(path: Path, max_bytes: int) -> bytes:
    """An artefact's bytes through the one safe-read rule (``safe_read``): a regular
    file only, never through a link, never blocking, at most ``max_bytes``."""
    try:
        return read_regular_file(path, max_bytes)
    except UnsafeFile as exc:
        why = {
            "missing": "no such file",
            "directory": "a folder, not a file",
            "link": "a symbolic link (artefacts are read only as regular files)",
            "special": "not a regular file (a FIFO, device or socket)",
            "too_big": f"larger than {max_bytes} bytes",
            "bad_name": "not a usable file name",
            "unreadable": f"cannot be read ({exc.detail})",
        }[exc.kind]
        raise ArtefactError(f"{path}: {why}", absent=exc.kind == "missing") from None


def _read_safetensors(path: Path, max_bytes: int) -> list[tuple[str, tuple[int, ...], bytes]]:
    data = _read_artefact(path, max_bytes)
    if len(data) < 8:
        raise ArtefactError(f"{path}: not a safetensors file (shorter than its header)")
    (header_len,) = struct.unpack("<Q", data[:8])
    if header_len > len(data) - 8:
        raise ArtefactError(f"{path}: not a safetensors file (header length {header_len})")
    try:
        header = json.loads(data[8 : 8 + header_len])
    except (ValueError, UnicodeDecodeError):
        raise ArtefactError(f"{path}: the safetensors header is not JSON") from None
    if not isinstance(header, dict):
        raise ArtefactError(f"{path}: the safetensors header is not an object")
    body = memoryview(data)[8 + header_len :]
    tensors: list[tuple[str, tuple[int, ...], bytes]] = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype = str(info["dtype"])
            shape = tuple(int(n) for n in info["shape"])
            begin, end = (int(n) for n in info["data_offsets"])
        except (KeyError, TypeError, ValueError):
            raise ArtefactError(f"{path}: tensor {name!r} has a malformed header entry") from None
        if "lora_" not in name:
            continue
        count = math.prod(shape)
        width = _SIZES.get(dtype)
        if width is None:
            raise ArtefactError(f"{path}: tensor {name!r} has dtype {dtype}, not a float")
        if not 0 <= begin <= end <= len(body) or end - begin != count * width:
            raise ArtefactError(f"{path}: tensor {name!r} does not fit its data offsets")
        tensors.append((name, shape, _float32_le(dtype, bytes(body[begin:end]), count)))
    return tensors


def adapter_sha256(adapter_dir: Path, *, max_bytes: int = MAX_ADAPTER_BYTES) -> str:
    """Hash of the adapter saved in ``adapter_dir`` (``adapter_model.safetensors``)."""
    return lora_sha256(_read_safetensors(adapter_dir / ADAPTER_WEIGHTS, max_bytes))


def read_samples_jsonl(path: Path, *, max_bytes: int = MAX_LOG_BYTES) -> list[dict[str, Any]]:
    """The sampler's raw log: one JSON object per line (blank lines skipped)."""
    try:
        text = _read_artefact(path, max_bytes).decode("utf-8")
    except UnicodeDecodeError:
        raise ArtefactError(f"{path}: not UTF-8") from None
    samples: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            raise ArtefactError(f"{path}:{number}: not a JSON object") from None
        if not isinstance(value, dict):
            raise ArtefactError(f"{path}:{number}: not a JSON object")
        samples.append(value)
    return samples


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def _key(sample: Mapping[str, Any]) -> tuple[float, float | None, float | None] | None:
    t, gpu = _number(sample.get("t_s")), _number(sample.get("gpu_used_mb"))
    if t is None or gpu is None:
        return None  # a reading without a GPU number is not evidence (the runner drops it)
    return t, gpu, _number(sample.get("host_used_mb"))


_Reading = tuple[float, float | None, float | None]


def _same(a: _Reading, b: _Reading) -> bool:
    return same_s(a[0], b[0]) and same_mb(a[1], b[1]) and same_mb(a[2], b[2])


def _describe(sample: tuple[float, float | None, float | None]) -> str:
    return f"{sample[0]:.3f} s: {sample[1]:g} MiB"


def _sample_problems(group: str, claimed: Sequence[Any], raw: Sequence[Any]) -> list[str]:
    mine = sorted(k for s in claimed if isinstance(s, Mapping) and (k := _key(s)))
    log = sorted(k for s in raw if (k := _key(s)))
    unmatched_file: list[tuple[float, float | None, float | None]] = []
    unmatched_log = list(log)
    # Both lists are sorted by time; match each file sample to an equal log sample.
    index = 0
    for sample in mine:
        while index < len(unmatched_log) and unmatched_log[index][0] < sample[0] - TIME_TOLERANCE_S:
            index += 1
        found = None
        for j in range(index, len(unmatched_log)):
            if unmatched_log[j][0] > sample[0] + TIME_TOLERANCE_S:
                break
            if _same(sample, unmatched_log[j]):
                found = j
                break
        if found is None:
            unmatched_file.append(sample)
        else:
            del unmatched_log[found]
    problems: list[str] = []
    if unmatched_file:
        shown = "; ".join(_describe(s) for s in unmatched_file[:_SHOWN])
        problems.append(
            f"{group}: {len(unmatched_file)} of the file's {len(mine)} samples are not in the "
            f"raw sampler log (first: {shown})"
        )
    if unmatched_log:
        shown = "; ".join(_describe(s) for s in unmatched_log[:_SHOWN])
        problems.append(
            f"{group}: {len(unmatched_log)} of the raw log's {len(log)} samples are missing "
            f"from the file (first: {shown})"
        )
    return problems


def _values(data: bytes) -> array[float]:
    values = array("f")
    values.frombytes(data)
    if sys.byteorder == "big":
        values.byteswap()
    return values


def _number_at(config: object, dotted: str) -> float | None:
    return _number(lookup(config, dotted)[1])


Tensors = dict[str, dict[str, tuple[tuple[int, ...], "array[float]"]]]
Found = list[tuple[str, str]]  # (the check it bears on, the problem)


def _rank(name: str, tensors: Tensors, config: object, doc: Mapping[str, Any]) -> Found:
    """Every LoRA tensor has the config's rank (lora_A is [r, in], lora_B [out, r])."""
    rank = _number_at(config, "actor_rollout_ref.model.lora_rank")
    found: Found = []
    for label, items in tensors.items():
        wrong = [
            f"{key} {list(shape)}"
            for key, (shape, _) in sorted(items.items())
            if rank is not None
            and len(shape) == 2
            and (
                (".lora_A." in key and shape[0] != rank) or (".lora_B." in key and shape[1] != rank)
            )
        ]
        if wrong and rank is not None:
            found.append(
                (
                    "config_paired",
                    f"artefacts: {name}'s {label} adapter has {len(wrong)} LoRA tensor(s) whose "
                    f"shape is not of rank {rank:g} (first: {wrong[0]}); the config sets "
                    f"lora_rank={rank:g} (lora_A is [r, in], lora_B [out, r])",
                )
            )
    return found


def _untrained(name: str, tensors: Tensors, config: object, doc: Mapping[str, Any]) -> Found:
    """PEFT initialises every lora_B to zero: the initial adapter is a no-op."""
    initial = tensors.get("initial", {})
    trained = [key for key, (_, values) in initial.items() if ".lora_B." in key and any(values)]
    if not trained:
        return []
    return [
        (
            "initial_lora_match",
            f"artefacts: {name}'s initial adapter already has non-zero lora_B in "
            f"{len(trained)} tensor(s) (first: {trained[0]}); PEFT initialises lora_B to zero "
            "(LoraConfig init_lora_weights=True), so a fresh adapter is a no-op",
        )
    ]


def _adam_step(name: str, tensors: Tensors, config: object, doc: Mapping[str, Any]) -> Found:
    """An Adam-family update moves no weight more than ADAM_STEP_BOUND x lr per step."""
    initial, updated = tensors.get("initial", {}), tensors.get("updated", {})
    lr = _number_at(config, "actor_rollout_ref.actor.optim.lr")
    steps = _number(section(doc, "workload").get("update_count"))
    _, optimizer = lookup(config, "actor_rollout_ref.actor.optim.optimizer")
    # verl's default optimizer is AdamW (workers/config/optimizer.py:106).
    opt_name = optimizer if isinstance(optimizer, str) else "AdamW"
    if lr is None or lr <= 0 or "adam" not in opt_name.lower():
        return []
    bound = ADAM_STEP_BOUND * lr * max(steps or 1.0, 1.0)
    worst: tuple[float, str] | None = None
    for key, (shape, after) in updated.items():
        before = initial.get(key)
        if before is None or before[0] != shape:
            continue
        for w0, w1 in zip(before[1], after, strict=True):
            # One bfloat16 step of the weight (2**-7 relative) covers saving in bf16.
            excess = abs(w1 - w0) - bound - abs(w0) * 2.0**-7
            if excess > 0 and (worst is None or abs(w1 - w0) > worst[0]):
                worst = (abs(w1 - w0), key)
    if worst is None:
        return []
    return [
        (
            "updated_lora_match",
            f"artefacts: {name}'s update moved {worst[1]} by {worst[0]:.3g}, more than "
            f"{ADAM_STEP_BOUND:g} x lr {lr:g} x {max(steps or 1.0, 1.0):g} step(s) = {bound:.3g}: "
            "an Adam step moves each weight by about lr at most",
        )
    ]


# The rules on the saved adapters' tensors, in the order their problems are told.
ADAPTER_PASSES = (_rank, _untrained, _adam_step)


def _adapter_rules(
    name: str, group: Mapping[str, Any], doc: Mapping[str, Any], folder: Path
) -> dict[str, list[str]]:
    """What the saved adapters' tensors say against the config (ARTEFACT_RULES)."""
    tensors: Tensors = {}
    for label in ADAPTERS:
        try:
            raw = _read_safetensors(
                folder / "adapters" / label / ADAPTER_WEIGHTS, MAX_ADAPTER_BYTES
            )
        except ArtefactError:
            continue  # already reported by the hash comparison
        tensors[label] = {normalize_lora_name(n): (shape, _values(data)) for n, shape, data in raw}
    found: dict[str, list[str]] = {}
    for check in ADAPTER_PASSES:
        for bears_on, problem in check(name, tensors, group.get("config"), doc):
            found.setdefault(bears_on, []).append(problem)
    return found


_Cannot = Callable[[str, str, str, ArtefactError, str], None]


def _cannot_check(name: str, what: str, exc: ArtefactError, root: Path, rel: str) -> str:
    if exc.absent:
        return f"{name}'s {what} is not there: no {rel} under {root}"
    return f"{name}'s {what} cannot be checked: {exc}"


def _compare_hashes(
    name: str, group: Mapping[str, Any], folder: Path, ran: bool, cannot: _Cannot
) -> Iterator[tuple[str, str]]:
    """Each saved adapter whose hash is not the one the group claims (check, problem)."""
    for label, (field_name, check) in ADAPTERS.items():
        claimed = group.get(field_name)
        if not isinstance(claimed, str):
            continue  # nothing claimed (an update that never completed)
        path = folder / "adapters" / label / ADAPTER_WEIGHTS
        if not ran and not path.exists():
            continue  # the group never ran: its adapter was never saved
        try:
            actual = adapter_sha256(folder / "adapters" / label)
        except ArtefactError as exc:
            rel = f"{name}/adapters/{label}/{ADAPTER_WEIGHTS}"
            cannot(check, name, f"{label} adapter", exc, rel)
            continue
        if actual != claimed:
            a, b, where = hash_pair(claimed, actual)
            said = f"is {a} but its saved {label} adapter hashes to {b}{where}"
            yield check, f"artefacts: {name}'s {field_name} {said}"


def artefact_problems(doc: Mapping[str, Any], root: Path) -> ArtefactFindings:
    """What the artefacts under ``root`` refute, and what they could not show, by the
    check each bears on.

    A group that never ran (no cycle event: it failed while initialising, or never
    started) saved no adapter and no log: what it lacks is its honest failure, which
    the checks on its evidence already report, not a claim the artefacts refute.
    """
    found = ArtefactFindings()
    absent: set[str] = set()  # checks with an absent artefact: they say what to pass

    def cannot(check: str, name: str, what: str, exc: ArtefactError, rel: str) -> None:
        found.unverified.setdefault(check, []).append(_cannot_check(name, what, exc, root, rel))
        if exc.absent:
            absent.add(check)

    groups = section(doc, "groups")
    for name in GROUP_NAMES:
        group = groups.get(name)
        if not isinstance(group, Mapping):
            continue
        folder = root / name
        ran = bool(group.get("events"))
        for check, problem in _compare_hashes(name, group, folder, ran, cannot):
            found.refuted.setdefault(check, []).append(problem)
        for check, problems in _adapter_rules(name, group, doc, folder).items():
            found.refuted.setdefault(check, []).extend(problems)
        if not ran and not (folder / "samples.jsonl").exists():
            continue
        if not (ran or group.get("resource_samples")):
            continue
        try:
            raw = read_samples_jsonl(folder / "samples.jsonl")
        except ArtefactError as exc:
            cannot("resource_sampling", name, "raw sampler log", exc, f"{name}/samples.jsonl")
            continue
        samples = group.get("resource_samples")
        problems = _sample_problems(name, samples if isinstance(samples, list) else [], raw)
        found.refuted.setdefault("resource_sampling", []).extend(
            f"artefacts: {p}" for p in problems
        )
    for check in absent:
        found.unverified[check].append(WHAT_TO_PASS)
    found.refuted = {check: problems for check, problems in found.refuted.items() if problems}
    return found
