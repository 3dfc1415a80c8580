"""Abstract evaluation of expressions: which library's array, and on which device.

The walker calls `evaluate` on expressions as it meets them, in source order, with the
bindings known at that point; results are memoised per node so every rule later reads the
value each expression had where it stood.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from dataclasses import dataclass, field, replace
from typing import Any

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.formulas import built_formula, combined_formula, reduces, reduction_result
from gpuadvisor.analysis.facts.imports import ImportTable, called_name, may_be_project_name, dotted_name, keyword_arg, literal_string, passed_argument, positional_arg
from gpuadvisor.analysis.facts.shape_eval import ShapeInference
from gpuadvisor.analysis.facts.traverse import calls_in
from gpuadvisor.analysis.facts.values import NEXT_METHOD, Device, Kind, Passthrough, Value, array, either, iterated_instance, merge_devices, number, SOME_NUMBER

_THREAD_POOL = Value(Kind.THREAD_POOL, "python", Device.HOST)
_PROCESS_POOL = Value(Kind.PROCESS_POOL, "python", Device.HOST)
#: What a parameter or attribute called `device` holds: the device the code was written for.
MAYBE_GPU_DEVICE = Value(Kind.DEVICE, "torch", Device.MAYBE_GPU)
#: A device the code names as the host (`torch.device("cpu")`, or a `device=None` parameter left out).
HOST_DEVICE = Value(Kind.DEVICE, "torch", Device.HOST)
_LITERAL_SEQUENCE = Value(Kind.SEQUENCE, "python", Device.HOST)


def item_key(node: cst.Subscript) -> str | None:
    """`state["mu"]`: a plain name indexed by a string literal, the key its stored item is bound
    under (what `state["mu"] = torch.zeros_like(p)` put there is what `state["mu"]` reads back)."""
    if not isinstance(node.value, cst.Name) or len(node.slice) != 1:
        return None
    index = node.slice[0].slice
    if not (isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString)):
        return None
    key = index.value.evaluated_value
    return f"{node.value.value}[{key!r}]" if isinstance(key, str) else None


def is_string_formatting(node: cst.BinaryOperation) -> bool:
    """`"%s: %d" % (name, count)`, `("%10s" * 2 + "%10.4g" * 4) % row`: printf-style
    formatting, not a modulo."""
    return isinstance(node.operator, cst.Modulo) and _is_text(node.left)


def _is_text(node: cst.BaseExpression) -> bool:
    """A string literal, or one repeated (`"%g " * n`) or joined to another (`"a" + "b"`)."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
        return _is_text(node.left) or _is_text(node.right)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _is_text(node.left) and _is_text(node.right)
    return False


_DEVICE_WORD = re.compile(r"cuda|gpu|mps|xpu|hip|cpu", re.IGNORECASE)


def _device_named_before(text: cst.BaseExpression, placeholder: str | None) -> Value | None:
    """The device a string built from a literal prefix names (`"cuda:" + str(rank)`,
    `"cuda:%d" % rank`): the prefix up to the appended part (or the placeholder) must hold the
    device type and its colon, so `"cpu" + suffix` or `"run_" + name` name nothing."""
    if not isinstance(text, cst.SimpleString):
        return None
    value = text.evaluated_value
    prefix = value.split(placeholder, 1)[0] if placeholder is not None and isinstance(value, str) else value
    if not isinstance(prefix, str) or not prefix.endswith(":"):
        return None
    device = device_from_string(prefix)
    return Value(Kind.DEVICE, "python", device) if device is not None else None


def _hashed_container(expr: cst.BaseExpression) -> bool:
    """A container that finds its keys by hash, never by `==`: a dict or set display, or an
    optimizer's `state` (a dict keyed by parameter tensors). A tensor hashes by its identity, so
    `p in self.state` reads nothing from the GPU, where `x in tensor` or `x in [t1, t2]` does."""
    if isinstance(expr, (cst.Dict, cst.Set, cst.DictComp, cst.SetComp)):
        return True
    return isinstance(expr, cst.Attribute) and expr.attr.value in kb.HASHED_STATE_ATTRIBUTES


def _names_a_model(expr: cst.BaseExpression) -> bool:
    """`actor`, `self.q_net`, `ema_model`: a name whose last word says it holds a network."""
    name = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else ""
    return name.lower().rsplit("_", 1)[-1] in kb.MODEL_WORDS


def device_from_string(text: str) -> Device | None:
    kind = text.split(":", 1)[0].strip().lower()
    if kind in kb.GPU_DEVICE_KINDS:
        return Device.GPU
    if kind == "cpu":
        return Device.HOST
    return None


@dataclass
class Scope:
    bindings: dict[str, Value | None] = field(default_factory=dict)
    #: Losses a training function calls backward on (True) and tensors summed into them (False:
    #: maybe a Python number), when the project trains on the GPU (see `facts.training`).
    trained: dict[str, bool] = field(default_factory=dict)
    #: The assignments that bind those names to the loss (ids); another one ends the fact, and
    #: one of them brings it back (`for key, loss in logs.items():` before `loss = model(x)`).
    trained_by: frozenset[int] = frozenset()
    #: What `trained` held when the function was entered, for those assignments to restore.
    trained_found: dict[str, bool] = field(default_factory=dict)
    #: Names bound to a dict display whose keys are all literals (`results = {"d1": ..., "rmse":
    #: ...}`) and never given a computed key since: iterating them visits the keys the code names.
    literal_keys: set[str] = field(default_factory=set)


