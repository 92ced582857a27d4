"""``rlsys result --artefacts DIR``: adapters re-hashed, samples checked against the raw log."""

from __future__ import annotations

import copy
import json
import shutil
import struct
from array import array
from pathlib import Path
from typing import Any

import pytest

from pytest_rlsys.cli import main as rlsys
from pytest_rlsys.resources import schema_dir
from pytest_rlsys.resultfile import checks as cc
from pytest_rlsys.resultfile.artefacts import (
    ArtefactError,
    adapter_sha256,
    normalize_lora_name,
    read_samples_jsonl,
)
from pytest_rlsys.resultfile.grade import grade_document, grade_result_file

EXAMPLE: dict[str, Any] = json.loads(
    (schema_dir() / "examples" / "pt-verl-closure.example.json").read_text("utf-8")
)
NAMES = (
    "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight",
    "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight",
    "base_model.model.model.layers.0.mlp.up_proj.lora_A.weight",
)
SHAPES = ((4, 8), (8, 4), (4, 8))
# The hash of the adapter write_adapter(dir, 0) saves, by lora.py's rule (computed
# once with rlsys_closure.lora.adapter_sha256 and torch; pinned so the rule cannot drift).
VECTOR = "06e9154059d05f595f9333857ee1c99ac79fd12f67d66538ebf4678e558fc8b9"


def _values(count: int, salt: int) -> list[float]:
    return [((i * 37 + salt * 11) % 97 - 48) / 64.0 for i in range(count)]


