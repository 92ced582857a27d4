"""``rlsys validate`` and ``rlsys result``: output, exit codes, no tracebacks."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_rlsys.cli import ExitCode
from pytest_rlsys.cli import main as rlsys
from pytest_rlsys.resources import schema_dir

EXAMPLES = schema_dir() / "examples"
EXAMPLE = EXAMPLES / "pt-verl-closure.example.json"
UNPAIRED = EXAMPLES / "pt-verl-closure.v1-unpaired.example.json"
CORPUS = Path(__file__).parents[1] / "corpora" / "result_corpus"
CORPUS_CASES: dict[str, str] = json.loads((CORPUS / "expected.json").read_text("utf-8"))["cases"]


def test_valid_files_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert rlsys(["validate", str(EXAMPLE), str(UNPAIRED)]) == 0
    out = capsys.readouterr().out
    assert f"{EXAMPLE}: ok (pt-verl-closure/1)" in out
    assert out.rstrip().endswith("2 of 2 files valid")


@pytest.mark.parametrize("name", sorted(CORPUS_CASES))
def test_each_corpus_file_gives_one_clear_line(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = CORPUS / name
    assert rlsys(["validate", str(path)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].startswith(f"{path}::$")
    assert CORPUS_CASES[name] in lines[0]
    assert lines[-1] == "0 of 1 file valid"
    assert "Traceback" not in captured.out + captured.err


def test_schema_errors_are_printed_as_file_path_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(EXAMPLE.read_text("utf-8"))
    doc["workload"]["lora_rank"] = 0
    doc["groups"]["retain"]["resource_samples"][1]["t_s"] = -1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    assert rlsys(["validate", str(EXAMPLE), str(bad)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{EXAMPLE}: ok (pt-verl-closure/1)",
        f"{bad}::$.groups.retain.resource_samples[1].t_s: -1 is less than the minimum of 0",
        f"{bad}::$.workload.lora_rank: 0 is less than the minimum of 1",
        "1 of 2 files valid",
    ]


def test_max_errors_caps_the_listing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = json.loads(EXAMPLE.read_text("utf-8"))
    for sample in doc["groups"]["release"]["resource_samples"]:
        sample["gpu_used_mb"] = "x"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    assert rlsys(["validate", str(bad), "--max-errors", "3"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len([line for line in out if "::$" in line]) == 3
    assert "more errors not shown (use --max-errors 0 to see all)" in out[3]


def test_missing_file_directory_and_oversized(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A file that is not there is a usage error (rlsys's one rule for a missing input),
    # named before anything is read; one that is there but unusable is invalid (exit 1).
    nope = tmp_path / "nope.json"
    assert rlsys(["validate", str(nope), str(EXAMPLE)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"rlsys validate: error: {nope}: no such file\n" and not captured.out
    assert rlsys(["validate", str(tmp_path), str(EXAMPLE), "--max-mib", "0.01"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{tmp_path}::$: is a directory, not a result file"
    assert out[1].startswith(f"{EXAMPLE}::$: the file is over the size limit of 10485 bytes")


def test_the_size_limit_names_the_option_only_where_there_is_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trial 5, O3: "(or raise the limit)" was said by commands with no option for it."""
    import importlib.util

    from rlsys_closure.cli import main as closure

    from pytest_rlsys.resultfile.loading import load_result_file

    topology = str(Path(__file__).parents[2] / "examples" / "closure_topology.json")
    for argv in (["validate"], ["result"], ["ledger", topology, "--result"]):
        rlsys([*argv, str(EXAMPLE), "--max-mib", "0.01"])
        said = capsys.readouterr()
        assert "so check it is the right file, or raise the limit with --max-mib" in (
            said.out + said.err
        ), argv
    # Those without --max-mib read at the default limit: lowered here to meet it.
    monkeypatch.setitem(load_result_file.__kwdefaults__, "max_bytes", 4096)
    runs = [lambda: closure(["summary", str(EXAMPLE)])]
    if importlib.util.find_spec("matplotlib") is not None:  # plot checks for it first
        runs.append(lambda: closure(["plot", str(EXAMPLE)]))
    for run in runs:
        assert run() != 0
        said = capsys.readouterr()
        text = said.out + said.err
        assert "over the size limit of 4096 bytes" in text and "raise" not in text, text


