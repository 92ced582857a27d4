"""What crosses the isolation boundary, as plain records: the child's limits, what one
call or the load did.  No behaviour: the sandbox (``isolation``) fills them, the battery
judges them, the renderers word them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_rlsys.messages import Said


@dataclass(frozen=True)
class Limits:
    """Resource limits for the child; every one is enforced or set by the parent."""

    call_timeout_s: float = 5.0
    load_timeout_s: float = 10.0
    budget_s: float = 45.0
    address_space_mb: int = 1024
    cpu_seconds: int = 60
    file_size_mb: int = 16
    open_files: int = 64
    output_kb: int = 64
    recursion_limit: int = 1000
    # Only used when the grader runs as root: "auto" (a fresh unused uid per child), a user
    # name, or None to keep root.
    child_user: str | None = "auto"


OutcomeKind = Literal[
    "returned",
    "raised",
    "timeout",
    "crashed",
    "protocol",
    "load_failed",
    "missing",
    "grader_error",  # the grader's own settings stopped the call, not the submission
]


@dataclass
class CallOutcome:
    """What one call did, as plain data (the child's objects never reach the parent)."""

    kind: OutcomeKind
    value: Any = None
    args_after: Any = None
    exc_type: str = ""
    value_error: bool = False
    not_implemented: bool = False
    is_exception: bool = True
    message: str = ""
    seconds: float = 0.0
    line: int | None = None  # raised: the submission's line it was raised at, if known
    # The grader's own account (a timeout, a crash, a missing function), as a fact that
    # the outputs word; ``message`` is then its English, for logs and tests.
    said: Said | None = None

    def __post_init__(self) -> None:
        if self.said is not None and not self.message:
            self.message = self.said.text("en")


@dataclass(frozen=True)
class SentCall:
    """A call on its way: the request id and when it was sent (its time limit's start)."""

    ident: int
    started: float


@dataclass
class SubmissionLoad:
    """How loading the learner's file went (``resultfile.loading.LoadedResult`` is a
    result file's)."""

    ok: bool
    functions: dict[str, bool] = field(default_factory=dict)
    stage: str = ""  # syntax | import | timeout | crashed | protocol
    message: str = ""
    line: int | None = None
    exc_type: str = ""  # the exception the import or compile raised, if it raised one
    said: Said | None = None  # ``message`` as a fact (``CallOutcome.said``)

    def __post_init__(self) -> None:
        if self.said is not None and not self.message:
            self.message = self.said.text("en")