class Evaluator:
    """Holds the name bindings of the scopes being walked and evaluates expressions in them."""

    def __init__(self, imports: ImportTable, memo: dict[int, Value | None]) -> None:
        self.imports = imports
        self.memo = memo
        self.scopes: list[Scope] = [Scope()]
        self.class_attributes: list[dict[str, Value | None]] = []
        #: Names of the classes being walked (innermost last), to resolve `self.method()`.
        self.class_names: list[str] = []
        #: What functions of this file return when every `return` agrees on a device, a GPU
        #: array (`def select_device(): return torch.device("cuda")`) or a Python number (a loss
        #: summed from `.item()`s), by `facts.functions` key.
        self.function_results: dict[str, Value] = {}
        #: The same, from the previous walk of the file: what a method defined further down
        #: returns (`train_step` calls `self.forward`, written below it).
        self.earlier_results: dict[str, Value] = {}
        #: Functions of this file whose result a call asked for before the walk had reached them.
        self.results_asked_early: set[str] = set()
        #: Functions of this file that return a parameter unchanged (see `Passthrough`).
        self.function_passthrough: dict[str, Passthrough] = {}
        #: The same, for functions other files of the project define (by qualified name here).
        self.project_passthrough: dict[str, Passthrough] = {}
        #: Classes of this file deriving from torch.nn.Module: calling one builds a module.
        self.module_classes: set[str] = set()
        #: The other classes of this file: calling one makes an instance whose methods we can read.
        self.plain_classes: set[str] = set()
        #: Classes of other files of the project this file calls, by qualified name -> is a module.
        self.project_classes: dict[str, bool] = {}
        #: Custom autograd operations (`class AllReduce(torch.autograd.Function)`), by their name
        #: here: this file's own and, by qualified name, those of other files of the project.
        self.autograd_functions: set[str] = set()
        #: What functions of other files of the project return, by qualified name (see project.py).
        self.project_results: dict[str, Value] = {}
        self.shapes = ShapeInference(self.evaluate, imports)
        #: Names bound in each `if`/`else` branch being walked (with the scope depth they were
        #: opened at), so the two branches' devices can be merged (see `merge_branches`).
        self.branch_stores: list[tuple[int, dict[str, Value | None]]] = []
        #: For each open branch, what the names it rebinds held before it (see `close_branch`).
        self.branch_previous: list[dict[str, Value | None]] = []
        #: Devices of the `with torch.device("cuda"):` blocks being walked (innermost last):
        #: modules and tensor factories inside them build on that device, not on the host.
        self.default_devices: list[Device] = []
        #: What the classes of this file set on `self`, by class (the walk's `class_attributes`):
        #: the Warp arrays among them are the fields of their instances (`example.loss`).
        self.instance_fields: dict[str, dict[str, Value]] = {}
        #: The properties of this file's classes (`AverageMeter.avg`), by `facts.functions` key:
        #: reading one off an instance is a call of it.
        self.properties: set[str] = set()
        #: Names something was stored under by string key (`state["mu"] = ...`, see `item_key`):
        #: only their rebinding has items to forget.
        self.item_holders: set[str] = set()

    # -- bindings -------------------------------------------------------------------------
    def lookup(self, key: str) -> Value | None:
        if key.startswith("self.") and self.class_attributes:
            return self.class_attributes[-1].get(key)
        for scope in reversed(self.scopes):
            if key in scope.bindings:
                return scope.bindings[key]
        return None

    def store(self, key: str, value: Value | None) -> None:
        for (depth, stores), previous in zip(self.branch_stores, self.branch_previous):
            if depth == len(self.scopes) and key not in stores:
                previous[key] = self.lookup(key)
        if key.startswith("self.") and self.class_attributes:
            self.class_attributes[-1][key] = value
        else:
            self.scopes[-1].bindings[key] = value
        for depth, stores in self.branch_stores:
            if depth == len(self.scopes):
                stores[key] = value

    def store_item(self, target: cst.Subscript, value: Value | None) -> None:
        """`state["mu"] = torch.zeros_like(p)`: what `state["mu"]` reads back (see `item_key`)."""
        key = item_key(target)
        if key is not None:
            self.item_holders.add(key.partition("[")[0])
            self.store(key, value)

    def forget_items(self, name: str) -> None:
        """`name` was bound anew: the items stored under its string keys (`item_key`) are gone."""
        if name not in self.item_holders:
            return
        prefix = f"{name}["
        for key in [key for key in self.scopes[-1].bindings if key.startswith(prefix)]:
            self.store(key, None)

    def open_branch(self) -> None:
        self.branch_stores.append((len(self.scopes), {}))
        self.branch_previous.append({})

    def close_branch(self) -> dict[str, Value | None]:
        """What the branch bound; the names it bound get back what they held before it, for
        the branch that runs instead (`else`), until `merge_branches` decides after both."""
        previous = self.branch_previous.pop()
        stores = self.branch_stores.pop()[1]
        for key, value in previous.items():
            self.store(key, value)
        return stores

    def merge_branches(self, body: dict[str, Value | None], orelse: dict[str, Value | None]) -> None:
        """`if cuda: device = "cuda:0" else: device = "cpu"`: a device chosen at run time.

        Only devices are merged: the `else` binding stays for everything else, as before.
        """
        for key, first in body.items():
            if key not in orelse:
                self.store(key, first)  # bound by the `if` body only: as if it ran
        for key, other in orelse.items():
            first = body.get(key)
            if key in body and Kind.DEVICE in (getattr(first, "kind", None), getattr(other, "kind", None)):
                self.store(key, either(first, other))
            else:
                self.store(key, other)

    def filled_by_host(self, target: cst.BaseExpression) -> None:
        """Host code wrote into this array (`a[:] = ...`, `kernel(out)`): it is data now, not a
        fill a GPU could make in place, so porting it means copying it."""
        key = dotted_name(target)
        value = self.lookup(key) if key is not None else None
        if key is not None and value is not None and value.is_array and value.generated:
            self.store(key, replace(value, generated=False))

    # -- evaluation -----------------------------------------------------------------------
    def evaluate(self, node: cst.BaseExpression) -> Value | None:
        # Keyed by id(): nodes hash in Python code, ids in C; the tree keeps every node alive.
        key = id(node)
        try:
            return self.memo[key]
        except KeyError:
            pass
        value = self._evaluate(node)
        self.memo[key] = value
        return value

    def made_on(self) -> Device:
        """Where a module or a factory without `device=` builds its tensors here."""
        return self.default_devices[-1] if self.default_devices else Device.HOST

    def context_device(self, item: cst.BaseExpression) -> Device | None:
        """The default device a `with` item sets: `torch.device("cuda")` or a device value
        (`with fabric.device:`), a context manager told the device (`EmptyInitOnDevice(device=d)`),
        or an accelerator's `init_module()`. None for anything else (`torch.cuda.device(1)` only
        picks a GPU; it leaves factories on the CPU)."""
        value = self.evaluate(item)
        if value is not None and value.kind is Kind.DEVICE:
            # `wp.ScopedDevice("cpu")` also moves Warp's default away from the GPU.
            return value.device if value.on_gpu or value.library == "warp" else None
        if not isinstance(item, cst.Call):
            return None
        device_kw = keyword_arg(item, "device")
        if device_kw is not None:
            device = self.target_device(device_kw)
            return device if device is not None and device is not Device.HOST else None
        func = item.func
        if isinstance(func, cst.Attribute) and func.attr.value in kb.ACCELERATOR_INIT_METHODS:
            owner = dotted_name(func.value)
            if owner is not None and owner.rsplit(".", 1)[-1].lower() in kb.ACCELERATOR_NAMES:
                return Device.MAYBE_GPU
        return None

    def target_device(self, node: cst.BaseExpression) -> Device | None:
        """The device an argument of `.to(...)`/`device=` names, if it names one."""
        if isinstance(node, cst.Integer):
            return Device.GPU  # .to(0), .cuda(1): a device index
        value = self.evaluate(node)
        if value is not None and value.kind in (Kind.DEVICE, Kind.ARRAY):
            return value.device
        name = dotted_name(node)
        index = value is None or value.kind is Kind.NUMBER  # `local_rank = int(os.environ["LOCAL_RANK"])`: a number
        if index and name is not None and name.rsplit(".", 1)[-1] in kb.DEVICE_INDEX_NAMES:
            return Device.MAYBE_GPU  # .to(local_rank), .cuda(args.gpu)
        if index and self._computes_gpu_index(node):
            return Device.MAYBE_GPU  # .to(rank % torch.cuda.device_count())
        return None

    def _computes_gpu_index(self, node: cst.BaseExpression) -> bool:
        """`rank % torch.cuda.device_count()`, `args.gpus[local_rank]`: arithmetic on a GPU index."""
        if isinstance(node, cst.BinaryOperation):
            return any(self._is_gpu_index(part) for part in (node.left, node.right))
        if isinstance(node, cst.Subscript):
            return any(
                isinstance(element.slice, cst.Index) and self._is_gpu_index(element.slice.value) for element in node.slice
            )
        return False

    def _is_gpu_index(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Call):
            return self.imports.qualified_name(node.func) in kb.GPU_COUNT_CALLS
        name = dotted_name(node)
        return name is not None and name.rsplit(".", 1)[-1] in kb.DEVICE_INDEX_NAMES

    def _evaluate(self, node: cst.BaseExpression) -> Value | None:
        handler = _HANDLERS.get(type(node))  # exact-type lookup: isinstance on LibCST's ABCs is slow
        return handler(self, node) if handler is not None else None

    def _name(self, node: cst.Name) -> Value | None:
        known = self.lookup(node.value)
        if known is None and node.value.endswith("Tensor"):
            return self._tensor_type(node)  # `from torch.cuda import FloatTensor`
        trained = self._trained(node.value, known)
        return trained if trained is not None else known

    def _trained(self, name: str, known: Value | None) -> Value | None:
        """A loss the function trains with: a torch tensor on the model's device, which a
        project training on the GPU means to be the GPU. It wins over a host tensor made from
        the model's own parameters (`nn.Parameter(torch.tensor(...))` moves with the model);
        a tensor summed into it only fills in for what is not known."""
        certain = self.scopes[-1].trained.get(name)
        if certain is None:
            return None
        host_tensor = known is not None and known.is_array and known.library == "torch" and not known.on_gpu
        if known is None or (certain and host_tensor):
            return array("torch", Device.MAYBE_GPU, inferred=not certain)
        return None

    def _tensor_type(self, node: cst.Name | cst.Attribute) -> Value | None:
        """`torch.cuda.FloatTensor` (GPU) or `torch.FloatTensor` (host) as a value."""
        where = kb.legacy_tensor_device(self.imports.qualified_name(node))
        if where is None:
            return None
        return Value(Kind.TENSOR_TYPE, "torch", Device.GPU if where == "gpu" else Device.HOST)

    def _number(self, node: cst.Integer | cst.Float) -> Value | None:
        if len(node.value) > 40:
            return None  # a 400-digit literal is no array size
        digits = node.value.replace("_", "")
        try:  # LibCST's `evaluated_value` runs ast.literal_eval: a tenth of the walk on numeric code
            return _bounded_number(int(digits, 0) if isinstance(node, cst.Integer) else float(digits))
        except ValueError:
            return _bounded_number(node.evaluated_value)

    def _binary(self, node: cst.BinaryOperation) -> Value | None:
        if is_string_formatting(node):
            self.evaluate(node.right)
            return _device_named_before(node.left, "%")  # `"cuda:%d" % rank` names a device; `"x%d" % i` builds a str
        if isinstance(node.operator, cst.Add) and isinstance(node.left, cst.SimpleString):
            self.evaluate(node.right)
            return _device_named_before(node.left, None)  # `"cuda:" + str(args.gpu)`, as `f"cuda:{args.gpu}"`
        left, right = self.evaluate(node.left), self.evaluate(node.right)
        if left is not None and left.kind is Kind.FORMULA and isinstance(node.operator, cst.MatrixMultiply):
            return reduction_result(left, [right])  # `K @ b`: KeOps sums over j, and waits
        formula = combined_formula([left, right])
        if formula is not None:
            return formula
        computed = _arithmetic(node.operator, left, right)
        if computed is not None:
            return computed
        combined = self._combine([node.left, node.right])
        if combined is None and isinstance(node.operator, cst.Modulo) and isinstance(node.right, cst.Call):
            if self.imports.qualified_name(node.right.func) in kb.GPU_COUNT_CALLS:
                return MAYBE_GPU_DEVICE  # rank % torch.cuda.device_count(): this process's GPU
        return self.shapes.binary(node, combined) if combined is not None else None

    def _comparison(self, node: cst.Comparison) -> Value | None:
        if all(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in node.comparisons):
            return None  # identity: a Python bool, no device value is read
        operands = [node.left, *(c.comparator for c in node.comparisons)]
        if all(isinstance(c.operator, (cst.In, cst.NotIn)) and _hashed_container(c.comparator) for c in node.comparisons):
            self.evaluate(node.left)
            return None  # `p in self.state`: a key looked up by hash (a tensor hashes by identity), a Python bool
        if any(isinstance(operand, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)) for operand in operands):
            for operand in operands:
                self.evaluate(operand)
            return None  # `self.model.parameterization == "v"`: a string setting, whatever holds it
        combined = self._combine(operands)
        if combined is None:
            return None
        # `arange(n) == arange(n).unsqueeze(1)`, `arange(n) < 3`: a test of values made from nothing
        # and numbers is made from nothing; a test with anything unknown is not
        values = [self.evaluate(operand) for operand in operands]
        generated = all(v is not None and (v.kind is Kind.NUMBER or (v.is_array and v.generated)) for v in values)
        return replace(combined, dtype="bool", generated=generated)

    def _unary(self, node: cst.UnaryOperation) -> Value | None:
        inner = self.evaluate(node.expression)
        if inner is not None and inner.kind is Kind.NUMBER and isinstance(node.operator, cst.Minus):
            return number(-inner.number) if inner.number is not None else inner
        keeps = inner is not None and (inner.is_array or inner.kind is Kind.FORMULA)
        return inner if keeps and not isinstance(node.operator, cst.Not) else None

    def _subscript(self, node: cst.Subscript) -> Value | None:
        key = item_key(node)
        stored = self.lookup(key) if key is not None else None
        if stored is not None:
            return stored
        base = self.evaluate(node.value)
        indices = [self.evaluate(element.slice.value) for element in node.slice if isinstance(element.slice, cst.Index)]
        if base is not None and base.packed and any(index is not None and index.is_array for index in indices):
            base = replace(base, packed=False)  # `model(x)[idx]`: only a tensor is indexed by a tensor
        if base is None or base.kind is Kind.SEQUENCE:
            return self._literal_item(node)
        if base.kind is Kind.PARAMETERS:
            return Value(Kind.ARRAY, base.library, base.device)  # `params[name]`, `params[0]`: one parameter tensor
        if base.kind is Kind.MODULE:
            return base.submodule()  # `self.nets["policy"]`, `layers[0]`
        if not base.is_array:
            return None
        if legacy_scalar_read(node):
            return SOME_NUMBER  # a Python number, read back
        if base.library == "cudf":
            return self._cudf_item(base, node)
        shape = self.shapes.subscript(base, node)
        return replace(base, shape=shape, ndim=self._rank_after_indexing(base, node) if shape is None else None)

    def _cudf_item(self, frame: Value, node: cst.Subscript) -> Value | None:
        """`df["src"]` is a Series; `s.iloc[i]` one element, on the host; a mask, slice or list
        of columns (`df[df.x > 0]`, `df[["a", "b"]]`) a frame on the GPU."""
        if cudf_element_read(node, frame, lambda index: isinstance(index, (cst.Integer, cst.SimpleString))):
            return SOME_NUMBER
        if isinstance(node.value, cst.Attribute) and node.value.attr.value in kb.CUDF_ELEMENT_INDEXERS:
            return None  # `s.iloc[i]` with `i` held elsewhere: an element or a gather, we cannot tell
        column = len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) and isinstance(node.slice[0].slice.value, cst.SimpleString)
        return replace(frame, class_name=kb.CUDF_SERIES if column else None, shape=None)

    def _rank_after_indexing(self, base: Value, node: cst.Subscript) -> int | None:
        """`a[i]` of a 4-d array is 3-d: each plain index (a number, or a name holding no array)
        drops a dimension and each slice keeps one; anything else (a mask, an index array,
        `None`, `...`) leaves it unknown."""
        rank = base.rank
        if rank is None or len(node.slice) > rank:
            return None
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Slice):
                continue
            value = index.value if isinstance(index, cst.Index) else None
            held = self.evaluate(value) if isinstance(value, cst.Name) else None
            if isinstance(value, cst.Integer) or (isinstance(value, cst.Name) and value.value != "None" and not (held is not None and held.is_array)):
                rank -= 1
                continue
            return None
        return rank

    def _string(self, node: cst.SimpleString) -> Value | None:
        raw = node.value
        if len(raw) > 40 or not _DEVICE_WORD.search(raw):
            return None  # docstrings and messages name no device: skip evaluating the literal
        text = literal_string(node)
        device = device_from_string(text) if text is not None else None
        return Value(Kind.DEVICE, "python", device) if device is not None else None

    def _formatted_string(self, node: cst.FormattedString) -> Value | None:
        """`f"cuda:{rank}"`: the text before the first placeholder names the device type."""
        for part in node.parts:
            if isinstance(part, cst.FormattedStringExpression):
                self.evaluate(part.expression)
        first = node.parts[0] if node.parts else None
        literal = len(node.parts) == 1  # f"cuda": no placeholder, a plain string
        if not isinstance(first, cst.FormattedStringText) or (":" not in first.value and not literal):
            return None
        device = device_from_string(first.value)
        return Value(Kind.DEVICE, "python", device) if device is not None else None

    def _if_expression(self, node: cst.IfExp) -> Value | None:
        """`a if cond else b`; a number on one side and an array on the other (`0 if self.count
        == 0 else self.sum / self.count`) is the array whenever it is not the empty case's
        default, and only the array can make a read wait."""
        self.evaluate(node.test)
        body, orelse = self.evaluate(node.body), self.evaluate(node.orelse)
        if self._tests_for_a_tensor(node.test, node.orelse):
            orelse = None  # `x.cpu().numpy() if torch.is_tensor(x) else x`: no tensor on that side
        for default, other in ((body, orelse), (orelse, body)):
            if default is not None and default.kind is Kind.NUMBER and other is not None and other.is_array:
                return other
        return either(body, orelse)

    def _tests_for_a_tensor(self, test: cst.BaseExpression, name: cst.BaseExpression) -> bool:
        """`torch.is_tensor(x)` or `isinstance(x, torch.Tensor)` of the very name the other side
        hands back: that side runs only when `x` is no tensor."""
        if not (isinstance(test, cst.Call) and test.args and isinstance(name, cst.Name)):
            return False
        qualname = self.imports.qualified_name(test.func) if isinstance(test.func, (cst.Name, cst.Attribute)) else None
        tested = test.args[0].value
        if not (isinstance(tested, cst.Name) and tested.value == name.value):
            return False
        if qualname == "torch.is_tensor":
            return True
        return qualname == "builtins.isinstance" and len(test.args) == 2 and self.imports.qualified_name(test.args[1].value) in kb.TENSOR_CLASSES

    def _sequence(self, node: cst.Tuple | cst.List | cst.Set) -> Value | None:
        for element in node.elements:
            self.evaluate(element.value)
        if any(isinstance(element, cst.StarredElement) for element in node.elements):
            return None
        return _LITERAL_SEQUENCE

    def _comprehension(self, node: cst.ListComp | cst.GeneratorExp) -> Value | None:
        """`[p.detach().clone() for p in model.parameters()]`: one tensor per parameter, a copy
        of the module's parameters (an EMA's shadow) that later loops zip with the originals.
        `tuple(t.to(device) for t in batch)`: a batch moved to the GPU item by item, which is
        what `batch.to(device)` of a batch object gives (its items live there)."""
        for_in = node.for_in
        source = self.evaluate(for_in.iter)
        element = self.evaluate(node.elt)
        if element is None or not element.is_array or for_in.inner_for_in or for_in.ifs:
            return None
        if source is not None and source.kind is Kind.PARAMETERS and not source.class_name:
            return Value(Kind.PARAMETERS, element.library, element.device)
        return self._moved_to_gpu(node.elt)

    def _dict_comprehension(self, node: cst.DictComp) -> Value | None:
        """`{k: v * weight[k] for k, v in losses.items() if k in weight}`: the tensors of a dict of
        GPU tensors, scaled or renamed, are still GPU tensors, held the way the dict was (as one
        array value whose items are arrays). A value read back (`v.item()`) or computed by a
        call is not followed."""
        moved = self._moved_to_gpu(node.value)
        if moved is not None:
            return moved  # `{k: v.to(device) for k, v in batch.items()}`: a batch moved field by field
        for_in = node.for_in
        held = method_receiver(for_in.iter, "items")
        source = self.evaluate(held) if held is not None else None
        target = for_in.target
        if source is None or not source.is_array or not source.on_gpu or for_in.inner_for_in is not None:
            return None
        if not isinstance(target, cst.Tuple) or len(target.elements) != 2 or not isinstance(target.elements[1].value, cst.Name):
            return None
        item = target.elements[1].value.value
        value = node.value
        operands = [value.left, value.right] if isinstance(value, cst.BinaryOperation) else [value]
        if not any(isinstance(operand, cst.Name) and operand.value == item for operand in operands):
            return None
        if any(next(calls_in(operand), None) is not None for operand in operands):
            return None
        return array(source.library, source.device, inferred=True)

    def _moved_to_gpu(self, expr: cst.BaseExpression) -> Value | None:
        """A batch of arrays, if `expr` moves each item it is handed to a GPU (`v.to(device)`, `v.cuda()`)
        in a comprehension: its items live there."""
        if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("to", "cuda")):
            return None
        value = self.evaluate(expr)
        return replace(array(value.library, value.device), holds_fields=True) if value is not None and value.is_array and value.on_gpu else None

    def _record(self, node: cst.Call, positional: list[Value | None]) -> Value | None:
        """`Munch(x=x.to(device), y=y.to(device))`, `EasyDict(batch)`: a record whose fields are the GPU
        arrays it is handed, every one of them (a record that also holds sizes, lists or names,
        `dict(seqlens=[...], q=q)`, says nothing of any one field)."""
        handed = [self.evaluate(arg.value) for arg in node.args if arg.keyword is not None] + positional
        fields = [value for value in handed if value is not None and value.is_array and value.on_gpu]
        if not fields or len(fields) != len(handed):
            return None
        return replace(array(fields[0].library, fields[0].device), shape=None, holds_fields=True)

    def _boolean(self, node: cst.BooleanOperation) -> Value | None:
        left, right = self.evaluate(node.left), self.evaluate(node.right)
        if isinstance(node.operator, cst.Or):
            return either(left, right)  # `sampler or UniformSampler(d)`: one of the two
        return None

    def _await(self, node: cst.Await) -> Value | None:
        return self.evaluate(node.expression)

    def _walrus(self, node: cst.NamedExpr) -> Value | None:
        return self.evaluate(node.value)

    def _combine(self, operands: list[cst.BaseExpression]) -> Value | None:
        arrays = [v for v in map(self.evaluate, operands) if v is not None and v.is_array]
        if not arrays:
            return None
        device = merge_devices([v.device for v in arrays])
        assert device is not None
        library = next((v.library for v in arrays if v.device is device), arrays[0].library)
        return array(library, device, inferred=all(v.inferred for v in arrays))

    def _configured_device(self, node: cst.Attribute) -> bool:
        """`args.device`, `cfg.device` (a field of something unknown), or `ptu.device`, the
        `device` global of a module of the project (rlkit's `pytorch_util`, which its set-up
        function rebinds): the device the program was configured to run on. Not a name of the
        standard library or an array library."""
        qualname = self.imports.qualified_name(node)
        return qualname is None or may_be_project_name(qualname)

    def _evaluate_attribute(self, node: cst.Attribute) -> Value | None:
        dotted = dotted_name(node)
        if dotted is not None and dotted.startswith("self."):
            known = self.lookup(dotted)
            if known is None and node.attr.value == "device":
                return MAYBE_GPU_DEVICE
            if known is not None or isinstance(node.value, cst.Name):
                return known  # else `self.policy.critic`: a field of what `self.policy` holds
        base = self.evaluate(node.value)
        attr = node.attr.value
        if base is not None and base.class_name == kb.WARP_TAPE and attr == kb.TAPE_GRADIENTS:
            # `tape.gradients[x]`: the gradient array of each recorded array, by array.
            return Value(Kind.PARAMETERS, "warp", self.warp_default_device(), class_name=kb.PARAMETERS_BY_NAME)
        if base is not None and base.kind is Kind.FORMULA:
            return base if attr in kb.FORMULA_VIEWS else None
        if base is not None and base.kind is Kind.INSTANCE and base.class_name is not None:
            if f"{base.class_name}.{attr}" in self.properties:
                return self._project_method_result(base, attr)  # `top1.avg`: what the property returns
            field = self.instance_fields.get(base.class_name, {}).get(f"self.{attr}")
            if field is not None and field.is_array and field.library in kb.IN_PLACE_KERNEL_LIBRARIES:
                return field  # `example.loss`: a Warp array its class made once and its kernels write in place
        if base is None or base.kind is Kind.INSTANCE:  # an instance's fields are not tracked
            known = self.lookup(dotted) if dotted is not None else None
            if known is None and attr.endswith("Tensor"):
                return self._tensor_type(node)
            if known is None and attr == "device" and self._configured_device(node):
                return MAYBE_GPU_DEVICE  # args.device, cfg.device, ptu.device: the configured device
            return known
        if base.is_array and base.library == "cudf":
            return _cudf_attribute(base, attr)
        if base.is_array and attr in kb.ARRAY_VIEW_ATTRIBUTES:
            return ShapeInference.attribute(base, attr)
        if (base.is_array or base.kind is Kind.MODULE) and attr == "device":
            # The host read off a value the code never moved is where it starts, not where it
            # may be moved elsewhere (`query.device` of a module's output): inferred.
            return Value(Kind.DEVICE, base.library, base.device, inferred=base.inferred or base.device is Device.HOST)
        if base.holds_fields and _names_array_field(attr):
            return array(base.library, base.device)  # batch.x after batch = batch.to(device)
        if base.is_array and attr in kb.MODEL_OUTPUT_FIELDS:
            return array(base.library, base.device)  # `model(**inputs).loss`: a model output's tensor
        return None

    def _applies_autograd_function(self, func: cst.BaseExpression) -> bool:
        """`AllReduce.apply(...)` of a custom autograd operation of this file or the project."""
        if not (isinstance(func, cst.Attribute) and func.attr.value == "apply" and isinstance(func.value, (cst.Name, cst.Attribute))):
            return False
        owner = func.value
        local = owner.value if isinstance(owner, cst.Name) else None
        return local in self.autograd_functions or self.imports.qualified_name(owner) in self.autograd_functions

    def _evaluate_call(self, node: cst.Call) -> Value | None:
        value = self._call_value(node)
        if value is None or value.kind is not Kind.ARRAY:
            return value
        func = node.func
        qualname = self.imports.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        receiver = self.evaluate(func.value) if isinstance(func, cst.Attribute) else None
        method = func.attr.value if isinstance(func, cst.Attribute) and receiver is not None else None
        if qualname is not None and _draws_one_number(node, qualname):
            return SOME_NUMBER  # `np.random.choice(train_ids)`: one id, not an array
        if _returns_several(node, called_name(qualname, method), value.library, method is not None):
            other = positional_arg(node, 0 if method is not None else 1)
            other_value = self.evaluate(other) if other is not None else None
            if other_value is None or not other_value.is_array:  # torch.min(a, b), a.max(b): one array
                return None
        return self.shapes.call(node, qualname, method, receiver, value)

    def parts_of(self, node: cst.Call) -> Value | None:
        """Each array of the tuple a library call returns (`values, idx = torch.topk(x, k)`,
        `u, s, vh = cp.linalg.svd(a)`): made where the call computes, sizes unknown."""
        value = self._call_value(node)
        if value is None or value.kind is not Kind.ARRAY:
            return None
        func = node.func
        qualname = self.imports.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        method = func.attr.value if isinstance(func, cst.Attribute) and self.evaluate(func.value) is not None else None
        name = called_name(qualname, method)
        if not _returns_several(node, name, value.library, method is not None):
            return None
        return replace(value, shape=None, ndim=None, generated=False)

    def _call_value(self, node: cst.Call) -> Value | None:
        """Library and device of a call's result (shapes are added by `ShapeInference`)."""
        positional = [self.evaluate(arg.value) for arg in node.args if arg.keyword is None]
        for arg in node.args:
            if arg.keyword is not None:
                self.evaluate(arg.value)
        func = node.func
        if _accelerator_setup(func) and len(positional) == 1:
            placed = positional[0]
            kind = placed.kind if placed is not None and placed.kind in (Kind.MODULE, Kind.ARRAY) else Kind.MODULE
            class_name = placed.class_name if placed is not None else None
            return Value(kind, "torch", Device.MAYBE_GPU, class_name=class_name)  # `model = fabric.setup(model)`
        if _accelerator_method(func, kb.ACCELERATOR_COLLECTIVES) and positional and positional[0] is not None and positional[0].is_array:
            return replace(positional[0], shape=None, ndim=None, generated=False)  # `accelerator.gather(t)`: on `t`'s device
        if self._applies_autograd_function(func):
            arrays = [value for value in positional if value is not None and value.is_array]
            # `AllReduce.apply(loss)`: a tensor where its input is (autograd runs `forward` there)
            return replace(arrays[0], shape=None, ndim=None, dtype=None, generated=False) if arrays else None
        if isinstance(func, cst.Attribute):
            receiver = self.evaluate(func.value)
            calls_own_method = isinstance(func.value, cst.Name) and func.value.value == "self" and bool(self.class_names)
            inherited = func.attr.value in kb.ALL_PARAMETER_ITERATORS  # nn.Module's own
            if receiver is not None and (inherited or not calls_own_method):  # `self.method()`: its own returns say
                return self._method_result(receiver, func.attr.value, node)
        tensor_class = self.evaluate(func) if _may_name_tensor_class(func) else None
        if tensor_class is not None and tensor_class.kind is Kind.TENSOR_TYPE:
            return array("torch", tensor_class.device)  # torch.cuda.FloatTensor(x), or a `Tensor` alias of it
        qualname = self.imports.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if qualname in kb.NUMBER_BUILTINS:
            return SOME_NUMBER
        if qualname in kb.FORMULA_BUILDERS:
            return built_formula(qualname, positional)
        if qualname is not None and qualname.split(".", 1)[0] in kb.PRETRAINED_LIBRARIES and qualname.endswith(kb.PRETRAINED_LOADER):
            loaded_on = self._placed_by_device_map(node)
            return Value(Kind.MODULE, "torch", loaded_on) if loaded_on is not None else None
        if qualname is not None and (kb.library_of(qualname) or qualname in kb.THREAD_POOL_FACTORIES or qualname in kb.PROCESS_POOL_FACTORIES):
            return self._library_call(qualname, node, positional)
        if qualname in self.project_classes:
            if self.project_classes[qualname]:
                return self._built_module(node, qualname)
            return Value(Kind.INSTANCE, "python", Device.HOST, class_name=qualname)
        if qualname in self.project_results:
            return self.placed_by_call(self.project_results[qualname], node)
        if isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda"):
            return self._move_unknown(func, node)
        if isinstance(func, cst.Attribute) and func.attr.value == kb.MODULE_MATERIALISE_METHOD:
            return self._materialised(node)
        if isinstance(func, cst.Name) and func.value in self.module_classes:
            return self._built_module(node, func.value)
        parsed = positional_arg(node) if qualname in kb.CONFIG_PARSERS else None
        if isinstance(parsed, cst.Name) and parsed.value in self.plain_classes:
            return Value(Kind.INSTANCE, "python", Device.HOST, class_name=parsed.value)  # `args = tyro.cli(Args)`
        if isinstance(func, cst.Name) and func.value in self.plain_classes:
            return Value(Kind.INSTANCE, "python", Device.HOST, class_name=func.value)
        if qualname in ("builtins.tuple", "builtins.list") and len(node.args) == 1 and isinstance(node.args[0].value, (cst.GeneratorExp, cst.ListComp)):
            return self.evaluate(node.args[0].value)  # `tuple(t.to(device) for t in batch)`: the comprehension's items
        if qualname in kb.RECORD_TYPES and (record := self._record(node, positional)) is not None:
            return record
        fetched = iterated_instance(qualname, positional)
        if fetched is not None:
            return self._project_method_result(fetched, NEXT_METHOD)  # `inputs = next(fetcher)` of a batch fetcher class
        summed = method_receiver(node.args[0].value, "values") if qualname == "builtins.sum" and len(node.args) == 1 else None
        if summed is not None:
            held = self.evaluate(summed)  # `sum(losses.values())` of a dict of GPU tensors: a tensor there
            return array(held.library, held.device, inferred=True) if held is not None and held.is_array and held.on_gpu else None
        if qualname == "builtins.sum" and node.args and isinstance(node.args[0].value, (cst.GeneratorExp, cst.ListComp)):
            element = self.evaluate(node.args[0].value.elt)  # sum(F.mse_loss(q, t) for q in qs): a tensor there
            return replace(element, shape=None, inferred=True) if element is not None and element.is_array and element.on_gpu else None
        if qualname in ("copy.deepcopy", "copy.copy") and positional:
            return positional[0]  # a copy of a module or tensor lives where the original does
        kept = _kept_parameters(qualname, positional)
        if kept is not None:
            return kept
        local_result = self._local_result(func)
        if local_result is not None and local_result.kind is Kind.FORMULA:
            return combined_formula([local_result, *positional])  # `K = gaussian_kernel(x, y)`: built from what it is handed
        if local_result is not None:
            return self.placed_by_call(local_result, node)
        through = self._passthrough_of(func)
        if through is not None and through.single:
            handed_back = self._handed_back(node, through)
            return handed_back[0] if handed_back else None  # model = wrap(model): the model it was given
        callee = self.evaluate(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        arrays = [v for v in positional if v is not None and v.is_array]
        if callee is not None and callee.kind is Kind.FORMULA:
            return reduction_result(callee, positional)  # a `Genred` routine run on these arrays
        if callee is not None and callee.kind is Kind.MODULE:
            device = merge_devices([callee.device] + [v.device for v in arrays])
            assert device is not None
            return Value(Kind.ARRAY, callee.library, device, packed=True)
        if callee is not None and callee.is_array and callee.on_gpu:
            # Tensors are not callable: a field of an object moved to the GPU (`self.policy.critic`) is a module there.
            return array(callee.library, callee.device, inferred=True)
        gpu_arrays = [v for v in arrays if v.on_gpu]
        if callee is None and gpu_arrays and (qualname is None or not qualname.startswith("builtins.")):
            # A model or loss function we cannot see, applied to GPU tensors.
            return array(gpu_arrays[0].library, gpu_arrays[0].device, inferred=True)
        if callee is None and (qualname is None or not qualname.startswith("builtins.")):
            return self._configured_object(func, node)
        return None

    def _built_module(self, node: cst.Call, class_name: str) -> Value:
        """A module class of this project built here: on the device its `device=` names
        (`GPTLMHeadModel(config, device=device)`, PyTorch's factory keyword), else where
        factories build."""
        device_kw = keyword_arg(node, "device")
        named = self.target_device(device_kw) if device_kw is not None else None
        return Value(Kind.MODULE, "torch", named or self.made_on(), class_name=class_name)

    def _configured_object(self, func: cst.BaseExpression, node: cst.Call) -> Value | None:
        """`TensorDict({"obs": torch.randn(b, n), ...}, [b], device=device)`: an object of a class
        we cannot see, handed tensors and a GPU device (a record, a buffer): it holds them there,
        so its fields and what its methods return live there. `GPTLMHeadModel(config,
        device=device, dtype=dtype)`: handed PyTorch's factory keywords together, as every
        `torch.nn` module takes them, it is a model built with its weights there. An object only
        handed a device's name among other settings (a result record, a config) holds no tensors."""
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        device_kw = keyword_arg(node, "device")
        if not name[:1].isupper() or device_kw is None:
            return None
        device = self.target_device(device_kw)
        if device is None or not device.on_gpu:
            return None
        handed = [arg.value for arg in node.args if arg.value is not device_kw]
        if any(self._holds_arrays(expr) for expr in handed):
            return replace(array("torch", device), holds_fields=True)
        return Value(Kind.MODULE, "torch", device) if keyword_arg(node, "dtype") is not None else None

    def _holds_arrays(self, expr: cst.BaseExpression) -> bool:
        """An array, or a literal dict, list or tuple with one among its items (nested too)."""
        if isinstance(expr, cst.Dict):
            return any(isinstance(e, cst.DictElement) and self._holds_arrays(e.value) for e in expr.elements)
        if isinstance(expr, (cst.List, cst.Tuple)):
            return any(self._holds_arrays(e.value) for e in expr.elements)
        value = self.evaluate(expr)
        return value is not None and value.is_array

    def returned_arguments(self, node: cst.Call) -> list[Value | None] | None:
        """What a call of a function that returns its parameters hands back: one value per
        returned item (a single one for `return x`); None when the callee is not such a function."""
        if _accelerator_setup(node.func) and not any(arg.star for arg in node.args):
            return self._placed_by_accelerator(node)
        if isinstance(node.func, (cst.Name, cst.Attribute)) and self.imports.qualified_name(node.func) in kb.ENGINE_INITIALIZERS:
            engine = Value(Kind.MODULE, "torch", Device.MAYBE_GPU)  # `engine, optimizer, loader, scheduler = deepspeed.initialize(...)`
            return [engine] + [None] * (kb.ENGINE_INITIALIZER_RESULTS - 1)
        through = self._passthrough_of(node.func)
        return self._handed_back(node, through) if through is not None else None

    def returned_list_items(self, node: cst.Call) -> list[cst.BaseExpression] | None:
        """`loss, err = all_reduce([loss, err])`: the items of the list literal handed to a
        function that returns that argument, which the assignment unpacks again."""
        through = self._passthrough_of(node.func)
        given = _handed_arguments(node, through) if through is not None and through.single else None
        handed = given[0] if given else None
        if not isinstance(handed, (cst.List, cst.Tuple)) or any(isinstance(e, cst.StarredElement) for e in handed.elements):
            return None
        return [element.value for element in handed.elements]

    def _placed_by_accelerator(self, node: cst.Call) -> list[Value | None]:
        """`model, optimizer = fabric.setup(model, optimizer)`, `accelerator.prepare(model, opt,
        loader)`: the same objects back in order, the modules (and `setup`'s first argument, which
        is always the model, and an argument whose name says it holds one, `self.ema_model`)
        moved to the accelerator."""
        assert isinstance(node.func, cst.Attribute)
        takes_model_first = node.func.attr.value.startswith("setup")
        placed: list[Value | None] = []
        for index, arg in enumerate(arg for arg in node.args if arg.keyword is None):
            value = self.evaluate(arg.value)
            if value is not None and value.kind is Kind.MODULE and not value.on_gpu:
                value = value.moved_to(Device.MAYBE_GPU)
            elif (index == 0 and takes_model_first) or (value is None and _names_a_model(arg.value)):
                value = Value(Kind.MODULE, "torch", Device.MAYBE_GPU)
            placed.append(value)
        return placed

    def _handed_back(self, node: cst.Call, through: Passthrough) -> list[Value | None] | None:
        """Per returned item: the argument handed back, or what the function made there."""
        given = _handed_arguments(node, through)
        if given is None and not through.made:
            return None
        made = through.made or (None,) * len(through.parts)
        handed = given if given is not None else [None] * len(through.parts)  # `f(*args)`: its own items are still known
        return [self.evaluate(part) if part is not None else own for part, own in zip(handed, made)]

    def _literal_item(self, node: cst.Subscript) -> Value | None:
        """`[loss][0]`, `du.all_reduce([loss])[0]` (a function handing back what it was given):
        the element written at that index of the literal."""
        index = node.slice[0].slice if len(node.slice) == 1 else None
        if not (isinstance(index, cst.Index) and isinstance(index.value, cst.Integer)):
            return None
        sequence: cst.BaseExpression | None = node.value
        if isinstance(sequence, cst.Call):
            through = self._passthrough_of(sequence.func)
            handed = _handed_arguments(sequence, through) if through is not None and through.single else None
            sequence = handed[0] if handed else None
        if not isinstance(sequence, (cst.List, cst.Tuple)) or any(isinstance(e, cst.StarredElement) for e in sequence.elements):
            return None
        position = index.value.evaluated_value
        return self.evaluate(sequence.elements[position].value) if position < len(sequence.elements) else None

    def _passthrough_of(self, func: cst.BaseExpression) -> Passthrough | None:
        """The callee's `Passthrough`: a function of this file (or `self.method`), or one another
        file of the project defines."""
        if not (self.function_passthrough or self.project_passthrough):
            return None
        key = self._local_key(func)
        if key is not None:
            return self.function_passthrough.get(key)
        qualname = self.imports.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if qualname is None and isinstance(func, cst.Attribute):
            # `loss, parts = rf.forward(x, c)`: a method of an instance of a project class
            receiver = self.evaluate(func.value)
            if receiver is None or receiver.class_name is None:
                return None
            method = f"{receiver.class_name}.{func.attr.value}"
            return self.function_passthrough.get(method) or self.project_passthrough.get(method)
        return self.project_passthrough.get(qualname) if qualname is not None else None

    def placed_by_call(self, result: Value, node: cst.Call) -> Value:
        """A function's result for this call: where the function makes its array on the device
        a parameter names (`Value.placed_by`), on the host when the call leaves it to its
        default, on the device the call hands when that is known."""
        if result.placed_by is None:
            return result
        index, name = result.placed_by
        given = passed_argument(node, name, index)
        if any(arg.star and arg.value is given for arg in node.args):
            given = None  # `f(x, *options)`: what the unpacking holds is not known
        if given is None:
            return replace(result, device=Device.HOST, placed_by=None) if not any(arg.star for arg in node.args) else replace(result, placed_by=None)
        handed = self.evaluate(given)
        if handed is not None and handed.kind is Kind.DEVICE:
            return replace(result, device=handed.device, placed_by=None)
        return replace(result, placed_by=None)

    def _local_result(self, func: cst.BaseExpression) -> Value | None:
        key = self._local_key(func)
        return self._own_result(key) if key is not None else None

    def _own_result(self, key: str) -> Value | None:
        """What a function of this file returns, as far as the walks so far have seen."""
        found = self.function_results.get(key)
        if found is None:
            self.results_asked_early.add(key)  # not reached yet in this walk: the last walk's answer, if any
            found = self.earlier_results.get(key)
        return found

    def _local_key(self, func: cst.BaseExpression) -> str | None:
        """The `facts.functions` key a call of this file's function names: `train(...)` or
        `self.method(...)` inside a class."""
        if isinstance(func, cst.Name) and self.imports.qualified_name(func) is None:
            return func.value
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" and self.class_names:
            return f"{self.class_names[-1]}.{func.attr.value}"
        return None

    def _move_unknown(self, func: cst.Attribute, node: cst.Call) -> Value | None:
        """`thing.to(device)` / `thing.cuda()` where we do not know what `thing` is.

        Whatever it was, it now lives on that device; a freshly constructed `Net()` is a
        module, anything else is taken to be a tensor.
        """
        device = Device.GPU if func.attr.value == "cuda" else self._move_target(node)
        if device is None:
            return None
        receiver = func.value
        while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and receiver.func.attr.value in kb.MODULE_SELF_METHODS:
            if receiver.func.attr.value in kb.MODULE_MODE_METHODS:
                return Value(Kind.MODULE, "torch", device)  # `make(...).train().to(device)`: only modules switch modes
            receiver = receiver.func.value
        constructed = isinstance(receiver, cst.Call) and isinstance(receiver.func, (cst.Name, cst.Attribute))
        if constructed:
            name = receiver.func.attr.value if isinstance(receiver.func, cst.Attribute) else receiver.func.value  # type: ignore[attr-defined, union-attr]
            if name[:1].isupper():
                return Value(Kind.MODULE, "torch", device)
        if _names_a_model(receiver):
            # `actor = actor.to(device)`: a network by its name, not a tensor (inferred: its
            # methods' results are tensors there, of shapes nobody has seen)
            return Value(Kind.MODULE, "torch", device, inferred=True)
        return replace(array("torch", device), holds_fields=True)

    def _materialised(self, node: cst.Call) -> Value | None:
        """`model.to_empty(device="cuda")`: a module, on the device it names."""
        device = self._move_target(node)
        return Value(Kind.MODULE, "torch", device) if device is not None else None

    def _move_target(self, node: cst.Call) -> Device | None:
        """Device named by `.to(...)`; None when the call converts dtype or is unknown."""
        device_kw = keyword_arg(node, "device")
        if device_kw is not None:
            return self.target_device(device_kw)
        first = positional_arg(node)
        return self.target_device(first) if first is not None else None

    def _method_result(self, receiver: Value, method: str, node: cst.Call) -> Value | None:
        if receiver.kind is Kind.FORMULA:  # `D.argKmin(k, dim=1)` runs it; `(-D).exp()` extends it
            return reduction_result(receiver, [self.evaluate(arg.value) for arg in node.args]) if reduces(method, node) else receiver
        if receiver.kind is Kind.RNG:
            return array(receiver.library, receiver.device, generated=True)
        if receiver.kind is Kind.DEVICE and method == "format":
            return receiver  # "cuda:{:d}".format(rank): still a CUDA device
        if receiver.kind is Kind.INSTANCE:
            if method in ("to", "cuda") and isinstance(node.func, cst.Attribute):
                return self._move_unknown(node.func, node)
            return self._project_method_result(receiver, method)
        if receiver.kind in (Kind.ARRAY, Kind.MODULE) and method in kb.ALL_PARAMETER_ITERATORS:
            # Tensors have no `.parameters()`: what was taken for an array (`net = net.cuda()` of
            # an unknown class, a batch-like object moved to the GPU) is a module.
            return parameters_of(receiver, method)
        if receiver.kind in (Kind.ARRAY, Kind.MODULE) and method == kb.STATE_DICT_METHOD:
            # A module's state: each parameter and buffer by name, where the module lives.
            return Value(Kind.PARAMETERS, receiver.library, receiver.device, class_name=kb.PARAMETERS_BY_NAME)
        if receiver.kind is Kind.ARRAY:
            return self._array_method(receiver, method, node)
        if receiver.kind is Kind.PARAMETERS and receiver.class_name == kb.PARAMETERS_BY_NAME and method in ("items", "values"):
            return replace(receiver, class_name=kb.NAMED_PARAMETERS if method == "items" else None)
        if receiver.kind is Kind.MODULE:
            if method == "cuda":
                return receiver.moved_to(Device.GPU)
            if method == "cpu":
                return receiver.moved_to(Device.HOST)
            if method == "to":
                device = self._move_target(node)
                return receiver.moved_to(device) if device is not None else receiver
            if method == kb.MODULE_MATERIALISE_METHOD:
                return self._materialised(node)
            if method in kb.MODULE_SELF_METHODS:
                return receiver
            known = self._project_method_result(receiver, method)
            if known is not None and not known.inferred:
                return known  # `trainer.train_step(...)` of this project's module class: what its returns say
            if receiver.on_gpu and method not in kb.MODULE_ONLY_METHODS and not method.startswith("_"):
                # `q_network.get_action(obs)`: a method of a module on the GPU computes with its
                # parameters there, like calling the module. Handed nothing, it computes on no
                # input: `model.no_weight_decay_keywords()` answers a question about the model,
                # unless it draws its own input (`vae.sample()`).
                if node.args or method.startswith(kb.INPUTLESS_RUN_PREFIXES):
                    return array(receiver.library, receiver.device, inferred=receiver.inferred)
        return None

    def _project_method_result(self, receiver: Value, method: str) -> Value | None:
        """What a method of a class of this file, or of one imported from the project, returns."""
        if receiver.class_name is None:
            return None
        key = f"{receiver.class_name}.{method}"
        return self.project_results.get(key) or self._own_result(key)

    def _array_method(self, receiver: Value, method: str, node: cst.Call) -> Value | None:
        if receiver.library == "cudf":
            return _cudf_method(receiver, method)
        if method in kb.MODULE_ONLY_METHODS or method.startswith(("is_", "has_")):
            return None  # a module's parameters, a Python bool
        if method in kb.PYTHON_BOOL_COMPARISONS and receiver.library == "torch":
            return None  # `a.equal(b)`: a Python bool, read back by the call itself
        if method == "cuda":
            return receiver.moved_to(Device.GPU)
        if method == "to":
            device = self._move_target(node)
            if device is not None:
                return receiver.moved_to(device)
            first = positional_arg(node)
            is_dtype = first is not None and self.imports.qualified_name(first) is not None
            return receiver if is_dtype or keyword_arg(node, "dtype") is not None else None
        if method == "cpu":
            return receiver.moved_to(Device.HOST)
        if method == kb.DEVICE_FOLLOWING_CAST:
            # `kernel.type_as(x)`: x's dtype and x's device, so a host tensor is copied to x's GPU
            first = positional_arg(node)
            device = self.target_device(first) if first is not None else None
            return receiver.moved_to(device) if device is not None else receiver
        if method == "type":
            first = positional_arg(node)
            target = self.evaluate(first) if first is not None else None
            if target is not None and target.kind is Kind.TENSOR_TYPE:
                return receiver.moved_to(target.device)  # x.type(torch.cuda.FloatTensor): a copy
        if method in kb.D2H_METHODS or (method == "get" and receiver.library == "cupy"):
            return array("numpy", Device.HOST)
        if method == kb.SCALAR_READ_METHOD:
            return SOME_NUMBER
        if method in kb.SCALAR_SYNC_METHODS or method in kb.METADATA_METHODS:
            return None
        if receiver.library == "warp" and (method in kb.WARP_HOST_READ_METHODS or method == kb.WARP_ASSIGN_METHOD):
            return None  # `a.list()`: Python values; `a.assign(x)` returns nothing
        if receiver.holds_fields and method in kb.MODULE_MODE_METHODS:
            return Value(Kind.MODULE, receiver.library, receiver.device)  # `model.cuda().eval()`: only modules switch modes
        if receiver.holds_fields and method in kb.REDUCTIONS:
            return array(receiver.library, receiver.device)  # `labels.max()` of a batch moved with `.cuda()`: only tensors reduce
        if receiver.holds_fields:  # a method of an object moved to the GPU: a tensor there, or a tuple of them
            return replace(receiver, holds_fields=False, inferred=True)
        return receiver

    def _placed_by_device_map(self, node: cst.Call) -> Device | None:
        """Where `AutoModelForCausalLM.from_pretrained(path, device_map=...)` loads the model:
        "auto", "balanced" or "sequential" spread it over the GPUs there are; a device, or a dict of
        devices (`{"": device}`), names where. Without `device_map` it loads on the host, and a
        later `.to(device)` says where it goes."""
        placement = keyword_arg(node, kb.DEVICE_MAP_KEYWORD)
        if placement is None:
            return None
        if literal_string(placement) in kb.DEVICE_MAP_STRATEGIES:
            return Device.MAYBE_GPU
        if isinstance(placement, cst.Dict):
            devices = [self.target_device(element.value) for element in placement.elements if isinstance(element, cst.DictElement)]
            return next((device for device in devices if device is not None and device.on_gpu), None)
        return self.target_device(placement)

    def _library_call(self, qualname: str, node: cst.Call, positional: list[Value | None]) -> Value | None:
        if qualname in kb.THREAD_POOL_FACTORIES:
            return _THREAD_POOL
        if qualname in kb.INDEX_BATCH_SAMPLERS:
            return Value(Kind.INDEX_SAMPLER, "python", Device.HOST)
        if qualname in kb.PROCESS_POOL_FACTORIES:
            return _PROCESS_POOL
        library = kb.library_of(qualname)
        if kb.is_private_api(qualname) or (qualname.rsplit(".", 1)[-1] in kb.NON_ARRAY_FUNCTIONS and qualname not in kb.WARP_DEVICE_QUERIES):
            return None  # `torch.cuda.get_device_name()`: no array; Warp's `get_device()` is a device
        if qualname in kb.GRAD_SCALERS:
            return Value(Kind.INSTANCE, "torch", Device.MAYBE_GPU, class_name=qualname)  # its scale is a GPU tensor
        if qualname in ("numpy.random.default_rng", "cupy.random.default_rng"):
            return Value(Kind.RNG, library or "numpy", Device.GPU if library == "cupy" else Device.HOST)
        if qualname in kb.DEVICE_QUERIES:
            device = Device.GPU if kb.DEVICE_QUERIES[qualname] == "gpu" else Device.MAYBE_GPU
            return Value(Kind.DEVICE, "torch", device)
        if library == "torch" and qualname.removeprefix("torch.") in kb.PYTHON_BOOL_COMPARISONS:
            return None  # `torch.equal(a, b)`: a Python bool, read back by the call itself
        if library == "torch":
            return self._torch_call(qualname, node, positional)
        if library == "cupy":
            if qualname == "cupy.asnumpy":
                return array("numpy", Device.HOST)
            return array("cupy", Device.GPU) if kb.returns_device_array(qualname) else None
        if library == "numpy":
            if qualname in kb.NUMPY_NON_ARRAY:
                return None
            if any(v is not None and v.is_array and v.library == "cupy" for v in positional):
                return array("cupy", Device.GPU)  # NumPy dispatches to CuPy via __array_function__
            return array("numpy", Device.HOST)
        if library == "numba" and qualname in ("numba.cuda.to_device", "numba.cuda.device_array", "numba.cuda.device_array_like"):
            return array("numba", Device.GPU)
        if library == "warp":
            return self._warp_call(qualname, node, positional)
        if library == "cudf":
            return _cudf_call(qualname)
        return None

    def warp_default_device(self) -> Device:
        """Where Warp makes an array without `device=`: the device of an enclosing
        `wp.ScopedDevice(...)`, else Warp's default, the first CUDA device when there is one
        (code written for Warp means to run there, as with `"cuda" if available else "cpu"`)."""
        return self.default_devices[-1] if self.default_devices else Device.MAYBE_GPU

    def _warp_call(self, qualname: str, node: cst.Call, positional: list[Value | None]) -> Value | None:
        """Warp's top-level API: arrays and where they are made, devices, shared arrays, timers."""
        first = positional[0] if positional else None
        if qualname in kb.WARP_TIMERS:
            return _warp_timer(node)
        if qualname == kb.WARP_TAPE:
            return Value(Kind.INSTANCE, "warp", Device.HOST, class_name=kb.WARP_TAPE)
        if qualname in kb.WARP_DEVICE_CONTEXTS or qualname in kb.WARP_DEVICE_QUERIES:
            named = positional_arg(node)
            device = self.target_device(named) if named is not None else None
            if named is None and qualname in kb.WARP_DEVICE_QUERIES:
                device = self.warp_default_device()
            return Value(Kind.DEVICE, "warp", device) if device is not None else None
        if qualname in kb.WARP_SHARED_MEMORY:
            return array(kb.WARP_SHARED_MEMORY[qualname], first.device) if first is not None and first.is_array else None
        if qualname not in kb.WARP_ARRAY_FACTORIES:
            return None
        if qualname == "warp.array" and first is None and not any(keyword_arg(node, key) is not None for key in ("data", "shape", "ptr")):
            return None  # `wp.array(dtype=float)`: a kernel parameter's type, no array
        device_kw = keyword_arg(node, "device")
        if device_kw is not None:
            device = self.target_device(device_kw)
            return array("warp", device) if device is not None else None
        if qualname in kb.WARP_LIKE_FACTORIES:
            return array("warp", first.device) if first is not None and first.is_array else None
        return array("warp", self.warp_default_device())

    def _torch_call(self, qualname: str, node: cst.Call, positional: list[Value | None]) -> Value | None:
        name = qualname.rsplit(".", 1)[-1]  # `torch(1)`, a call of the module itself, has no dot
        if qualname == "torch.device":
            first = positional_arg(node)
            device = self.target_device(first) if first is not None else None
            return Value(Kind.DEVICE, "torch", device) if device is not None else None
        wraps = name in kb.MODULE_WRAPPERS or qualname in kb.COMPILING_WRAPPERS
        if wraps and positional and positional[0] is not None and positional[0].kind is Kind.MODULE:
            return positional[0]  # DistributedDataParallel(model), torch.compile(model): the model, where it already is
        if qualname.startswith(kb.TORCH_NON_ARRAY_PREFIXES):
            return None
        if qualname in kb.PARAMETER_CLASSES:  # a tensor that a module owns, where its data is
            data = positional[0] if positional else None
            return array("torch", data.device) if data is not None and data.is_array else None
        if name in kb.GRADIENT_NORM_FUNCTIONS and qualname.startswith("torch.nn.utils."):
            return self._gradient_norm(node)
        if qualname.startswith("torch.nn.") and name[:1].isupper():
            return Value(Kind.MODULE, "torch", self.made_on())
        device_kw = keyword_arg(node, "device")
        if device_kw is not None:
            device = self.target_device(device_kw)
            return array("torch", device) if device is not None else None
        if qualname == f"torch.{name}" and name in kb.TORCH_FACTORIES:
            if name == "from_numpy":
                return array("torch", Device.HOST)
            if name in kb.TORCH_LIKE_FACTORIES or (name in kb.TORCH_DATA_COPIES and not self.default_devices):
                source = positional[0] if positional else None
                if source is not None and source.is_array:
                    return array("torch", source.device)
                if name in kb.TORCH_LIKE_FACTORIES:
                    return None  # `torch.zeros_like(X)` of an `X` we cannot place: made wherever `X` lives
            return array("torch", self.made_on())
        devices = [v.device for v in self._array_arguments(node, positional)]
        device = merge_devices(devices)
        return array("torch", device) if device is not None else None

    def _gradient_norm(self, node: cst.Call) -> Value | None:
        """`clip_grad_norm_(model.parameters(), c)`: the norm lives with the model's parameters
        (what has `.parameters()` is a module, also where it was taken for an array: `model =
        model.to(device)` of a model handed in)."""
        source = positional_arg(node) or keyword_arg(node, "parameters")
        if not (isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute)):
            return None
        if source.func.attr.value not in kb.PARAMETER_ITERATORS:
            return None
        owner = self.evaluate(source.func.value)
        return array("torch", owner.device) if owner is not None and owner.kind in (Kind.MODULE, Kind.ARRAY) else None

    def _array_arguments(self, node: cst.Call, positional: list[Value | None]) -> list[Value]:
        """Array operands, looking into list/tuple arguments (`torch.cat([a, b])`) and the item of
        a one-clause comprehension (`torch.cat([torch.arange(b) for _ in range(n)])`)."""
        found = [v for v in positional if v is not None and v.is_array]
        for arg in node.args:
            items: list[cst.BaseExpression] = []
            if isinstance(arg.value, (cst.List, cst.Tuple)):
                items = [element.value for element in arg.value.elements]
            elif isinstance(arg.value, (cst.ListComp, cst.GeneratorExp)) and arg.value.for_in.inner_for_in is None:
                items = [arg.value.elt]
            for item in items:
                value = self.evaluate(item)
                if value is not None and value.is_array:
                    found.append(value)
        return found


