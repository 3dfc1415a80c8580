"""The shape every rule takes: a small class with its identity, its test cases and `check`.

Modelled on Fixit: the VALID/INVALID cases live next to the logic they pin down, and the
test suite and the docs collect them from the registry automatically.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

from gpuadvisor.analysis.facts.module_facts import ModuleFacts
from gpuadvisor.analysis.findings.records import Finding, PredictionCandidate, Severity
from gpuadvisor.analysis.prescan import GPU_WORDS

if TYPE_CHECKING:
    from gpuadvisor.prediction.predictor import Prediction

#: Text that must appear in a file for any GPU-framework rule to have something to find.
GPU_LIBRARY_PATTERN = GPU_WORDS


@dataclass(frozen=True)
class Valid:
    """Code that must stay silent under this rule."""

    code: str

    @property
    def source(self) -> str:
        return textwrap.dedent(self.code).strip("\n") + "\n"


@dataclass(frozen=True)
class Invalid:
    """Code that must be flagged, at `line` (1-based, in the dedented code) when given.

    `message`, when given, must appear in the finding's message: it pins what users read.
    `severity`, when given, is the finding's severity where the rule lowers it for this case.
    """

    code: str
    line: int | None = None
    message: str | None = None
    severity: Severity | None = None

    @property
    def source(self) -> str:
        return textwrap.dedent(self.code).strip("\n") + "\n"


@dataclass(frozen=True)
class Report:
    """What a rule says about one node; the engine turns it into a positioned Finding."""

    node: cst.CSTNode
    message: str
    suggestion: str
    end_node: cst.CSTNode | None = None  # report the range node..end_node (e.g. a loop header)
    candidate: PredictionCandidate | None = None  # decided later by a speedup prediction
    #: Lower than the rule's own severity when this case is likely intended (seeded host RNG).
    severity: Severity | None = None


class Rule:
    code: ClassVar[str]
    category: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    summary: ClassVar[str]
    #: The rule's pre-scan needs: regexes over the raw text that must all match for the rule
    #: to possibly fire, built from the tables the facts read (`analysis/prescan.py`); files that
    #: no rule's prefilter accepts are not parsed by LibCST. A rule reading a new kind of fact
    #: declares the words that fact needs; `tests/test_prescan.py` fails when an INVALID case or
    #: a document's example would be skipped.
    prefilter: ClassVar[tuple[str, ...]] = (GPU_LIBRARY_PATTERN,)
    #: Off unless selected by code, prefix, category or ALL (ruff's opt-in rules, e.g. RUF100).
    enabled_by_default: ClassVar[bool] = True
    VALID: ClassVar[list[Valid]] = []
    INVALID: ClassVar[list[Invalid]] = []

    def check(self, facts: ModuleFacts) -> Iterator[Report]:
        raise NotImplementedError

    @classmethod
    def may_conclude(cls, candidate: PredictionCandidate, fastest_cpu_seconds: float) -> bool:
        """Cheap screen before the model is loaded: could any prediction make `conclude` report?

        `fastest_cpu_seconds` is the roofline bound for the operation on the CPU (nothing runs
        faster). Rules that need the CPU time to be large say no when even a pessimistic view
        of that bound is too small.
        """
        return True

    @classmethod
    def conclude(cls, candidate: PredictionCandidate, prediction: Prediction, threshold: float) -> tuple[str, str] | None:
        """For rules that report candidates: (message, suggestion) if the prediction warrants a finding."""
        raise NotImplementedError

    @classmethod
    def combine(cls, findings: list[Finding]) -> Finding:
        """One finding for the concluded findings of one statement line (see `combines_per_line`)."""
        raise NotImplementedError

    #: The rule's predicted findings on one line are merged by `combine` into one.
    combines_per_line: ClassVar[bool] = False
