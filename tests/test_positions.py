"""Where findings are reported: the statement holding one is rendered alone within its class and
function headers, and must land on the same line and column as in the whole file."""

from __future__ import annotations

import gpuadvisor

#: Tabs, a docstring, a comment and a decorated member before the method that holds the finding,
#: several top-level statements (so that the whole file is not rendered), and a call whose
#: argument continues on the next line.
SOURCE = """\
import torch

A = 1
B = 2
C = 3


class Trainer:
\t\"\"\"Trains.\"\"\"

\tdef setup(self):
\t\tself.device = torch.device("cuda")

\t# between members
\t@staticmethod
\tdef helper(x):
\t\treturn x

\tdef fit(self, loader):
\t\tfor x in loader:
\t\t\ty = x.to(self.device)
\t\t\tprint(
\t\t\t    y.sum().item())
"""


def test_a_finding_inside_a_method_is_placed_as_in_the_whole_file() -> None:
    (finding,) = gpuadvisor.check_source(SOURCE)
    assert (finding.rule, finding.line, finding.column, finding.end_line, finding.end_column) == ("GPU201", 23, 7, 23, 21)


NESTED = """\
import torch

A = 1
B = 2
C = 3


class Trainer:
    # a comment before the first member
    @property
    def loop(self):
        device = torch.device("cuda")

        @torch.no_grad()
        def run(loader):
            for x in loader:
                total = (
                    x.to(device).sum()
                ).item()
        return run
"""


def test_a_finding_in_a_decorated_nested_function_is_placed_as_in_the_whole_file() -> None:
    (finding,) = gpuadvisor.check_source(NESTED)
    assert (finding.rule, finding.line, finding.column, finding.end_line, finding.end_column) == ("GPU201", 17, 24, 19, 24)


def test_a_finding_in_one_method_of_a_long_class_renders_that_method_only(monkeypatch) -> None:
    """The point of placing a finding within its headers alone: in a class of 300 methods, the
    code rendered to place it is the `class` line, the `def` line and the statement, not the
    class (LibCST's positions re-render everything they are asked about)."""
    from gpuadvisor.analysis.findings import positions

    rendered: list[int] = []
    real = positions.MetadataWrapper

    def counting(module, *args, **kwargs):
        rendered.append(len(module.code.splitlines()))
        return real(module, *args, **kwargs)

    monkeypatch.setattr(positions, "MetadataWrapper", counting)
    members = "".join(f"    def helper_{number}(self, x):\n        return x + {number}\n\n" for number in range(300))
    source = SOURCE.replace("class Trainer:\n", "class Trainer:\n" + members.replace("    ", "\t"))
    (finding,) = gpuadvisor.check_source(source)
    assert (finding.rule, finding.line) == ("GPU201", 23 + 900)
    assert rendered and max(rendered) < 12, rendered  # the whole class: over 900 lines
