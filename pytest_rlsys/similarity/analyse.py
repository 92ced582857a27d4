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
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import IO

from pytest_rlsys.grading.outcomes import Limits
from pytest_rlsys.messages import Msg
from pytest_rlsys.resources import FUNCTIONS
from pytest_rlsys.similarity import winnow

# The largest reply a child may send: the fingerprints of a 2 MiB file are well under it.
REPLY_BYTES = 64 * 1024 * 1024


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


# Why a file has no signs, in the batch's language (the class page says it).
_WHY = {
    "stopped": Msg("the batch was stopped", "批处理已停止"),
    "slow": Msg("its analysis took over the {s} s limit", "其分析超过了 {s} 秒的时限"),
    "memory": Msg(
        "its analysis ran out of its {mb} MiB or failed", "其分析用尽了 {mb} MiB 内存或失败"
    ),
    "no_answer": Msg("its analysis gave no answer", "其分析没有给出结果"),
}


class Analysis:
    """A child that reads files' code, one request at a time, each under its own deadline
    and the child's memory cap (``limits``).  It is started once and serves file after
    file (a batch worker's: an interpreter start per file doubled a class's time); it is
    killed at a deadline, a crash or ``stop`` (another thread: an interrupted batch), and
    a file that failed in a child that had served others is tried once more in a fresh
    one, so that no file's failure can come from the file before it."""

    def __init__(self, limits: Limits | None = None, lang: str = "en") -> None:
        self.limits = limits or Limits()
        self.lang = lang  # of the reasons it gives
        self.proc: subprocess.Popen[bytes] | None = None
        self.served = 0  # files the running child has answered
        self.stopped = False

    def run(self, data: bytes) -> FileSigns | str:
        """The signs of the file ``data``, or why there are none (a limit, a crash):
        ``limits.load_timeout_s`` of wall-clock time (the largest honest file of the
        corpora takes well under a second, a 2 MiB file of raw tokens a few) and
        ``limits.address_space_mb``."""
        found = self._ask(data)
        if isinstance(found, str) and self.served and not self.stopped:
            self.close()
            found = self._ask(data)  # a fresh child: the failure is this file's own
        return found

    def _ask(self, data: bytes) -> FileSigns | str:
        if self.stopped:
            return _WHY["stopped"].get(self.lang)
        deadline_s = self.limits.load_timeout_s
        try:
            proc = self._child()
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(len(data).to_bytes(8, "big") + data)
            proc.stdin.flush()
            size = int.from_bytes(_read(proc.stdout, 8, time.monotonic() + deadline_s), "big")
            reply = _read(proc.stdout, size, time.monotonic() + deadline_s)
        except TimeoutError:
            self.close()
            return _WHY["slow"].fill(self.lang, {"s": f"{deadline_s:g}"})
        except (OSError, EOFError, ValueError):
            self.close()
            if self.stopped:
                return _WHY["stopped"].get(self.lang)
            return _WHY["memory"].fill(self.lang, {"mb": str(self.limits.address_space_mb)})
        self.served += 1
        try:
            return FileSigns.from_json(reply)
        except (ValueError, KeyError, TypeError):
            self.close()
            return _WHY["no_answer"].get(self.lang)

    def _child(self) -> subprocess.Popen[bytes]:
        if self.proc is None:
            memory, cpu = self.limits.address_space_mb, int(self.limits.load_timeout_s) + 1
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-m", __name__, str(memory), str(cpu)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            self.served = 0
        return self.proc

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None:
            proc.kill()
            proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    pipe.close()

    def stop(self) -> None:
        self.stopped = True
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.kill()


def _read(pipe: IO[bytes], size: int, deadline: float) -> bytes:
    """``size`` bytes from ``pipe`` by ``deadline`` (TimeoutError), EOFError at its end."""
    if size > REPLY_BYTES:
        raise ValueError("reply too big")
    fd, parts, left = pipe.fileno(), [], size
    while left:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise TimeoutError
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def signs_of(data: bytes, limits: Limits | None = None) -> FileSigns | str:
    """The signs of one file's bytes in a child of its own, or why there are none."""
    analysis = Analysis(limits)
    try:
        return analysis.run(data)
    finally:
        analysis.close()


def _main() -> None:
    """The child: its memory cap first, then requests (8-byte length, bytes) from stdin,
    each answered (8-byte length, the signs as JSON) on stdout under a fresh CPU limit."""
    import gc
    import resource

    memory, cpu = int(sys.argv[1]) * 1024 * 1024, int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while len(head := source.read(8)) == 8:
        size = int.from_bytes(head, "big")
        data = source.read(size)[: winnow.MAX_BYTES]
        used = resource.getrusage(resource.RUSAGE_SELF)
        spent = int(used.ru_utime + used.ru_stime) + 1
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        soft = spent + cpu if hard == resource.RLIM_INFINITY else min(spent + cpu, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
        reply = signs_in(data.decode("utf-8", errors="replace")).to_json().encode()
        sink.write(len(reply).to_bytes(8, "big") + reply)
        sink.flush()
        del data, reply
        gc.collect()


if __name__ == "__main__":
    _main()