def test_json_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert rlsys(["validate", "--json", str(EXAMPLE), str(CORPUS / "nan.json")]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["valid"] is False
    good, bad = payload["files"]
    assert good == {
        "file": str(EXAMPLE),
        "valid": True,
        "schema_version": "pt-verl-closure/1",
        "schema_id": "https://rlsys.invalid/schemas/pt-verl-closure.v1.json",
        "stage": "ok",
        "sha256": hashlib.sha256(EXAMPLE.read_bytes()).hexdigest(),
        "errors": [],
    }
    assert bad["valid"] is False and bad["stage"] == "parse"
    assert bad["errors"][0]["path"] == "$.groups.release.resource_samples[84].gpu_used_mb"
    assert bad["errors"][0]["message"].startswith("NaN is not valid JSON")


def test_json_errors_are_path_message_objects_and_all_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(EXAMPLE.read_text("utf-8"))
    for sample in doc["groups"]["release"]["resource_samples"]:
        sample["gpu_used_mb"] = -1
    doc["run_label"] = "a label\n"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    # --max-errors shortens the text only; the JSON lists every error.
    assert rlsys(["validate", "--json", "--max-errors", "1", str(bad)]) == 1
    (record,) = json.loads(capsys.readouterr().out)["files"]
    samples = len(doc["groups"]["release"]["resource_samples"])
    assert len(record["errors"]) == samples + 1
    assert all(set(error) == {"path", "message"} for error in record["errors"])
    assert record["errors"][0] == {
        "path": "$.groups.release.resource_samples[0].gpu_used_mb",
        "message": "-1 is less than the minimum of 0",
    }
    assert record["errors"][-1]["path"] == "$.run_label"
    # The same records, rendered as text, one line each.
    assert rlsys(["validate", str(bad), "--max-errors", "0"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:-1] == [f"{bad}::{e['path']}: {e['message']}" for e in record["errors"]]


def test_text_output_keeps_one_problem_on_one_inert_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(EXAMPLE.read_text("utf-8"))
    # Free-form keys whose values are checked: the key itself becomes part of the path.
    doc["environment"]["packages"] = {"x\n\x1b[31mok": 1, "\x1b]0;t\x07": 2}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    assert rlsys(["validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    lines = out.splitlines()
    assert len(lines) == 3 and lines[-1] == "0 of 1 file valid"
    assert all(line.startswith(f"{bad}::$.") for line in lines[:2])
    assert "\\x1b" in lines[0] + lines[1]


def test_symlink_is_refused_and_fifo_does_not_hang(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(EXAMPLE)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert rlsys(["validate", str(link), str(fifo), str(EXAMPLE)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{link}::$: is a symbolic link, which is not followed; give the")
    assert out[1] == f"{fifo}::$: not a regular file"
    assert out[2] == f"{EXAMPLE}: ok (pt-verl-closure/1)"


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert rlsys(["validate"]) == ExitCode.USAGE
    assert "rlsys validate: error:" in capsys.readouterr().err
    assert rlsys(["validate", str(EXAMPLE), "--max-mib", "-1"]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "argument --max-mib: '-1': must be a positive number" in err
    assert rlsys(["validate", str(EXAMPLE), "--max-errors", "x"]) == ExitCode.USAGE
    assert "--max-errors" in capsys.readouterr().err


def test_an_extra_argument_is_the_commands_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Trial 5, O5: "rlsys: error: unrecognized arguments" named the root, not the command.
    assert rlsys(["result", str(EXAMPLE), str(EXAMPLE)]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"rlsys result: error: unrecognized arguments: {EXAMPLE}"), err
    assert rlsys(["validate", str(EXAMPLE), "--bogus"]) == ExitCode.USAGE
    assert capsys.readouterr().err.startswith("rlsys validate: error: unrecognized arguments")


def test_exit_codes_have_one_vocabulary(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_rlsys.cli.validate import RESULT_EXIT_CODES

    # The numbers rlsys result documents, by name.
    assert RESULT_EXIT_CODES == {
        "passed": ExitCode.OK,
        "contradicted": ExitCode.CONTRADICTED,
        "not_gradable": ExitCode.NOT_GRADABLE,
        "failed": ExitCode.HONEST_FAILURE,
        "unverified": ExitCode.UNVERIFIED,
    }
    assert [
        int(RESULT_EXIT_CODES[v]) for v in ("contradicted", "not_gradable", "failed", "unverified")
    ] == [1, 3, 4, 5]
    assert rlsys(["result", "--help"]) == ExitCode.OK
    out = capsys.readouterr().out
    assert "  3  not gradable" in out and "  4  an honest record" in out
    assert "  5  unverified" in out
    assert rlsys(["validate", "--help"]) == ExitCode.OK
    out = capsys.readouterr().out
    assert "  1  a file is invalid" in out and "  4 " not in out


def test_result_prints_the_check_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert rlsys(["result", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"gpu_result: {EXAMPLE}\n")
    assert "gpu_result.resource_sampling     passed  5/5" in out
    assert "total 40/40 (8 of 8 checks passed)" in out
    assert "notes:" in out and "is in initial_sync, not in the update" in out


def test_result_of_an_unpaired_run_is_gradable_but_loses_points(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 4: an honest record of a failed run (every claim matches, some checks fail).
    assert rlsys(["result", str(UNPAIRED), "--points", "2"]) == 4
    out = capsys.readouterr().out
    assert "gpu_result.config_paired         failed  0/2" in out
    assert "total 10/16 (5 of 8 checks passed)" in out


def test_result_of_an_invalid_file_exits_3_and_lists_errors_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = CORPUS / "missing_group.json"
    assert rlsys(["result", str(path)]) == 3
    out = capsys.readouterr().out
    assert "not gradable: 0/40; errors:" in out
    assert out.count('"retain" is a required property') == 1, out
    assert f'  {path}::$.groups: "retain" is a required property' in out


def test_result_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert rlsys(["result", str(EXAMPLE), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["gradable"] is True and payload["score"] == payload["max_score"] == 40.0
    assert [c["status"] for c in payload["cases"]] == ["passed"] * 8


def test_result_rejects_bad_points(capsys: pytest.CaptureFixture[str]) -> None:
    assert rlsys(["result", str(EXAMPLE), "--points", "nan"]) == ExitCode.USAGE
    assert "argument --points: 'nan': must be a positive number" in capsys.readouterr().err


def test_through_the_rlsys_dispatcher_without_traceback() -> None:
    files = [str(CORPUS / name) for name in sorted(CORPUS_CASES)] + [str(CORPUS)]
    done = subprocess.run(
        [sys.executable, "-m", "pytest_rlsys", "validate", *files],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stdout.rstrip().endswith(f"0 of {len(files)} files valid")
    graded = subprocess.run(
        [sys.executable, "-m", "pytest_rlsys", "result", str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert graded.returncode == 0, graded.stderr
    assert "total 40/40" in graded.stdout
