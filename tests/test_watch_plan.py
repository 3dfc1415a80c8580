"""What `profile` watches on each line: the operands whose shapes it records, never the function
called by attribute (`np.dot` is no array), and the names a line assigns."""

from __future__ import annotations

import libcst as cst

from gpuadvisor.analysis.facts.watch import watch_plan


def test_a_line_watches_its_operands_and_a_called_module_but_not_a_library_function() -> None:
    module = cst.parse_module("import numpy as np\ny = np.dot(a, b)\nz = model(x)\nw = rng.standard_normal(size=n)\n")
    watches = {watch.line: watch for watch in watch_plan(module)}
    assert watches[1].is_import
    assert (watches[2].names, watches[2].targets) == (("np", "a", "b"), ("y",))
    assert watches[3].names == ("model", "x")  # a module called by name: the profiler tells it by its value
    assert watches[4].names == ("rng", "n")
