"""Import the clean-room adversary's result files into this corpus (run by hand).

    python tests/corpora/result_corpus/cleanroom/import_cleanroom.py /work/cleanroom/resultfiles

A helper that saw only docs/result-files.md, the schema and the examples (never the
checks) wrote faulty files and honest variations with a MANIFEST. This keeps them as
one gzip bundle (``files.jsonl.gz``: name and bytes as latin-1 text, byte for byte) and writes
``manifest.json`` with the exit code ``rlsys result`` must give each:

- faulty: 1 (contradicted) or 3 (not gradable); a few are re-classified (RECLASSIFIED):
  what the adversary took for a fault from the older docs is legal by verl's own code;
- honest: 0, or 4 for an honest failed run. Four honest files claimed the failures the
  older rules derived (a correct SGLang run, dropped readings, a 3 ms resume lead, a
  stalled 0.1 s sampler); a runner now derives passes for them, so their claims are
  re-derived here as the runner writes them (RE_DERIVED) and they must pass.
- RUNNER_IMPOSSIBLE: honest by the older docs, but records the shipped runner cannot write;
- UNDETECTED: faults no rule catches, kept so the corpus says what stays undetectable
  (no exit is asserted, only that nothing crashes).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pytest_rlsys.resultfile import checks as cc  # noqa: E402

RECLASSIFIED = {
    "faulty/rc10_call_6ms_before_subphase.json": (
        0,
        "a call logged 6 ms before its sub-phase is inside the 50 ms allowance",
    ),
    "faulty/rc11_sglang_adapter_missing_weights_claims_pass.json": (
        0,
        "SGLang serving a LoRA adapter never resumes weights (engine_workers.py:775-777)",
    ),
}
RE_DERIVED = {
    "honest/h09_sglang_adapter_kv_only.json",
    "honest/h12_two_readings_dropped.json",
    "honest/h14_resume_call_3ms_early_failed.json",
    "honest/h15_interval_0p1_stall_0p3.json",
}
UNDETECTED = {
    "faulty/cp14_hub_model_unpinned.json": "a null model_revision is no contradiction",
    "faulty/rs23_sampler_stopped_before_end.json": (
        "0.8 s is inside the coverage allowance (3 x 0.25 s + 0.5 s)"
    ),
    # A slower sampler is what a host stalling the child in most intervals leaves too
    # (each stall of an interval skips a tick): refuting it would fail an honest run.
    "faulty/rs04_spacing_twice_interval.json": "every other tick skipped is a stall pattern",
    "faulty/rs24_spacing_28pct_slow.json": "a 28 % wider median spacing is a stall pattern",
}


# Honest by the adversary's reading of the round-2 docs, which did not yet say how the
# runner orders its records; the shipped runner cannot write them (issue 40, its state
# machine in pytest_rlsys/resultfile/runner_states.py): they must be refuted.
RUNNER_IMPOSSIBLE = {
    "honest/h17_release_oom_in_resume_kv.json": "retain ran to completion after release failed",
    "honest/h18_release_init_oom.json": "retain ran to completion after release failed in init",
    "honest/h25_large_monotonic_origin.json": (
        "both groups start at the same instant of the host's clock"
    ),
    "honest/h44_failed_before_score_started.json": (
        "retain ran after release failed, and the failure names a phase release never started"
    ),
}


def main(argv: list[str]) -> int:
    source = Path(argv[0] if argv else "/work/cleanroom/resultfiles")
    entries = json.loads((source / "MANIFEST.json").read_text(encoding="utf-8"))
    manifest: dict[str, dict[str, object]] = {}
    lines: list[str] = []
    for entry in entries:
        name = str(entry["file"])
        data = (source / name).read_bytes()
        want: dict[str, object] = {"what": entry.get("what"), "source": entry.get("source")}
        if name in RE_DERIVED:
            doc = json.loads(data)
            doc["system_decision"]["checks"] = {
                n: r.as_dict() for n, r in cc.derive_checks(doc).items()
            }
            data = json.dumps(doc, separators=(",", ":")).encode()
            want.update(exit=0, note="claims re-derived as the runner writes them")
        elif name in RECLASSIFIED:
            code, why = RECLASSIFIED[name]
            want.update(exit=code, note=f"re-classified honest: {why}")
        elif name in RUNNER_IMPOSSIBLE:
            want.update(exit=[1, 3], note=f"re-classified faulty: {RUNNER_IMPOSSIBLE[name]}")
        elif name in UNDETECTED:
            want.update(exit=None, note=f"undetected: {UNDETECTED[name]}")
        elif entry["set"] == "faulty":
            want.update(exit=[1, 3])
        else:
            want.update(exit=0 if entry["expected"] == "pass" else 4)
        manifest[name] = want
        lines.append(json.dumps({"file": name, "latin1": data.decode("latin-1")}))
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    with gzip.GzipFile(HERE / "files.jsonl.gz", "wb", mtime=0) as out:
        out.write(("\n".join(lines) + "\n").encode())
    print(f"imported {len(manifest)} files into {HERE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
