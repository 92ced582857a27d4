"""Known GPUs: the total memory NVML reports for each, by the name it reports.

Physics, not policy: a card has the memory it was built with. The table lists the
total in MiB that ``nvmlDeviceGetMemoryInfo(...).total`` reports (it is a little
below the marketed size: ECC, the reserved region), matched on the whole NVML name
(a laptop GPU shares its number with a desktop card but not its memory). A recorded
``environment.gpu_total_mb`` must lie
within ``CARD_TOLERANCE`` of the table's value for a card the table knows; a null
total for a known card is bounded by the table's value. A card the table does not
know (a laptop part, any MIG slice, whose size its name does not fix) is an unknown
card, not judged against the table: bounded by the recorded total, or, when that is
null, by ``GPU_CEILING_MB`` (1 TiB) only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_rlsys.resultfile.checks.evidence import as_number
from pytest_rlsys.resultfile.checks.vocabulary import GPU_CEILING_MB

# Relative tolerance: NVML totals of one model differ by board and driver
# (A100-PCIE-40GB 40536 vs SXM4 40960 MiB; V100 16160 vs 16384 MiB): about 1 %.
CARD_TOLERANCE = 0.05


@dataclass(frozen=True)
class Card:
    """One card model as NVML names it: the name's model tokens, the total NVML reports
    (MiB) per the size token the name carries (None: a name without one), what a reader
    calls it, its CUDA compute capability, and whether it is a data-centre part (CUDA's
    forward-compatibility packages run a newer CUDA on an older driver only there)."""

    model: tuple[str, ...]
    totals: Mapping[int | None, float]
    label: str
    capability: tuple[int, int]
    datacenter: bool


def _card(model: str, totals: dict[int | None, float], label: str, cc: str, dc: bool) -> Card:
    major, minor = cc.split(".")
    return Card(tuple(model.split()), totals, label, (int(major), int(minor)), dc)


# Totals: what nvmlDeviceGetMemoryInfo(...).total reports (a little below the marketed
# size: ECC, the reserved region). Capabilities: NVIDIA's CUDA GPU table
# (developer.nvidia.com/cuda-gpus). A name is matched whole (_tokens): every token after
# the vendor words must be the model's, a form factor (SXM, PCIe, HBM) or the size the
# model comes in; a laptop, mobile, Max-Q, MIG or otherwise suffixed name is another card.
CARDS: tuple[Card, ...] = (
    _card("b200", {None: 183359.0}, "B200", "10.0", True),
    _card("h200", {None: 143771.0, 141: 143771.0}, "H200 (141 GB)", "9.0", True),
    _card("h100 nvl", {None: 95830.0, 94: 95830.0}, "H100 NVL (94 GB)", "9.0", True),
    _card("h100", {None: 81559.0, 80: 81559.0}, "H100 (80 GB)", "9.0", True),
    _card("h800", {None: 81559.0, 80: 81559.0}, "H800 (80 GB)", "9.0", True),
    _card("a100", {None: 40960.0, 40: 40960.0, 80: 81920.0}, "A100", "8.0", True),
    _card("a800", {None: 81920.0, 40: 40960.0, 80: 81920.0}, "A800", "8.0", True),
    _card("l40s", {None: 46068.0}, "L40S (48 GB)", "8.9", True),
    _card("l40", {None: 46068.0}, "L40 (48 GB)", "8.9", True),
    _card("a40", {None: 46068.0}, "A40 (48 GB)", "8.6", True),
    _card("l4", {None: 23034.0}, "L4 (24 GB)", "8.9", True),
    _card("a10g", {None: 23028.0}, "A10G (24 GB)", "8.6", True),
    _card("a10", {None: 23028.0}, "A10 (24 GB)", "8.6", True),
    _card("t4", {None: 15360.0}, "T4 (16 GB)", "7.5", True),
    _card("v100", {None: 16384.0, 16: 16384.0, 32: 32768.0}, "V100", "7.0", True),
    _card("v100s", {None: 32768.0, 32: 32768.0}, "V100S (32 GB)", "7.0", True),
    _card("rtx 6000 ada generation", {None: 49140.0}, "RTX 6000 Ada (48 GB)", "8.9", False),
    _card("rtx a6000", {None: 49140.0}, "RTX A6000 (48 GB)", "8.6", False),
    _card("rtx 5090", {None: 32607.0}, "RTX 5090 (32 GB)", "12.0", False),
    _card("rtx 5080", {None: 16303.0}, "RTX 5080 (16 GB)", "12.0", False),
    _card("rtx 5070 ti", {None: 16303.0}, "RTX 5070 Ti (16 GB)", "12.0", False),
    _card("rtx 5070", {None: 12227.0}, "RTX 5070 (12 GB)", "12.0", False),
    _card("rtx 4090", {None: 24564.0}, "RTX 4090 (24 GB)", "8.9", False),
    _card("rtx 4080 super", {None: 16376.0}, "RTX 4080 SUPER (16 GB)", "8.9", False),
    _card("rtx 4080", {None: 16376.0}, "RTX 4080 (16 GB)", "8.9", False),
    _card("rtx 4070 ti super", {None: 16376.0}, "RTX 4070 Ti SUPER (16 GB)", "8.9", False),
    _card("rtx 4070 ti", {None: 12282.0}, "RTX 4070 Ti (12 GB)", "8.9", False),
    _card("rtx 4070 super", {None: 12282.0}, "RTX 4070 SUPER (12 GB)", "8.9", False),
    _card("rtx 4070", {None: 12282.0}, "RTX 4070 (12 GB)", "8.9", False),
    _card("rtx 3090 ti", {None: 24576.0}, "RTX 3090 Ti (24 GB)", "8.6", False),
    _card("rtx 3090", {None: 24576.0}, "RTX 3090 (24 GB)", "8.6", False),
)
# Longest model first, so "h100 nvl" is tried before "h100".
_BY_LENGTH = sorted(CARDS, key=lambda c: -len(c.model))
_VENDOR_WORDS = frozenset({"nvidia", "tesla", "geforce", "quadro"})
_FORM_TOKEN = re.compile(r"sxm\d?|pcie|hbm\d\w*|nvlink")
_SIZE_TOKEN = re.compile(r"(\d+)gb")


def _tokens(name: str) -> list[str]:
    words = re.sub(r"[-_/]", " ", name).casefold().split()
    while words and words[0] in _VENDOR_WORDS:
        words.pop(0)
    return words


def card_of(name: object) -> tuple[Card, float] | None:
    """The card a whole NVML name names, and its NVML total; None for a name the table
    does not know whole (a laptop part, a MIG slice, a card not listed): not judged."""
    if not isinstance(name, str):
        return None
    words = _tokens(name)
    for card in _BY_LENGTH:
        n = len(card.model)
        if tuple(words[:n]) != card.model:
            continue
        size: int | None = None
        for word in words[n:]:
            sized = _SIZE_TOKEN.fullmatch(word)
            if sized and size is None:
                size = int(sized.group(1))
            elif not _FORM_TOKEN.fullmatch(word):
                return None  # "laptop", "mobile", "mig", "d", ...: another card
        total = card.totals.get(size)
        return (card, total) if total is not None else None
    return None


# NVIDIA's CUDA Compatibility guide (docs.nvidia.com/deploy/cuda-compatibility, "Forward
# Compatibility"): the forward-compatibility package, which lets a newer CUDA major run on
# an older driver, is supported on data-centre GPUs and select professional (NGC-ready RTX)
# boards only; GeForce and TITAN cards, and every notebook part, never get it. NVML names a
# consumer card "NVIDIA GeForce ..." or "NVIDIA TITAN ...", a notebook part "... Laptop
# GPU" (older: "Mobile", "Max-Q"): the name alone tells a card that cannot have it, whether
# or not the table knows its memory.
_NO_FORWARD_COMPAT = re.compile(r"\b(geforce|titan|laptop|mobile|max[- ]?q)\b", re.IGNORECASE)


def forward_compatible(name: object) -> bool | None:
    """Whether CUDA's forward-compatibility package can run on the card NVML names: False
    for a GeForce, TITAN or notebook part, True for a data-centre card the table knows,
    None otherwise (a professional board, any other name: it may, so it is not judged)."""
    if not isinstance(name, str):
        return None
    if _NO_FORWARD_COMPAT.search(name):
        return False
    found = card_of(name)
    return True if found is not None and found[0].datacenter else None


# The reading methods a result records (schema: sampling.source) read NVIDIA GPUs only:
# NVML is libnvidia-ml.so, shipped with NVIDIA's driver, and nvidia-smi is built on it.
NVIDIA_READERS = frozenset({"nvml", "nvidia-smi"})
# Names of other vendors' accelerators (AMD reads with amd-smi / ROCm SMI, Intel with
# xpu-smi / hl-smi, Huawei with npu-smi); no NVIDIA card's NVML name contains them.
OTHER_VENDOR = re.compile(
    r"\b(AMD|Instinct|Radeon|MI[1-9]\d{2}[A-Z]*|Intel|Gaudi\d*|Habana|Ascend|TPU|Apple)\b",
    re.IGNORECASE,
)


def reader_problems(environment: Mapping[str, Any], sampling: object) -> list[str]:
    """A card and a reading method that cannot go together (another vendor's card read
    with NVML or nvidia-smi)."""
    source = sampling.get("source") if isinstance(sampling, Mapping) else None
    name = environment.get("gpu_name")
    found = OTHER_VENDOR.search(name) if isinstance(name, str) else None
    if source not in NVIDIA_READERS or found is None:
        return []
    return [
        f"environment.gpu_name {name!r} is not an NVIDIA card ({found.group(0)}), yet "
        f"sampling.source says it was read with {source}, which reads NVIDIA GPUs only"
    ]


def known_card(name: object) -> tuple[float, str] | None:
    """(NVML total MiB, label) of a card the table knows by its whole NVML name, else None."""
    found = card_of(name)
    return (found[1], found[0].label) if found else None


def unknown_card_note(environment: Mapping[str, Any]) -> str | None:
    """What the grader says of a named card the table does not know (never a failure)."""
    name = environment.get("gpu_name")
    if not isinstance(name, str) or card_of(name) is not None:
        return None
    return (
        f"environment.gpu_name {name!r} is not in the card table (matched on the whole name: "
        "a laptop, MIG or otherwise suffixed part is another card): unknown card, not judged "
        "against the table; its readings are bounded by the recorded gpu_total_mb"
    )


def gpu_bound(environment: Mapping[str, Any]) -> tuple[float, str, list[str]]:
    """The most memory a whole-GPU reading may show, what that bound is, and the
    environment's own problems (a total no GPU has, or one the named card does not have).

    Said once per file, so the caller reports the problems once.
    """
    total = as_number(environment.get("gpu_total_mb"))
    card = known_card(environment.get("gpu_name"))
    problems: list[str] = []
    if total is not None and total > GPU_CEILING_MB:
        problems.append(
            f"environment.gpu_total_mb is {total:g} MiB, more than any GPU has "
            f"({GPU_CEILING_MB:.0f} MiB; a unit slip?)"
        )
        total = None
    if card is not None:
        expected, label = card
        if total is not None and abs(total - expected) > CARD_TOLERANCE * expected:
            problems.append(
                f"environment.gpu_total_mb is {total:g} MiB, but gpu_name "
                f"{environment.get('gpu_name')!r} is a {label}, which NVML reports as "
                f"{expected:.0f} MiB (±{CARD_TOLERANCE:.0%}; the card table)"
            )
            return expected * (1 + CARD_TOLERANCE), f"the {label}'s", problems
        if total is None:
            return expected * (1 + CARD_TOLERANCE), f"the {label}'s", problems
    if total:
        return total, "the GPU's total", problems
    return GPU_CEILING_MB, "any GPU's", problems


def gpu_total(environment: Mapping[str, Any]) -> float | None:
    """The card's total memory: the recorded one, else the table's, else None."""
    total = as_number(environment.get("gpu_total_mb"))
    if total is not None and 0 < total <= GPU_CEILING_MB:
        return total
    card = known_card(environment.get("gpu_name"))
    return card[0] if card else None
