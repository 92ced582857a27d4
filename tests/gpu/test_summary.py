"""`rlsys closure summary`: the system view of the shipped example, and bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rlsys_closure import cli

from pytest_rlsys.resources import schema_dir

EXAMPLE = Path(schema_dir()) / "examples" / "pt-verl-closure.example.json"


def _row(text: str, group: str, phase: str) -> list[str]:
    block = text.split(f"group {group} ")[1].split("\ngroup ")[0]
    line = next(ln for ln in block.splitlines() if ln.strip().startswith(phase + " "))
    return line.split()


def test_example_shows_the_chapters_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["summary", str(EXAMPLE), "--view", "system"]) == 0
    out = capsys.readouterr().out
    assert _row(out, "release", "update") == ["update", "1.367", "5", "6392"]
    assert _row(out, "retain", "update") == ["update", "1.345", "6", "10489"]
    release = out.split("group release ")[1].split("\ngroup ")[0]
    retain = out.split("group retain ")[1]
    assert "whole-run sampled peak: 10086 MiB in initial_sync" in release
    assert "whole-run sampled peak: 10489 MiB" in retain
    # Release's rollout/score phases have no sample: shown as a dash, never 0.
    for phase in (
        "rollout_before_update",
        "score_before_update",
        "rollout_after_update",
        "score_after_update",
    ):
        assert _row(out, "release", phase)[2:] == ["0", "—"]
    assert not re.search(
        r"\s0\s*$", release.split("whole-run")[0].split("\n", 2)[2], re.MULTILINE
    ), "a null peak printed as 0"
    assert "checks (8/8 pass on the evidence)" in out
    assert "not the KV-cache size" in out and "speed-up" in out


def test_json_view_keeps_null_peaks(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["summary", str(EXAMPLE), "--json"]) == 0
    view = json.loads(capsys.readouterr().out)
    rel = view["groups"]["release"]
    assert rel["phases"]["update"] == {
        "duration_s": 1.367,
        "sample_count": 5,
        "sampled_gpu_peak_mb": 6392,
    }
    assert rel["phases"]["score_before_update"]["sampled_gpu_peak_mb"] is None
    assert (rel["sampled_gpu_peak_mb"], rel["sampled_gpu_peak_phase"]) == (10086, "initial_sync")
    assert all(c["derived"] for c in view["checks"].values())


def test_a_false_claim_is_marked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(EXAMPLE.read_text())
    doc["groups"]["retain"]["resume_calls"] = [
        {"t_s": doc["groups"]["retain"]["events"][0]["t_s"], "tags": ["weights"]}
    ]
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(doc))
    assert cli.main(["summary", str(path)]) == 0
    out = capsys.readouterr().out
    assert "[FAIL] resume_calls" in out and "false claim" in out


@pytest.mark.parametrize(
    "content,expect",
    [
        ("{not json", ""),
        ('{"a": NaN}', ""),
        ("[1, 2]", "JSON object"),
        ('{"hello": "world"}', "schema_version"),
        ('{"schema_version": "pt-verl-closure/9"}', "known versions"),
        ('{"schema_version": "pt-verl-closure/1"}', "required"),
    ],
)
def test_bad_input_is_one_clear_message(
    content: str | None, expect: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "result.json"
    if content is not None:
        path.write_text(content)
    rc = cli.main(["summary", str(path)])
    captured = capsys.readouterr()
    assert rc == 1
    assert captured.out == ""
    assert captured.err.startswith("summary: ") and "not a valid result file" in captured.err
    assert expect in captured.err
    assert "Traceback" not in captured.err


def test_a_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["summary", str(tmp_path)]) == 1
    assert "directory" in capsys.readouterr().err


def test_unknown_view_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["summary", str(EXAMPLE), "--view", "ledger"]) == 2
    assert "invalid choice" in capsys.readouterr().err
