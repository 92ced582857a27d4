"""Known GPUs: the total memory NVML reports for each, by the name it reports.

Physics, not policy: a card has the memory it was built with. The table lists the
total in MiB that ``nvmlDeviceGetMemoryInfo(...).total`` reports (it is a little
below the marketed size: ECC, the reserved region), matched on the NVML name,
most specific pattern first. A recorded ``environment.gpu_total_mb`` must lie
within ``CARD_TOLERANCE`` of the table's value for a card the table knows; a null
total for a known card is bounded by the table's value. A card the table does not
know (and any MIG slice, whose size its name does not fix) is bounded by the
recorded total, or, when that is null, by ``GPU_CEILING_MB`` (1 TiB) only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pytest_rlsys.resultfile.checks.evidence import as_number
from pytest_rlsys.resultfile.checks.vocabulary import GPU_CEILING_MB

# Relative tolerance: NVML totals of one model differ by board and driver
# (A100-PCIE-40GB 40536 vs SXM4 40960 MiB; V100 16160 vs 16384 MiB): about 1 %.
CARD_TOLERANCE = 0.05

# (pattern on the NVML name, total MiB NVML reports, the card as a reader names it)
CARD_TABLE: tuple[tuple[str, float, str], ...] = (
    (r"\bB200\b", 183359.0, "B200"),
    (r"\bH200\b", 143771.0, "H200 (141 GB)"),
    (r"\bH100\b.*\bNVL\b", 95830.0, "H100 NVL (94 GB)"),
    (r"\bH100\b|\bH800\b", 81559.0, "H100/H800 (80 GB)"),
    (r"\bA800\b.*40\s*GB", 40960.0, "A800 40 GB"),
    (r"\bA100\b.*80\s*GB|\bA800\b", 81920.0, "A100/A800 80 GB"),
    (r"\bA100\b", 40960.0, "A100 40 GB"),
    (r"\bL40S?\b|\bA40\b", 46068.0, "L40/L40S/A40 (48 GB)"),
    (r"\bL4\b", 23034.0, "L4 (24 GB)"),
    (r"\bA10G?\b", 23028.0, "A10/A10G (24 GB)"),
    (r"\bT4\b", 15360.0, "T4 (16 GB)"),
    (r"\bV100\b.*32\s*GB", 32768.0, "V100 32 GB"),
    (r"\bV100\b", 16384.0, "V100 16 GB"),
    (r"RTX\s*6000\s*Ada|RTX\s*A6000", 49140.0, "RTX 6000 Ada / RTX A6000 (48 GB)"),
    (r"RTX\s*5090\b", 32607.0, "RTX 5090 (32 GB)"),
    (r"RTX\s*5080\b", 16303.0, "RTX 5080 (16 GB)"),
    (r"RTX\s*5070\s*Ti\b", 16303.0, "RTX 5070 Ti (16 GB)"),
    (r"RTX\s*5070\b", 12227.0, "RTX 5070 (12 GB)"),
    (r"RTX\s*4090\b", 24564.0, "RTX 4090 (24 GB)"),
    (r"RTX\s*4080\b", 16376.0, "RTX 4080 (16 GB)"),
    (r"RTX\s*4070\s*Ti\s*SUPER\b", 16376.0, "RTX 4070 Ti SUPER (16 GB)"),
    (r"RTX\s*4070\b", 12282.0, "RTX 4070 / 4070 Ti (12 GB)"),
    (r"RTX\s*3090\b", 24576.0, "RTX 3090 (24 GB)"),
)
_COMPILED = tuple((re.compile(p, re.IGNORECASE), mb, label) for p, mb, label in CARD_TABLE)


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
    """(NVML total MiB, label) of a card the table knows by its NVML name, else None."""
    if not isinstance(name, str) or re.search(r"\bMIG\b", name, re.IGNORECASE):
        return None
    for pattern, total, label in _COMPILED:
        if pattern.search(name):
            return total, label
    return None


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