def _handed_arguments(node: cst.Call, through: Passthrough) -> list[cst.BaseExpression | None] | None:
    """The argument expressions a call of a function that returns its parameters hands back."""
    if any(arg.star for arg in node.args):
        return None  # which parameter gets what is unknown
    positional = [arg.value for arg in node.args if arg.keyword is None]
    keywords = {arg.keyword.value: arg.value for arg in node.args if arg.keyword is not None}
    given: list[cst.BaseExpression | None] = []
    for part in through.parts:
        if part is None:
            given.append(None)
            continue
        index, name = part
        given.append(keywords.get(name, positional[index] if index < len(positional) else None))
    return given


def parameters_of(module: Value, method: str) -> Value:
    """`.parameters()` / `.named_parameters()` (or buffers) of a module: its tensors, where it lives,
    as plain tensors or as (name, tensor) pairs."""
    named = kb.NAMED_PARAMETERS if method in kb.NAMED_PARAMETER_ITERATORS else None
    return Value(Kind.PARAMETERS, module.library, module.device, class_name=named)


def _kept_parameters(qualname: str | None, positional: list[Value | None]) -> Value | None:
    """`list(model.parameters())`, `filter(lambda p: p.grad is not None, params)`: still the
    module's parameter tensors (some of them), one per iteration; `dict(model.named_parameters())`
    maps each name to its tensor."""
    handed = positional[-1] if qualname == "builtins.filter" and len(positional) == 2 else None
    if qualname in ("builtins.list", "builtins.tuple", "builtins.dict", "collections.OrderedDict") and len(positional) == 1:
        handed = positional[0]
    if handed is None or handed.kind is not Kind.PARAMETERS:
        return None
    if qualname in ("builtins.dict", "collections.OrderedDict") and handed.class_name == kb.NAMED_PARAMETERS:
        return replace(handed, class_name=kb.PARAMETERS_BY_NAME)
    return handed


