"""The round-4 clean-room corpus (issue 32): 71 faulty and 25 honest result files written by
a tester who read the docs, the schema, the runner and verl's and vLLM's sources, never
the checks. faulty/README.md gives each faulty file's one mistake; an honest file whose
name holds ``_fail_`` records a failed run honestly.

Every faulty file is flagged (exit 1, or 3 when the schema refuses it), every honest
completed run passes (exit 0), every honest failure exits 4, and no command raises.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from rlsys_closure.cli import main as closure_main

from pytest_rlsys.cli import main as rlsys

HERE = Path(__file__).parent / "result_corpus" / "cleanroom_round4"
FILES = sorted(p.relative_to(HERE).as_posix() for p in HERE.glob("*/*.json.gz"))


def _want(name: str) -> tuple[int, ...]:
    kind, file = name.split("/")
    if kind == "faulty":
        return (1, 3)
    return (4,) if "_fail_" in file else (0,)


def test_the_corpus_holds_every_file_the_tester_wrote() -> None:
    faulty = [n for n in FILES if n.startswith("faulty/")]
    honest = [n for n in FILES if n.startswith("honest/")]
    assert len(faulty) == 71 and len(honest) == 25
    # Each faulty file's mistake is written down (README.md lists it by name).
    readme = (HERE / "faulty" / "README.md").read_text("utf-8")
    assert [n for n in faulty if f"`{Path(n).name[: -len('.gz')]}`" not in readme] == []


@pytest.mark.parametrize("name", FILES)
def test_each_file_gets_the_exit_code_its_kind_must(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = tmp_path / Path(name).name[: -len(".gz")]
    path.write_bytes(gzip.decompress((HERE / name).read_bytes()))
    code = rlsys(["result", str(path)])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert code in _want(name), out.out[-3000:]
    # The other commands that read a result file never raise on it either.
    rlsys(["validate", str(path)])
    closure_main(["summary", str(path)])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
