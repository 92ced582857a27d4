"""A result file is read once, without following a link or waiting on a FIFO, and hashed
from the bytes that were graded (``--rlsys-result`` and the loader)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from pytest_rlsys.grading.rubric import Rubric
from pytest_rlsys.resources import schema_dir
from pytest_rlsys.resultfile.loading import Problem, load_result_file
from pytest_rlsys.session import grade_result
from tests.conftest import load_report

EXAMPLE = schema_dir() / "examples" / "pt-verl-closure.example.json"


def test_loader_reads_once_and_hashes_those_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.json"
    shutil.copy(EXAMPLE, path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    opened: list[str] = []
    real_open = os.open

    def counting_open(name: str | os.PathLike[str], *args: int, **kwargs: int) -> int:
        if os.fspath(name) == str(path):
            opened.append(os.fspath(name))
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_open)
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail(f"re-read {self}"))
    section = grade_result(path, Rubric())
    assert opened == [str(path)]
    assert section.sha256 == digest
    assert section.summary["gradable"] is True


def test_an_unreadable_result_still_has_no_hash_and_one_problem(tmp_path: Path) -> None:
    loaded = load_result_file(tmp_path / "absent.json")
    assert loaded.sha256 is None and loaded.problems == (Problem("$", "no such file"),)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"a": NaN}')
    loaded = load_result_file(bad)
    # A file that was read but does not parse is still identified by its digest.
    assert loaded.stage == "parse" and loaded.sha256 == hashlib.sha256(b'{"a": NaN}').hexdigest()
    assert str(loaded.problems[0]).startswith("$.a: NaN is not valid JSON")


def test_a_link_in_a_parent_folder_is_fine(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    shutil.copy(EXAMPLE, real / "run.json")
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)
    assert load_result_file(tmp_path / "alias" / "run.json").ok


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_plugin_result_on_a_fifo_or_link_is_not_gradable_and_does_not_hang(
    pytester: pytest.Pytester, kind: str
) -> None:
    target = pytester.path / "run.json"
    if kind == "fifo":
        os.mkfifo(target)
        expected = "$: not a regular file"
    else:
        target.symlink_to(EXAMPLE)
        expected = "$: is a symbolic link, which is not followed"
    result = pytester.runpytest_subprocess(
        "--rlsys-result", "run.json", "--rlsys-report", "score.json", timeout=120
    )
    assert result.ret == 1
    report = load_report(pytester.path / "score.json")
    assert report["gpu_result"]["gradable"] is False
    assert report["gpu_result"]["errors"][0].startswith(expected)
    assert report["reproducibility"]["result_sha256"] is None
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_sockets_devices_and_odd_names_are_refused_without_reading(tmp_path: Path) -> None:
    import socket

    sock_path = tmp_path / "s.json"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        assert load_result_file(sock_path).problems == (Problem("$", "not a regular file"),)
    assert load_result_file("/dev/zero").problems == (Problem("$", "not a regular file"),)
    assert load_result_file("a\0b").problems[0].message.startswith("not a usable file name")
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "absent.json")
    assert load_result_file(dangling).problems[0].message.startswith("is a symbolic link")


@pytest.mark.parametrize(
    ("encoding", "bom", "says"),
    [
        ("utf-16-le", b"", "UTF-16 LE without a byte order mark"),
        ("utf-16-be", b"", "UTF-16 BE without a byte order mark"),
        ("utf-16-le", b"\xff\xfe", "UTF-16 LE (it starts with that byte order mark)"),
        ("utf-16-be", b"\xfe\xff", "UTF-16 BE (it starts with that byte order mark)"),
        ("utf-32-le", b"", "UTF-32 without a byte order mark"),
        ("utf-32-le", b"\xff\xfe\x00\x00", "UTF-32 LE (it starts with that byte order mark)"),
    ],
)
def test_a_utf16_or_utf32_file_is_named_as_such(
    tmp_path: Path, encoding: str, bom: bytes, says: str
) -> None:
    path = tmp_path / "run.json"
    path.write_bytes(bom + EXAMPLE.read_text(encoding="utf-8").encode(encoding))
    loaded = load_result_file(path)
    assert loaded.stage == "parse"
    (error,) = loaded.errors
    assert says in error and "re-save it as UTF-8" in error, error


@pytest.mark.parametrize(
    ("pointer", "ok"),
    [
        ("https://rlsys.invalid/schemas/pt-verl-closure.v1.json", True),
        ("../schemas/pt-verl-closure.v1.json", True),
        ("https://json-schema.org/draft/2020-12/schema", True),
        ("https://rlsys.invalid/schemas/pt-verl-closure.v2.json", False),
        ("pt-verl-closure/2", False),
    ],
)
def test_a_schema_pointer_must_name_the_version_the_file_declares(
    tmp_path: Path, pointer: str, ok: bool
) -> None:
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    doc = {"$schema": pointer, **doc}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    loaded = load_result_file(path)
    assert loaded.ok == ok, loaded.errors
    if not ok:
        assert loaded.errors[0].startswith("$.$schema: names schema version 2")