def _accelerator_setup(func: cst.BaseExpression) -> bool:
    """`fabric.setup(model)`, `self.accelerator.prepare(model)`: the framework moves the model to
    the accelerator it was configured for."""
    return _accelerator_method(func, kb.ACCELERATOR_SETUP_METHODS)


def _accelerator_method(func: cst.BaseExpression, methods: frozenset[str]) -> bool:
    """A call of one of `methods` on a Fabric or Accelerate object, by the names code gives them."""
    if not isinstance(func, cst.Attribute) or func.attr.value not in methods:
        return False
    owner = dotted_name(func.value)
    return owner is not None and owner.rsplit(".", 1)[-1].lower() in kb.ACCELERATOR_NAMES


def _warp_timer(node: cst.Call) -> Value | None:
    """`wp.ScopedTimer(name, ...)`: a timer object, marked by whether it synchronises; None when
    it is switched off (`active=False`)."""
    active = keyword_arg(node, kb.TIMER_ACTIVE_KEYWORD)
    if isinstance(active, cst.Name) and active.value == "False":
        return None
    synchronize = keyword_arg(node, kb.TIMER_SYNCHRONIZE_KEYWORD)
    # `synchronize=args.sync`: perhaps; only a literal False (or none given) is known not to wait.
    waits = synchronize is not None and not (isinstance(synchronize, cst.Name) and synchronize.value == "False")
    return Value(Kind.INSTANCE, "warp", Device.HOST, class_name=kb.SYNCHRONIZED_TIMER_OBJECT if waits else kb.TIMER_OBJECT)


