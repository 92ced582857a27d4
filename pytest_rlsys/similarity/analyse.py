"""One file's code signs (fingerprints, sentences, what it spells), read in a child process
of its own under a deadline and a memory cap.

Parsing runs no learner code, but its cost is the learner's choice: a never-called function
nested deep enough made the rewrite's cost grow with the cube of its depth, and one 82 KB
file once kept ``rlsys batch`` from writing any output for anyone.  So the parent never
parses learner bytes: ``signs_of`` hands them to ``python -I -m
pytest_rlsys.similarity.analyse``, which caps its own address space and CPU time before it
reads them, and is killed at its deadline: the grading child's own limits (``Limits``: the
time it is given to load a file, its address space), since reading a file costs less than
loading it.  A file that exceeds a limit gets the reason
instead of signs ("not compared: ..."); every other file is compared as usual.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.resources import FUNCTIONS
from pytest_rlsys.similarity import winnow


@dataclass(frozen=True)
class FileSigns:
    """What the code of one file shows, before it is compared with anything.
    ``prints``: its winnowed fingerprints (the template's still in); ``said``: its
    sentences; ``runs``: it reaches what runs code built at run time; ``named``: the
    exercise's functions its names or strings contain; ``parsed``: its code could be read
    (after repair), so ``runs`` and ``named`` mean something."""

    prints: frozenset[int]
    said: frozenset[int]
    runs: bool
    named: frozenset[str]
    parsed: bool

    def to_json(self) -> str:
        return json.dumps(
            {
                "prints": sorted(self.prints),
                "said": sorted(self.said),
                "runs": self.runs,
                "named": sorted(self.named),
                "parsed": self.parsed,
            }
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> FileSigns:
        doc = json.loads(text)
        return cls(
            frozenset(int(v) for v in doc["prints"]),
            frozenset(int(v) for v in doc["said"]),
            bool(doc["runs"]),
            frozenset(str(v) for v in doc["named"]) & frozenset(FUNCTIONS),
            bool(doc["parsed"]),
        )


def readable_code(text: str) -> str:
    """``text`` repaired and with the code its strings hold (``text`` if that fails)."""
    try:
        return winnow.with_embedded(winnow.repaired(text))
    except (ValueError, RecursionError, MemoryError):
        return text


def signs_in(source: str) -> FileSigns:
    """The signs of ``source``, in this process (the child's side; tests and the
    calibration scripts call it on trusted files)."""
    code = readable_code(source)
    found = winnow.spelled(code)
    names, texts, runs = found if found is not None else (frozenset(), frozenset(), False)
    words = [*names, *texts]
    return FileSigns(
        prints=winnow.fingerprints(code),
        said=winnow.sentences(code, winnow.template_text()),
        runs=runs,
        named=frozenset(f for f in FUNCTIONS if any(f in word for word in words)),
        parsed=found is not None,
    )


class Analysis:
    """One file's analysis in a bounded child; ``stop`` (another thread: an interrupted
    batch) kills it at once."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.stopped = False

    def run(self, data: bytes, limits: Limits | None = None) -> FileSigns | str:
        """The signs of the file ``data``, or why there are none (a limit, a crash):
        ``limits.load_timeout_s`` of wall-clock time (the largest honest file of the
        corpora takes well under a second, a 2 MiB file of raw tokens a few) and
        ``limits.address_space_mb``."""
        limits = limits or Limits()
        deadline_s, memory = limits.load_timeout_s, limits.address_space_mb
        if self.stopped:
            return "the batch was stopped"
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-m", __name__, str(memory), str(int(deadline_s) + 1)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            out, _ = self.proc.communicate(data, timeout=deadline_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            return f"its analysis took over the {deadline_s:g} s limit"
        finally:
            if self.proc.poll() is None:  # interrupted (Ctrl-C): nothing outlives us
                self.proc.kill()
                self.proc.wait()
        if self.proc.returncode != 0:
            if self.stopped:
                return "the batch was stopped"
            code = self.proc.returncode
            return f"its analysis ran out of its {memory} MiB or failed (exit {code})"
        try:
            return FileSigns.from_json(out)
        except (ValueError, KeyError, TypeError):
            return "its analysis gave no answer"

    def stop(self) -> None:
        self.stopped = True
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.kill()


def signs_of(data: bytes, limits: Limits | None = None) -> FileSigns | str:
    """``Analysis().run``: the signs of one file's bytes, or why there are none."""
    return Analysis().run(data, limits)


def _main() -> None:
    """The child: limits first, then the bytes from stdin, the signs as JSON on stdout."""
    import resource

    memory, cpu = int(sys.argv[1]) * 1024 * 1024, int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    data = sys.stdin.buffer.read(winnow.MAX_BYTES + 1)[: winnow.MAX_BYTES]
    signs = signs_in(data.decode("utf-8", errors="replace"))
    sys.stdout.write(signs.to_json())


if __name__ == "__main__":
    _main()
