"""Score records and the project's own score document (schemas/rlsys-score.v1.json)."""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_rlsys import __version__

SCORE_SCHEMA_ID = "https://rlsys.invalid/schemas/rlsys-score.v1.json"


@dataclass(frozen=True)
class CaseResult:
    id: str
    section: str
    visibility: str
    max_cents: int
    status: str
    message: str = ""
    category: str = ""
    call: str = ""      # visible cases only: the call that was made
    claim: str = ""     # visible cases only: the chapter's assertion
    expected: str = ""  # visible cases only
    got: str = ""       # visible cases only
    seconds: float = 0.0
    not_implemented: bool = False  # the call raised NotImplementedError (template code)

    @property
    def cents(self) -> int:
        return self.max_cents if self.status == "passed" else 0


@dataclass
class ScoreReport:
    cases: list[CaseResult]
    seed: int | None
    submission: str | None
    submission_sha256: str | None
    battery_sha256: str | None
    lang: str = "en"
    notes: list[str] = field(default_factory=list)
    ungraded_cents: int = 0
    elapsed_s: float = 0.0
    gpu_result: dict[str, Any] | None = None  # path, gradable, errors, notes
    result_sha256: str | None = None

    def sections(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for case in self.cases:
            entry = out.setdefault(case.section, {"score": 0, "max_score": 0, "passed": 0,
                                                  "cases": 0, "not_run": 0,
                                                  "not_implemented": 0})
            entry["score"] += case.cents
            entry["max_score"] += case.max_cents
            entry["cases"] += 1
            entry["passed"] += case.status == "passed"
            entry["not_run"] += case.status == "not_run"
            entry["not_implemented"] += case.not_implemented
        for entry in out.values():
            entry["score"] = entry["score"] / 100
            entry["max_score"] = entry["max_score"] / 100
        return out

    @property
    def score(self) -> float:
        return sum(c.cents for c in self.cases) / 100

    @property
    def max_score(self) -> float:
        return sum(c.max_cents for c in self.cases) / 100

    def to_json(self) -> dict[str, Any]:
        """The score document; its shape is published in schemas/rlsys-score.v1.json."""
        doc: dict[str, Any] = {
            "$schema": SCORE_SCHEMA_ID,
            "schema_version": "rlsys-score/1",
            "score": self.score,
            "max_score": self.max_score,
            "sections": {
                name: {"score": s["score"], "max_score": s["max_score"],
                       "cases_passed": s["passed"], "cases": s["cases"],
                       "not_implemented": s["not_implemented"] == s["cases"] > 0}
                for name, s in self.sections().items()
            },
            "tests": [
                {
                    "id": c.id, "section": c.section, "score": c.cents / 100,
                    "max_score": c.max_cents / 100, "status": c.status,
                    "visibility": c.visibility, "message": c.message,
                    "category": c.category,
                    **({"call": c.call, "claim": c.claim, "expected": c.expected,
                        "got": c.got} if c.visibility == "visible" and c.call else {}),
                }
                for c in self.cases
            ],
            "ungraded_points": self.ungraded_cents / 100,
            "notes": list(self.notes),
            "elapsed_s": round(self.elapsed_s, 3),
            "reproducibility": {
                "seed": self.seed,
                "package_version": __version__,
                "python_version": platform.python_version(),
                "battery_sha256": self.battery_sha256,
                "submission": self.submission,
                "submission_sha256": self.submission_sha256,
                "result_sha256": self.result_sha256,
                "lang": self.lang,
            },
        }
        if self.gpu_result is not None:
            doc["gpu_result"] = self.gpu_result
        return doc


def battery_fingerprint(files: Sequence[bytes], seed: int) -> str:
    """Hash of the battery's code and reference, plus the seed, for reproducibility."""
    digest = hashlib.sha256()
    for blob in files:
        digest.update(hashlib.sha256(blob).digest())
    digest.update(str(seed).encode())
    return digest.hexdigest()