def method_receiver(node: cst.BaseExpression, method: str) -> cst.BaseExpression | None:
    """`x` of `x.items()`: the receiver of a call of this method with no arguments, else None."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == method and not node.args:
        return node.func.value
    return None


def cudf_element_read(node: cst.Subscript, frame: Value, holds_position: Callable[[cst.BaseExpression], bool]) -> bool:
    """`s.iloc[i]`, `df.iat[i, j]`, `s.loc["key"]`: one element of a cuDF frame, read back to the
    host. `.iat`/`.at` always read one; `.iloc`/`.loc` do when every index is one position and
    they index a Series, or a frame by row and column (a frame's row alone is a Series, left on the
    GPU). `holds_position` says whether an index is one integer position or label."""
    indexer = node.value.attr.value if isinstance(node.value, cst.Attribute) else None
    if frame.library != "cudf" or indexer not in kb.CUDF_ELEMENT_INDEXERS:
        return False
    indices = [element.slice.value for element in node.slice if isinstance(element.slice, cst.Index)]
    if len(indices) != len(node.slice) or not all(holds_position(index) for index in indices):
        return False
    return indexer in ("iat", "at") or len(indices) == 2 or frame.class_name == kb.CUDF_SERIES


def _cudf_attribute(frame: Value, attr: str) -> Value | None:
    """`.values` is a CuPy array of the same data on the GPU, `.values_host` a NumPy copy; an
    element indexer (`.iloc`) stands for the frame it indexes; `.index` and `.T` are frames
    there. Other attributes (`.columns`, `.shape`, a column by attribute) are left unknown."""
    if attr == kb.CUDF_DEVICE_VALUES:
        return array("cupy", frame.device)
    if attr == kb.CUDF_HOST_VALUES:
        return array("numpy", Device.HOST)
    if attr in kb.CUDF_ELEMENT_INDEXERS:
        return frame
    if attr in ("index", "T"):
        return replace(frame, class_name=None)
    return None


def _cudf_method(frame: Value, method: str) -> Value | None:
    """What a method of a cuDF frame returns: host copies (`to_pandas`, `to_numpy`), a Series'
    reductions (a NumPy scalar), `to_cupy` (a CuPy array), and otherwise a frame on the GPU whose
    kind (Series or DataFrame) we do not follow."""
    if method == "to_numpy":
        return array("numpy", Device.HOST)
    if method in kb.CUDF_HOST_COPY_METHODS or method in kb.CUDF_ITERATORS or method in kb.METADATA_METHODS or method.startswith(("is_", "has_")):
        return None
    if frame.class_name == kb.CUDF_SERIES and method in kb.CUDF_SERIES_REDUCTIONS:
        return SOME_NUMBER
    if method == "to_cupy":
        return array("cupy", frame.device)
    return replace(frame, class_name=None, shape=None)


def _cudf_call(qualname: str) -> Value | None:
    """A cuDF reader, constructor or reshape builds a frame on the GPU (a Series, for
    `cudf.Series(...)` and its `from_*` constructors); other names of the package do not."""
    owner, name = qualname.rsplit(".", 1)
    if qualname in kb.CUDF_FRAME_FACTORIES or (owner in kb.CUDF_FRAME_CLASSES and name.startswith("from_")):
        series = kb.CUDF_SERIES in (qualname, owner)
        return Value(Kind.ARRAY, "cudf", Device.GPU, class_name=kb.CUDF_SERIES if series else None)
    return None


def legacy_scalar_read(node: cst.Subscript) -> bool:
    """`loss.data[0]`: how PyTorch before 0.4 read a loss as a Python number (a sync, like
    `.item()` today, which it became; on a 0-d tensor it now fails)."""
    index = node.slice[0].slice if len(node.slice) == 1 else None
    return (
        isinstance(node.value, cst.Attribute)
        and node.value.attr.value == "data"
        and isinstance(index, cst.Index)
        and isinstance(index.value, cst.Integer)
        and index.value.value == "0"
    )


def _names_array_field(attr: str) -> bool:
    """A field of a data object that holds an array, not a count, metadata or a mapping
    (`batch.num_graphs`, `graph.meta_dict`)."""
    if attr in kb.METADATA_ATTRIBUTES or attr.startswith(("_", "is_", "has_")):  # `batch.is_cuda`: a bool
        return False
    return not attr.startswith(kb.COUNT_FIELD_PREFIXES) and not attr.endswith(kb.COUNT_FIELD_SUFFIXES + kb.MAPPING_FIELD_SUFFIXES)


#: Sizes beyond this are not array sizes: folding stops (`x = 2**64; x = x * x` ... stays cheap).
_LARGEST_FOLDED = 2.0**63


def _bounded_number(value: float | complex) -> Value | None:
    if isinstance(value, complex):  # `(-8) ** 0.5`: no size is complex
        return None
    try:
        magnitude = abs(float(value))
    except OverflowError:
        return None
    return number(value) if magnitude <= _LARGEST_FOLDED else None


def _arithmetic(operator: cst.BaseBinaryOp, left: Value | None, right: Value | None) -> Value | None:
    """Constant folding for sizes: `2 * N`, `1 << 20`, `N // 4`, `10**6`."""
    if left is None or right is None or left.kind is not Kind.NUMBER or right.kind is not Kind.NUMBER:
        return None
    a, b = left.number, right.number
    if a is None or b is None:
        return SOME_NUMBER  # `total + loss.item()`: a number, not a known one
    try:
        if isinstance(operator, cst.Add):
            return _bounded_number(a + b)
        if isinstance(operator, cst.Subtract):
            return _bounded_number(a - b)
        if isinstance(operator, cst.Multiply):
            return _bounded_number(a * b)
        if isinstance(operator, cst.FloorDivide):
            return _bounded_number(a // b)
        if isinstance(operator, cst.Divide):
            return _bounded_number(a / b)
        if isinstance(operator, cst.Modulo):
            return _bounded_number(a % b)
        if isinstance(operator, cst.Power) and abs(a) < 1e6 and 0 <= b <= 64:
            return _bounded_number(a**b)
        both_int = float(a).is_integer() and float(b).is_integer() and 0 <= b <= 62
        if isinstance(operator, cst.LeftShift) and both_int:
            return _bounded_number(int(a) << int(b))
        if isinstance(operator, cst.RightShift) and both_int:
            return _bounded_number(int(a) >> int(b))
    except (ZeroDivisionError, OverflowError, ValueError):
        return None
    return None


_HANDLERS: dict[type, Callable[[Evaluator, Any], Value | None]] = {
    cst.Name: Evaluator._name,
    cst.Call: Evaluator._evaluate_call,
    cst.Attribute: Evaluator._evaluate_attribute,
    cst.BinaryOperation: Evaluator._binary,
    cst.Comparison: Evaluator._comparison,
    cst.UnaryOperation: Evaluator._unary,
    cst.Subscript: Evaluator._subscript,
    cst.SimpleString: Evaluator._string,
    cst.FormattedString: Evaluator._formatted_string,
    cst.Integer: Evaluator._number,
    cst.Float: Evaluator._number,
    cst.IfExp: Evaluator._if_expression,
    cst.Tuple: Evaluator._sequence,
    cst.List: Evaluator._sequence,
    cst.Set: Evaluator._sequence,
    cst.ListComp: Evaluator._comprehension,
    cst.DictComp: Evaluator._dict_comprehension,
    cst.GeneratorExp: Evaluator._comprehension,
    cst.BooleanOperation: Evaluator._boolean,
    cst.Await: Evaluator._await,
    cst.NamedExpr: Evaluator._walrus,
}


def _may_name_tensor_class(func: cst.BaseExpression) -> bool:
    """A cheap test before evaluating a callee: legacy tensor classes end in "Tensor"."""
    if isinstance(func, cst.Attribute):
        return func.attr.value.endswith("Tensor")
    return isinstance(func, cst.Name) and func.value.endswith("Tensor")


def _returns_several(node: cst.Call, name: str, library: str, is_method: bool) -> bool:
    """`cp.meshgrid(...)`, `np.where(cond)`, `torch.max(x, dim=1)`: a tuple of arrays, not an array."""
    if name in kb.MULTI_RESULT_FUNCTIONS:
        return True
    positional = sum(1 for arg in node.args if arg.keyword is None) + (1 if is_method else 0)
    if library == "torch" and name in kb.TORCH_VALUES_INDICES:
        has_dim = positional > 1 or any(arg.keyword is not None and arg.keyword.value == "dim" for arg in node.args)
        return name == "sort" or has_dim
    if name == "where" and positional == 1:
        return True
    return name == "nonzero" and library != "torch"


#: NumPy's random draws that return one number unless given a size, by the position of `size`.
_DRAW_SIZE_POSITION = {
    "choice": 1, "randint": 2, "integers": 2, "normal": 2, "uniform": 2, "binomial": 2, "beta": 2, "gamma": 2,
    "laplace": 2, "poisson": 1, "exponential": 1, "random": 0, "random_sample": 0, "standard_normal": 0,
}


def _draws_one_number(node: cst.Call, qualname: str) -> bool:
    """`np.random.choice(ids)`, `np.random.randint(0, n)`, `np.random.rand()`: without a size (or,
    for `rand`/`randn`, without dimensions) NumPy hands back one number, not an array; indexing a
    tensor with it is plain integer indexing, with no index array to copy."""
    module, _, name = qualname.rpartition(".")
    if module != "numpy.random":
        return False
    if name in ("rand", "randn"):
        return not node.args
    position = _DRAW_SIZE_POSITION.get(name)
    return position is not None and keyword_arg(node, "size") is None and positional_arg(node, position) is None and not any(arg.star for arg in node.args)
