"""KeOps formulas: symbolic until reduced, then one kernel that KeOps waits for.

`LazyTensor(x[:, None, :])` and arithmetic on it build an expression and launch nothing. A
reduction (`K.sum(dim=1)`, `K @ b`, `D.argKmin(k, dim=1)`, `K.solve(b)`) or a call of a
`Genred` routine compiles it into one kernel, runs it and waits for it (KeOps' launcher calls
`cuCtxSynchronize()`) before handing back an ordinary tensor or array. Timing a reduction
therefore times its kernel, and its backward pass runs through KeOps and waits the same way.
"""

from __future__ import annotations

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.imports import keyword_arg, positional_arg
from gpuadvisor.analysis.facts.values import Device, Kind, Value, merge_devices


def built_formula(qualname: str, arguments: list[Value | None]) -> Value:
    """The formula a KeOps builder call (one of `kb.FORMULA_BUILDERS`) makes, on the device of
    the arrays it is handed."""
    library = kb.FORMULA_RESULT_LIBRARY[qualname.rsplit(".", 1)[0]]
    devices = [value.device for value in arguments if value is not None and value.kind in (Kind.ARRAY, Kind.FORMULA)]
    device = merge_devices(devices)
    return Value(Kind.FORMULA, library, device or Device.HOST, inferred=device is None)


def combined_formula(operands: list[Value | None]) -> Value | None:
    """Arithmetic with a formula among its operands (`x_i - y_j`, `-D / 2`): another formula, on
    the device any of them names."""
    formulas = [value for value in operands if value is not None and value.kind is Kind.FORMULA]
    if not formulas:
        return None
    known = [value for value in operands if value is not None and value.kind in (Kind.ARRAY, Kind.FORMULA) and not value.inferred]
    device = merge_devices([value.device for value in known])
    return Value(Kind.FORMULA, formulas[0].library, device or Device.HOST, inferred=device is None)


def reduces(method: str, node: cst.Call) -> bool:
    """`formula.method(...)` runs a kernel: a reduction whatever its arguments, or one of the
    methods that reduce when given axis 0 or 1 (`sum(dim=1)`; their default works along the
    vector dimension and gives another formula)."""
    if method in kb.FORMULA_REDUCTIONS:
        return True
    if method not in kb.FORMULA_AXIS_METHODS:
        return False
    axis = keyword_arg(node, "dim") or keyword_arg(node, "axis") or positional_arg(node)
    return isinstance(axis, cst.Integer) and int(axis.value) in kb.FORMULA_REDUCED_AXES


def reduction_result(formula: Value, arguments: list[Value | None]) -> Value | None:
    """The array a run of `formula` hands back, where its inputs live (None when none of them is
    known): computed, and waited for, before the call returns."""
    known = [value.device for value in arguments if value is not None and value.is_array and not value.inferred]
    if not formula.inferred:
        known.append(formula.device)
    device = merge_devices(known)
    if device is None:
        return None
    return Value(Kind.ARRAY, formula.library, device, backward_waits=True)