def write_safetensors(
    path: Path, tensors: dict[str, tuple[str, tuple[int, ...], list[float]]]
) -> None:
    """A minimal safetensors writer (the format: u64 header length, JSON header, data)."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    blobs: list[bytes] = []
    offset = 0
    for name, (dtype, shape, values) in tensors.items():
        if dtype == "F32":
            blob = array("f", values).tobytes()
        elif dtype == "F64":
            blob = array("d", values).tobytes()
        elif dtype == "F16":
            blob = struct.pack(f"<{len(values)}e", *values)
        else:  # BF16: the top two bytes of each float32
            f32 = array("f", values).tobytes()
            blob = b"".join(f32[i + 2 : i + 4] for i in range(0, len(f32), 4))
        header[name] = {
            "dtype": dtype,
            "shape": list(shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def write_adapter(folder: Path, salt: int, dtype: str = "F32") -> Path:
    tensors = {
        name: (dtype, shape, _values(shape[0] * shape[1], salt + i))
        for i, (name, shape) in enumerate(zip(NAMES, SHAPES, strict=True))
    }
    tensors["base_model.model.lm_head.weight"] = ("F32", (2, 2), [1.0, 2.0, 3.0, 4.0])
    write_safetensors(folder / "adapter_model.safetensors", tensors)
    return folder


def test_the_hash_rule_matches_the_runner(tmp_path: Path) -> None:
    folder = write_adapter(tmp_path / "a", 0)
    ours = adapter_sha256(folder)
    lora = pytest.importorskip("rlsys_closure.lora")
    pytest.importorskip("safetensors.torch")
    assert ours == lora.adapter_sha256(folder)
    for name in (*NAMES, "_fsdp_wrapped_module.base_model.model.x.lora_B.default.weight"):
        assert normalize_lora_name(name) == lora.normalize_lora_name(name)


@pytest.mark.parametrize("dtype", ["F16", "BF16", "F64"])
def test_every_float_dtype_hashes_as_torch_converts_it(tmp_path: Path, dtype: str) -> None:
    folder = write_adapter(tmp_path / dtype, 3, dtype)
    lora = pytest.importorskip("rlsys_closure.lora")
    pytest.importorskip("safetensors.torch")
    assert adapter_sha256(folder) == lora.adapter_sha256(folder)


def test_the_hash_rule_is_pinned(tmp_path: Path) -> None:
    assert adapter_sha256(write_adapter(tmp_path, 0)) == VECTOR


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"", "shorter than its header"),
        (struct.pack("<Q", 10**9) + b"{}", "header length"),
        (struct.pack("<Q", 2) + b"[]", "not an object"),
        (struct.pack("<Q", 3) + b"{x}", "not JSON"),
    ],
)
def test_a_broken_adapter_file_is_a_clear_error(
    tmp_path: Path, content: bytes, fragment: str
) -> None:
    (tmp_path / "adapter_model.safetensors").write_bytes(content)
    with pytest.raises(ArtefactError, match=fragment):
        adapter_sha256(tmp_path)
    with pytest.raises(ArtefactError, match="no such file"):
        adapter_sha256(tmp_path / "absent")


def test_a_broken_raw_log_is_a_clear_error(tmp_path: Path) -> None:
    log = tmp_path / "samples.jsonl"
    log.write_text('{"t_s": 0.0, "gpu_used_mb": 1}\n[1]\n', encoding="utf-8")
    with pytest.raises(ArtefactError, match=r"samples\.jsonl:2: not a JSON object"):
        read_samples_jsonl(log)


# --------------------------------------------------------------------------- a run's artefacts


RANK = 16  # the example config's lora_rank
LR = 1e-4  # and its learning rate
RUN_SHAPES = {
    "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight": (RANK, 8),
    "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight": (8, RANK),
}


def write_run_adapter(
    folder: Path, label: str, *, b_start: float = 0.0, step: float = LR, rank: int = RANK
) -> Path:
    """An adapter as PEFT and one Adam step leave it: A random-ish, B zero at first,
    and every weight moved by about lr (one step's size) in the update."""
    moved = step if label == "updated" else 0.0
    tensors: dict[str, tuple[str, tuple[int, ...], list[float]]] = {}
    for name, (rows, cols) in RUN_SHAPES.items():
        shape = (rank, cols) if ".lora_A." in name else (rows, rank)
        count = shape[0] * shape[1]
        if ".lora_A." in name:
            values = [v / 8 + moved * (-1) ** i for i, v in enumerate(_values(count, 3))]
        else:
            values = [b_start + moved * (-1) ** i for i in range(count)]
        tensors[name] = ("F32", shape, values)
    write_safetensors(folder / "adapter_model.safetensors", tensors)
    return folder


def make_run(root: Path) -> dict[str, Any]:
    """The example with real adapter hashes, and its artefact folder under root."""
    doc = copy.deepcopy(EXAMPLE)
    for name in ("release", "retain"):
        initial = adapter_sha256(write_run_adapter(root / name / "adapters" / "initial", "initial"))
        updated = adapter_sha256(write_run_adapter(root / name / "adapters" / "updated", "updated"))
    for name, group in doc["groups"].items():
        group["initial_lora_sha256"], group["updated_lora_sha256"] = initial, updated
        lines = [json.dumps(s) for s in group["resource_samples"]]
        (root / name / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert all(r.passed for r in cc.derive_checks(doc).values())
    return doc


def _case(grade: Any, name: str) -> Any:
    (found,) = [c for c in grade.cases if c.id == f"gpu_result.{name}"]
    return found


def test_matching_artefacts_confirm_the_file(tmp_path: Path) -> None:
    doc = make_run(tmp_path)
    grade = grade_document(doc, artefacts=tmp_path)
    assert (grade.score, grade.verdict) == (40.0, "passed")


def test_a_changed_adapter_is_caught_and_shown_where_it_differs(tmp_path: Path) -> None:
    doc = make_run(tmp_path)
    write_run_adapter(tmp_path / "retain" / "adapters" / "updated", "updated", step=LR / 2)
    outcome = _case(grade_document(doc, artefacts=tmp_path), "updated_lora_match")
    assert outcome.status == "failed"
    assert "artefacts: retain's updated_lora_sha256 is" in outcome.message
    assert "but its saved updated adapter hashes to" in outcome.message


def test_samples_dropped_from_the_file_are_caught(tmp_path: Path) -> None:
    doc = make_run(tmp_path)
    retain = doc["groups"]["retain"]
    # Lower the update's peak by deleting its sample, and make the file agree with itself.
    retain["resource_samples"] = [s for s in retain["resource_samples"] if s["t_s"] != 20.75]
    memory = {
        p: (e["actor_memory_start_mb"], e["actor_memory_end_mb"])
        for p, e in retain["phases"].items()
    }
    retain["phases"] = cc.summarize_phases(retain["events"], retain["resource_samples"], memory)
    retain["sampled_gpu_peak_mb"], retain["sampled_gpu_peak_phase"] = cc.whole_run_peak(
        retain["resource_samples"], retain["phases"]
    )
    doc["system_decision"]["measurements"] = cc.derive_measurements(doc)
    assert grade_document(doc).score == 40.0  # self-consistent: the file alone cannot tell
    outcome = _case(grade_document(doc, artefacts=tmp_path), "resource_sampling")
    assert "1 of the raw log's 91 samples are missing from the file" in outcome.message
    assert "20.750 s: 10489 MiB" in outcome.message


def test_a_sample_changed_in_the_file_is_caught(tmp_path: Path) -> None:
    doc = make_run(tmp_path)
    doc["groups"]["release"]["resource_samples"][3]["gpu_used_mb"] = 700
    outcome = _case(grade_document(doc, artefacts=tmp_path), "resource_sampling")
    assert "release: 1 of the file's 92 samples are not in the raw sampler log" in outcome.message


def test_missing_artefacts_leave_the_checks_they_bear_on_unverified(tmp_path: Path) -> None:
    # An absent artefact is missing evidence, not a refutation: never "contradicted".
    doc = make_run(tmp_path)
    (tmp_path / "release" / "adapters" / "initial" / "adapter_model.safetensors").unlink()
    (tmp_path / "retain" / "samples.jsonl").unlink()
    grade = grade_document(doc, artefacts=tmp_path)
    initial = _case(grade, "initial_lora_match")
    # The file's own evidence passes it: its points stay, the finding says what is missing.
    assert (initial.finding, initial.score, initial.status) == ("unverified", 5.0, "passed")
    assert (
        f"release's initial adapter is not there: no "
        f"release/adapters/initial/adapter_model.safetensors under {tmp_path}" in initial.message
    )
    assert "pass --artefacts the folder the run wrote beside its result file" in initial.message
    sampling = _case(grade, "resource_sampling")
    assert f"no retain/samples.jsonl under {tmp_path}" in sampling.message
    assert _case(grade, "updated_lora_match").finding == "confirmed"
    assert grade.verdict == "unverified"


def test_an_unreadable_artefact_is_unverified_and_a_refutation_still_wins(
    tmp_path: Path,
) -> None:
    doc = make_run(tmp_path)
    (tmp_path / "release" / "samples.jsonl").write_text("not json\n", encoding="utf-8")
    grade = grade_document(doc, artefacts=tmp_path)
    sampling = _case(grade, "resource_sampling")
    assert sampling.finding == "unverified"
    assert "release's raw sampler log cannot be checked" in sampling.message
    assert "samples.jsonl:1: not a JSON object" in sampling.message
    assert "pass --artefacts" not in sampling.message  # the folder is the right one
    assert grade.verdict == "unverified"
    # An artefact that was read and disagrees still contradicts the file.
    write_run_adapter(tmp_path / "retain" / "adapters" / "updated", "updated", step=LR / 2)
    assert grade_document(doc, artefacts=tmp_path).verdict == "contradicted"


def test_the_cli_gates_on_artefacts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = make_run(tmp_path / "art")
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert rlsys(["result", str(path), "--artefacts", str(tmp_path / "art")]) == 0
    write_run_adapter(tmp_path / "art" / "release" / "adapters" / "initial", "updated")
    assert rlsys(["result", str(path), "--artefacts", str(tmp_path / "art")]) == 1
    capsys.readouterr()
    assert rlsys(["result", str(path), "--artefacts", str(tmp_path / "nowhere")]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_a_wrong_artefacts_folder_is_unverified_not_a_lie(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The trial's case: the example and an empty folder (e.g. the parent of LABEL.artefacts/).
    empty = tmp_path / "empty"
    empty.mkdir()
    example = schema_dir() / "examples" / "pt-verl-closure.example.json"
    assert rlsys(["result", str(example), "--artefacts", str(empty)]) == 5
    out = capsys.readouterr().out
    assert "false claim" not in out and "verdict: contradicted" not in out
    assert "verdict: unverified (no claim is contradicted" in out
    assert f"no release/adapters/initial/adapter_model.safetensors under {empty}" in out
    assert "(LABEL.artefacts/ for LABEL.json, holding release/ and retain/)" in out
    # An honest run loses no points to a typo in the folder (a second trial's P18).
    assert grade_result_file(example, artefacts=empty).score == grade_result_file(example).score


def test_a_group_that_never_ran_is_an_honest_failure_not_a_false_claim(tmp_path: Path) -> None:
    # Retain died while initialising (out of memory): it saved no adapter and no log.
    doc = make_run(tmp_path)
    retain = doc["groups"]["retain"]
    retain["events"], retain["resume_calls"], retain["phases"] = [], [], {}
    retain["resource_samples"] = [s for s in retain["resource_samples"] if s["t_s"] <= 9.0]
    retain["init"] = {"start_s": 0.0, "end_s": 9.0, "steps": retain["init"]["steps"][:2]}
    retain["updated_lora_sha256"] = None
    retain["update_completed"] = retain["sync_completed"] = False
    retain["sampled_gpu_peak_mb"] = retain["sampled_gpu_peak_phase"] = None
    doc["status"] = "failed"
    doc["failure"] = {
        "group": "retain",
        "phase": "init",
        "type": "OutOfMemoryError",
        "message": "x",
    }
    doc["system_decision"]["measurements"] = cc.derive_measurements(doc)
    doc["system_decision"]["checks"] = {n: r.as_dict() for n, r in cc.derive_checks(doc).items()}
    shutil.rmtree(tmp_path / "retain")
    grade = grade_document(doc, artefacts=tmp_path)
    assert grade.verdict == "failed", [c.message for c in grade.cases if c.score == 0]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert rlsys(["result", str(path), "--artefacts", str(tmp_path)]) == 4


def test_an_adapter_of_another_rank_contradicts_the_config(tmp_path: Path) -> None:
    doc = make_run(tmp_path)
    for label in ("initial", "updated"):
        write_run_adapter(tmp_path / "release" / "adapters" / label, label, rank=8)
    sha = adapter_sha256(tmp_path / "release" / "adapters" / "initial")
    doc["groups"]["release"]["initial_lora_sha256"] = sha
    outcome = _case(grade_document(doc, artefacts=tmp_path), "config_paired")
    assert "LoRA tensor(s) whose shape is not of rank 16" in outcome.message


def test_an_initial_adapter_already_trained_is_caught(tmp_path: Path) -> None:
    doc = make_run(tmp_path)
    for name in ("release", "retain"):
        folder = tmp_path / name / "adapters" / "initial"
        write_run_adapter(folder, "initial", b_start=0.01)
        doc["groups"][name]["initial_lora_sha256"] = adapter_sha256(folder)
    outcome = _case(grade_document(doc, artefacts=tmp_path), "initial_lora_match")
    assert "initial adapter already has non-zero lora_B" in outcome.message


@pytest.mark.parametrize(("step", "caught"), [(LR, False), (3 * LR, False), (100 * LR, True)])
def test_an_update_larger_than_the_learning_rate_allows_is_caught(
    tmp_path: Path, step: float, caught: bool
) -> None:
    doc = make_run(tmp_path)
    for name in ("release", "retain"):
        folder = tmp_path / name / "adapters" / "updated"
        write_run_adapter(folder, "updated", step=step)
        doc["groups"][name]["updated_lora_sha256"] = adapter_sha256(folder)
    outcome = _case(grade_document(doc, artefacts=tmp_path), "updated_lora_match")
    assert ("more than 4 x lr 0.0001" in outcome.message) == caught, outcome.message
