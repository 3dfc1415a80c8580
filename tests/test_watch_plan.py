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


def test_comparisons_and_array_indexes_are_array_work_but_lookups_and_views_are_not() -> None:
    # signal_clusters' `members = features[labels == k]` (a mask and a gather: its costliest line on a GPU) went
    # untimed, its time counted as the script's Python
    source = (
        "members = features[labels == k]\n"
        "rows = table[order]\n"
        "if residual < tol:\n"
        "    pass\n"
        "first = batch[0]\n"
        "tail = x[:, 1:]\n"
        "value = config['lr']\n"
        "if key in cache:\n"
        "    pass\n"
        "if state is None:\n"
        "    pass\n"
        "column = x[None]\n"
    )
    watched = {watch.line: watch.names for watch in watch_plan(cst.parse_module(source))}
    assert watched[1] == ("features", "labels", "k")
    assert watched[2] == ("table", "order")
    assert watched[3] == ("residual", "tol")
    assert not {5, 6, 7, 8, 10, 12} & set(watched)
