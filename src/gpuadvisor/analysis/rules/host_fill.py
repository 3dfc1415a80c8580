"""Tensors filled on the host: which factory call a copied expression was built from.

GPU102 reports a host fill copied to the GPU where it repeats; GPU101 leaves such copies to it
(one finding per copy: "create it on the GPU" is the better fix than "hoist the copy").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.imports import dotted_name
from gpuadvisor.analysis.facts.module_facts import CallFact, Context, FunctionFacts, ModuleFacts
from gpuadvisor.analysis.facts.values import Device, Kind
from gpuadvisor.analysis.rules.common import last_assignment

#: Factories that fill a tensor on the host unless given `device=`.
HOST_FILLS = kb.TORCH_HOST_FILLS | frozenset(
    f"torch.{name}" for name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window")
)
#: NumPy factories: always on the host.
NUMPY_FILLS = frozenset(f"numpy.{name}" for name in ("zeros", "ones", "full", "empty", "eye", "identity", "arange", "linspace"))
#: Factories that draw from the CPU random generator unless given `device=` (NumPy's always).
HOST_DRAWS = frozenset(f"torch.{name}" for name in ("rand", "randn", "randint", "randperm", "normal", "bernoulli")) | frozenset(
    f"numpy.random.{name}"
    for name in (
        "rand", "randn", "random", "random_sample", "uniform", "normal", "standard_normal", "randint",
        "choice", "permutation", "binomial", "poisson", "beta", "gamma", "exponential", "laplace",
    )
)
_FACTORIES = HOST_FILLS | NUMPY_FILLS | HOST_DRAWS
#: Methods that view or tile the fill on the host (`torch.eye(n).unsqueeze(0)`): still a fill, made where it is.
_RESHAPES = kb.RESHAPING_METHODS | frozenset({"expand", "expand_as", "repeat"})
#: Triangles of a fill (`torch.ones(L, L).triu(1)`, a causal mask): computed where the fill is.
_TRIANGLES = frozenset({"triu", "tril"})
#: Methods of a fill whose result is made where the fill is.
_FILL_METHODS = kb.DTYPE_CASTS | _RESHAPES | _TRIANGLES
#: How far a name is followed back to the assignment that made it.
_MAX_HOPS = 3


@dataclass(frozen=True)
class HostFill:
    factory: CallFact
    random: bool
    #: Where the fill is made when that is not where its factory is called: the join of
    #: `torch.cat([torch.arange(b) for _ in range(n)])` fills once, not per item.
    joined_at: Context | None = None

    @property
    def ctx(self) -> Context:
        return self.joined_at or self.factory.ctx


def _names_device(arg: cst.BaseExpression, facts: ModuleFacts) -> bool:
    """Is this `.to()` argument a device (`device`, `x.device`, `"cuda:0"`, `torch.device(...)`)?"""
    value = facts.value(arg)
    if value is not None and value.kind is Kind.DEVICE:
        return value.device is not Device.HOST  # `torch.device("cpu")` is a device, not the GPU
    if isinstance(arg, cst.SimpleString):
        return arg.raw_value.startswith(("cuda", "mps", "xpu"))  # raw: an unknown \N{...} escape must not raise
    if isinstance(arg, cst.Call):
        return facts.imports.qualified_name(arg.func) == "torch.device" if isinstance(arg.func, (cst.Name, cst.Attribute)) else False
    name = dotted_name(arg) if isinstance(arg, (cst.Name, cst.Attribute)) else None
    if name is None:
        return False
    last = name.rsplit(".", 1)[-1].lower()
    return "device" in last or last in ("dev", "cuda")


def _device_argument(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "device":
            return arg.value
    positional = [arg.value for arg in call.args if arg.keyword is None]
    return positional[0] if positional else None


def moves_to_device(call: CallFact, facts: ModuleFacts) -> bool:
    if call.method == "cuda":
        return True
    if call.method == "type":  # x.type(torch.cuda.FloatTensor), or a `Tensor` alias of it
        tensor_type = facts.value(call.node.args[0].value) if call.node.args else None
        return tensor_type is not None and tensor_type.kind is Kind.TENSOR_TYPE and tensor_type.on_gpu
    if call.method != "to":
        return False
    if call.result is not None and call.result.on_gpu:
        return True
    target = _device_argument(call.node)
    return target is not None and _names_device(target, facts)


#: The torch call that makes on the GPU what a NumPy factory makes on the host.
_TORCH_EQUIVALENTS = {
    "numpy.random.normal": "torch.randn", "numpy.random.randn": "torch.randn", "numpy.random.standard_normal": "torch.randn",
    "numpy.random.rand": "torch.rand", "numpy.random.random": "torch.rand", "numpy.random.random_sample": "torch.rand",
    "numpy.random.uniform": "torch.rand", "numpy.random.randint": "torch.randint", "numpy.random.permutation": "torch.randperm",
    "numpy.random.shuffle": "torch.randperm",
    "numpy.identity": "torch.eye",
}


#: NumPy draws with no torch factory: the `torch.distributions` class that samples them.
_DISTRIBUTIONS = {
    f"numpy.random.{name}": name.capitalize() for name in ("binomial", "poisson", "beta", "gamma", "exponential", "laplace")
}
#: Draws whose GPU form is not the same call with `device=`.
_GPU_FORMS = {
    "torch.tensor": "`torch.full((n,), value, device=...)`",
    "builtins.range": "`torch.arange(start, stop, device=...)`",
    "numpy.random.choice": "`torch.multinomial(probs, n, replacement=True)` with `probs` on the GPU "
    "(`torch.randint(..., device=...)` for a uniform choice)",
}


def gpu_call(qualname: str | None, random: bool = False) -> str:
    """The call to write instead of a host factory, as shown in a fix."""
    if qualname is not None and qualname.startswith("torch.") and qualname.endswith("Tensor"):
        # `torch.FloatTensor(b, n).fill_(0)`: a legacy typed constructor refuses a GPU device
        made = "`torch.empty(..., dtype=..., device=...)` and the same in-place draw" if random else "`torch.zeros(..., dtype=..., device=...)`"
        return f"{made} (a legacy typed constructor such as `torch.FloatTensor` takes no GPU device)"
    if qualname in _DISTRIBUTIONS:
        # `np.random.binomial(1, p, size)`: no torch factory takes `device=`; a distribution draws where its parameters are
        return f"`torch.distributions.{_DISTRIBUTIONS[qualname]}(...)` built from GPU tensors, then `.sample(shape)`"
    return _GPU_FORMS.get(qualname or "", f"`{gpu_factory(qualname)}(..., device=...)`")


def gpu_factory(qualname: str | None) -> str:
    """What to call instead of a host factory: the same torch factory with `device=`."""
    name = qualname or "torch.empty"
    if name in _TORCH_EQUIVALENTS:
        return _TORCH_EQUIVALENTS[name]
    return "torch." + name.rsplit(".", 1)[-1] if name.startswith("numpy.") else name


def copied_by_constructor(call: CallFact, facts: ModuleFacts) -> cst.BaseExpression | None:
    """The data `Tensor(data)` copies to the GPU when `Tensor` is a CUDA tensor class
    (`torch.cuda.FloatTensor`, or an alias that may be one); None for other calls and for
    `Tensor(n, m)`, which allocates on the device."""
    if not call.node.args or call.node.args[0].keyword is not None:
        return None
    callee = facts.value(call.node.func)
    if callee is None or callee.kind is not Kind.TENSOR_TYPE or not callee.on_gpu:
        return None
    first = call.node.args[0].value
    data = facts.value(first)
    return first if data is not None and data.is_array else None


def host_fill(
    expr: cst.BaseExpression, call: CallFact, facts: ModuleFacts, hops: int = 0, scope: FunctionFacts | None = None
) -> HostFill | None:
    """The host factory call `expr` is built from: through dtype casts, views, arithmetic with
    numbers or with other fills (`arange(n) == arange(n).unsqueeze(1)`), concatenations of fills
    and (a few hops back) the assignment of a name in the function `expr` is in (`scope`, the
    copy's own function unless a helper's return was followed)."""
    scope = scope or call.ctx.function
    if isinstance(expr, cst.Call):
        made = facts.call_of.get(expr)
        if made is None:
            return None
        if made.qualname in _FACTORIES:
            if made.keyword("device") is not None:
                return None
            return HostFill(made, made.qualname in HOST_DRAWS)
        tensor_class = facts.value(expr.func)
        host_class = tensor_class is not None and tensor_class.kind is Kind.TENSOR_TYPE and not tensor_class.on_gpu
        wrapped = made.qualname in kb.DATA_WRAPPERS or host_class  # torch.FloatTensor(np.zeros(n)) stays on the host
        if wrapped and expr.args and made.keyword("device") is None:
            if _repeated_number(expr.args[0].value, call, facts):
                return HostFill(made, False)  # torch.tensor([t] * b): a host `torch.full((b,), t)`
            counted = _python_range(expr.args[0].value, facts)
            if counted is not None:
                return HostFill(counted, False)  # torch.LongTensor(range(b)): a host `torch.arange(b)`
            return host_fill(expr.args[0].value, call, facts, hops, scope)  # torch.from_numpy(np.zeros(n))
        if isinstance(expr.func, cst.Attribute) and made.method in _IN_PLACE_FILLS | _IN_PLACE_DRAWS:
            allocated = _allocated_on_host(expr.func.value, facts)
            if allocated is not None:  # torch.FloatTensor(b, n).zero_(), torch.empty(b, n).uniform_()
                return HostFill(allocated, made.method in _IN_PLACE_DRAWS)
        if isinstance(expr.func, cst.Attribute) and made.method == "type" and moves_to_device(made, facts):
            return None  # x.type(torch.cuda.FloatTensor) is itself the copy
        method_of_fill = made.method in _FILL_METHODS and made.qualname is None  # (not `torch.triu(t)`)
        if isinstance(expr.func, cst.Attribute) and (method_of_fill or (made.method == "to" and not moves_to_device(made, facts))):
            return host_fill(expr.func.value, call, facts, hops, scope)
        if (_maps_elements(made) or _takes_a_triangle(made)) and made.keyword("out") is None:
            return host_fill(expr.args[0].value, call, facts, hops, scope)  # torch.exp(-c * torch.arange(n)): computed where filled
        if made.qualname in _JOINS and expr.args and expr.args[0].keyword is None:
            return _joined_fills(expr.args[0].value, made, call, facts, hops, scope)  # torch.cat([torch.arange(b)] * 2)
        helper = _returned_call(expr.func, facts) if hops < _MAX_HOPS else None
        return host_fill(helper[0], call, facts, hops + 1, helper[1]) if helper is not None else None
    if isinstance(expr, (cst.BinaryOperation, cst.Comparison)):
        sides = (expr.left, expr.right) if isinstance(expr, cst.BinaryOperation) else _compared(expr)
        if sides is None:
            return None
        for side, other in (sides, sides[::-1]):
            found = host_fill(side, call, facts, hops, scope)
            if found is None:
                continue
            if _is_scalar(other, call.ctx, facts) or _is_count(other, call, facts):
                return found
            with_other = host_fill(other, call, facts, hops, scope)  # two fills combined are made where they are
            return None if with_other is None else replace(found, random=found.random or with_other.random)
        return None
    if isinstance(expr, cst.Name) and hops < _MAX_HOPS:
        value = facts.value(expr)
        if value is None or not value.is_array or value.on_gpu or not value.generated:
            return None  # not a host fill any more once host code wrote into it (`kernel(out)`)
        # the assignment before this use of the name: `labels = labels == labels.T` reads the earlier one
        before = expr if scope is call.ctx.function else call.node
        assigned = last_assignment(expr.value, before, scope, facts)
        return host_fill(assigned, call, facts, hops + 1, scope) if assigned is not None else None
    return None


_JOINS = frozenset(f"{library}.{name}" for library in ("torch", "numpy") for name in kb.JOINS)
#: In-place methods that overwrite every element of the tensor they are called on with a constant
#: or with random draws: on a tensor just allocated on the host, the fill happens there.
_IN_PLACE_FILLS = frozenset({"fill_", "zero_"})
_IN_PLACE_DRAWS = frozenset({"uniform_", "normal_", "random_", "bernoulli_", "exponential_", "geometric_", "cauchy_", "log_normal_"})


_SEQUENCE_LITERALS = (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp, cst.Set, cst.Dict)


def _allocated_on_host(expr: cst.BaseExpression, facts: ModuleFacts) -> CallFact | None:
    """A tensor allocated on the host by its sizes: a legacy typed constructor handed only sizes
    (`torch.FloatTensor(batch, n)`, older PyTorch code's `torch.zeros`), or an allocating
    factory given no device (`torch.empty(batch, n)`)."""
    if not isinstance(expr, cst.Call):
        return None
    made = facts.call_of.get(expr)
    if made is None or made.keyword("device") is not None or not expr.args:
        return None
    if made.qualname in _FACTORIES:
        return made
    tensor_class = facts.value(expr.func)
    if tensor_class is None or tensor_class.kind is not Kind.TENSOR_TYPE or tensor_class.on_gpu:
        return None
    if any(arg.keyword is not None or arg.star or isinstance(arg.value, _SEQUENCE_LITERALS) for arg in expr.args):
        return None
    values = [facts.value(arg.value) for arg in expr.args]
    if any(value is not None and value.kind is not Kind.NUMBER for value in values):
        return None  # `torch.FloatTensor(array)`: data, not sizes
    # Handed data, the constructor takes one argument: two or more are sizes, one must be a number.
    return made if len(values) > 1 or values[0] is not None else None


def _joined_fills(
    parts: cst.BaseExpression, join: CallFact, call: CallFact, facts: ModuleFacts, hops: int, scope: FunctionFacts
) -> HostFill | None:
    """The first fill of `[fill, fill]`, `[fill] * 2` or `[fill for _ in range(n)]` when every part
    is a host fill: their join is one too."""
    if isinstance(parts, cst.BinaryOperation) and isinstance(parts.operator, cst.Multiply) and isinstance(parts.left, cst.List):
        parts = parts.left
    if isinstance(parts, (cst.ListComp, cst.GeneratorExp)) and parts.for_in.inner_for_in is None:
        item = host_fill(parts.elt, call, facts, hops, scope)
        return None if item is None else replace(item, joined_at=join.ctx)
    if not isinstance(parts, (cst.List, cst.Tuple)) or not parts.elements:
        return None
    fills = [host_fill(element.value, call, facts, hops, scope) for element in parts.elements]
    if any(fill is None for fill in fills) or any(isinstance(element, cst.StarredElement) for element in parts.elements):
        return None
    first = fills[0]
    assert first is not None
    return replace(first, random=any(fill is not None and fill.random for fill in fills))


def _compared(comparison: cst.Comparison) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """The two sides of `a == b` (one comparison, not a chain)."""
    if len(comparison.comparisons) != 1:
        return None
    return comparison.left, comparison.comparisons[0].comparator


def _python_range(expr: cst.BaseExpression, facts: ModuleFacts) -> CallFact | None:
    """The `range(...)` call a tensor is built from (`range(b)`, `list(range(b))`): the numbers of an
    arange, counted out in Python on the host."""
    if not isinstance(expr, cst.Call) or (made := facts.call_of.get(expr)) is None:
        return None
    if made.qualname == "builtins.list" and len(expr.args) == 1:
        return _python_range(expr.args[0].value, facts)
    return made if made.qualname == "builtins.range" else None


def _repeated_number(expr: cst.BaseExpression, call: CallFact, facts: ModuleFacts) -> bool:
    """`[t] * b`, `b * [0.0]`: a list of one number repeated a count of times, the data of a
    constant fill."""
    if not isinstance(expr, cst.BinaryOperation) or not isinstance(expr.operator, cst.Multiply):
        return False
    for listed, count in ((expr.left, expr.right), (expr.right, expr.left)):
        if isinstance(listed, cst.List) and len(listed.elements) == 1 and not isinstance(listed.elements[0], cst.StarredElement):
            number = listed.elements[0].value
            numeric = _is_scalar(number, call.ctx, facts) or _is_count(number, call, facts)
            return numeric and (_is_count(count, call, facts) or _is_scalar(count, call.ctx, facts))
    return False


def _maps_elements(made: CallFact) -> bool:
    """`torch.exp(t)`, `torch.sin(t)`: a torch function of one tensor, element by element, whose
    result is made where its input is."""
    qualname = made.qualname or ""
    return (
        qualname.startswith("torch.")
        and qualname.rsplit(".", 1)[-1] in kb.ELEMENTWISE
        and len(made.node.args) >= 1
        and made.node.args[0].keyword is None
        and sum(arg.keyword is None for arg in made.node.args) == 1
    )


def _takes_a_triangle(made: CallFact) -> bool:
    """`torch.triu(t, diagonal=1)`, `torch.tril(t, -1)`: the result is made where `t` is."""
    qualname = made.qualname or ""
    return qualname.startswith("torch.") and qualname.rsplit(".", 1)[-1] in _TRIANGLES and bool(made.node.args) and made.node.args[0].keyword is None


#: Factories whose positional arguments (and these keywords) are sizes and bounds: Python numbers.
_SIZED_FACTORIES = frozenset(f"torch.{name}" for name in ("zeros", "ones", "empty", "arange", "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm"))
_SIZE_KEYWORDS = frozenset({"start", "end", "steps", "size", "n", "m", "high", "low"})
#: Methods of an array that return Python integers: its sizes.
_SIZE_METHODS = frozenset({"size", "numel", "dim"})


def _is_count(expr: cst.BaseExpression, call: CallFact, facts: ModuleFacts, hops: int = 0) -> bool:
    """A number by how the function uses it (`half`, used as `torch.arange(half)`'s size), or
    arithmetic on such numbers and constants (`math.log(10000) / (half_dim - 1)`): what a host
    fill is scaled by in `torch.exp(torch.arange(half) * -scale)`."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return _is_count(expr.expression, call, facts, hops)
    if isinstance(expr, cst.BinaryOperation):
        return _is_count(expr.left, call, facts, hops) and _is_count(expr.right, call, facts, hops)
    value = facts.value(expr)
    if value is not None:
        return value.kind is Kind.NUMBER
    if isinstance(expr, cst.Call):
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _SIZE_METHODS:
            return True  # `b = x.size(0)`
        qualname = facts.imports.qualified_name(expr.func) if isinstance(expr.func, (cst.Name, cst.Attribute)) else None
        return qualname is not None and (qualname.startswith("math.") or qualname in ("builtins.int", "builtins.float", "builtins.len"))
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
        return True  # `b = x.shape[0]`
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and expr.value.value in _sizes_of_fills(call.ctx.function, facts):
        return True  # `shape[0]` of the sizes `torch.randn(*shape)` was given
    if not isinstance(expr, cst.Name):
        return False
    if expr.value in _sizes_of_fills(call.ctx.function, facts) or _python_number(expr.value, call):
        return True
    assigned = last_assignment(expr.value, expr, call.ctx.function, facts) if hops < _MAX_HOPS else None
    return assigned is not None and _is_count(assigned, call, facts, hops + 1)


def _python_number(name: str, call: CallFact) -> bool:
    """The counter of an enclosing `for i in range(...)` loop, or a parameter of the function
    whose default is a number written out (`sample_steps=50`)."""
    if any(name in loop.targets and _is_range(loop.iterable) for loop in call.ctx.loops()):
        return True
    node = call.ctx.function.node
    if not isinstance(node, cst.FunctionDef):
        return False
    return any(
        param.name.value == name and isinstance(param.default, (cst.Integer, cst.Float))
        for param in (*node.params.params, *node.params.kwonly_params)
    )


def _is_range(iterable: cst.BaseExpression | None) -> bool:
    """`range(...)`: its items are Python integers."""
    return isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "range"


def _sizes_of_fills(function: FunctionFacts, facts: ModuleFacts) -> set[str]:
    """Names this function passes as the sizes or bounds of a tensor factory (`torch.arange(start=0, end=half)`)."""
    sizes: set[str] = set()
    for made in facts.calls:
        if made.ctx.function is not function or made.qualname not in _SIZED_FACTORIES:
            continue
        for arg in made.node.args:
            sized = arg.keyword is None or arg.keyword.value in _SIZE_KEYWORDS
            if sized and isinstance(arg.value, cst.Name):
                sizes.add(arg.value.value)
    return sizes


def _returned_call(func: cst.BaseExpression, facts: ModuleFacts) -> tuple[cst.Call, FunctionFacts] | None:
    """`random_message(nbits, n)`: the call a function of this file ends by returning
    (`return torch.randint(0, 2, (n, nbits))`), so its result is what that call makes; with the
    function it is in."""
    function = facts.functions.get(func.value) if isinstance(func, cst.Name) else None
    body = function.node.body if function is not None and isinstance(function.node, cst.FunctionDef) else None
    last = body.body[-1] if isinstance(body, cst.IndentedBlock) and body.body else None
    if not isinstance(last, cst.SimpleStatementLine) or len(last.body) != 1:
        return None
    returned = last.body[0]
    if not isinstance(returned, cst.Return) or not isinstance(returned.value, cst.Call):
        return None
    assert function is not None
    return returned.value, function


def _is_scalar(expr: cst.BaseExpression, ctx: Context, facts: ModuleFacts) -> bool:
    """A number the fill is scaled or shifted by (`* np.inf`, `+ 1`, `* scale` with scale = 0.5),
    or the target of a loop over something that is not an array (`for i in reversed(seq):
    torch.ones(n) * i`): whatever `i` holds, a host tensor times it is built on the host."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return _is_scalar(expr.expression, ctx, facts)
    value = facts.value(expr)
    if value is not None and value.kind is Kind.NUMBER:
        return True
    if value is None and isinstance(expr, cst.Name):
        for loop in ctx.loops():
            if expr.value in loop.targets:
                return loop.iter_value is None or not loop.iter_value.is_array
    qualname = facts.imports.qualified_name(expr) if isinstance(expr, cst.Attribute) else None
    return qualname is not None and qualname.rsplit(".", 1)[-1] in ("inf", "nan", "pi", "e")
