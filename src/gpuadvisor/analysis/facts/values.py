"""The abstract values the fact walk tracks for names and expressions.

Only what the rules need is modelled: is this an array (or a module holding parameters, a
device spec, a thread pool), from which library, and where does it live. Anything the walk
cannot establish is simply absent (`None`), and rules stay silent on absent facts.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, replace


class Device(enum.Enum):
    HOST = "host"
    GPU = "gpu"
    #: Chosen at run time, e.g. ``"cuda" if torch.cuda.is_available() else "cpu"``; code
    #: written that way is meant to run on a GPU, so rules treat it as one.
    MAYBE_GPU = "maybe-gpu"

    @property
    def on_gpu(self) -> bool:
        return self is not Device.HOST


class Evidence(enum.IntEnum):
    """How a value's place on the GPU is known; rules ask for the level their severity needs."""

    #: The result of a call we cannot see into (`criterion(out, y)`) handed GPU arrays.
    INFERRED = 1
    #: The device is chosen at run time or named by convention (`"cuda" if available else
    #: "cpu"`, a `device` parameter, `.to(local_rank)`): code written to run on a GPU.
    CONFIGURED = 2
    #: The code names the GPU: `device="cuda"`, `.cuda()`, a CuPy function.
    ESTABLISHED = 3


class Kind(enum.Enum):
    ARRAY = "array"  # ndarray, tensor, device array
    MODULE = "module"  # a callable holding parameters (torch.nn.Module); its output lives with it
    DEVICE = "device"  # a device spec: "cuda", torch.device("cuda:0"), x.device
    NUMBER = "number"  # an int/float constant we can compute with (N = 4096; 1 << 20)
    SEQUENCE = "sequence"  # a list/tuple literal written out in the code (a handful of settings)
    #: A module's parameter (or buffer) tensors, `model.parameters()`, also through `list()` or
    #: `filter()`: iterating it visits one tensor per parameter, on the module's device.
    PARAMETERS = "parameters"
    RNG = "rng"  # np.random.default_rng(): its methods make host arrays from nothing
    INSTANCE = "instance"  # an object of a class of the checked project (`ema = EMAHelper()`)
    #: A legacy tensor class (`torch.cuda.FloatTensor`, or `Tensor = torch.cuda.FloatTensor if
    #: cuda else torch.FloatTensor`): calling it, or `.type()` with it, makes a tensor on its device.
    TENSOR_TYPE = "tensor-type"
    #: What calling a generator function of the checked project gives: iterating it hands out
    #: the array its `yield`s agree on (`for obs, ret in storage.batches()`), whose library and
    #: device this value carries. Not an array itself: its items are not rows of anything.
    ITEMS = "items"
    #: A sampler that hands out each mini-batch as a Python list of indices (`BatchSampler(...)`).
    INDEX_SAMPLER = "index-sampler"
    #: One of those lists: indexing a tensor with it copies it to the tensor's device first.
    INDEX_LIST = "index-list"
    #: A KeOps formula (`LazyTensor(x[:, None])`, arithmetic on one, a `Genred` routine): no data
    #: and no kernel until it is reduced or called (see `formulas`). Its library is that of the
    #: arrays its reductions hand back; `inferred` when no input's device is known.
    FORMULA = "formula"
    THREAD_POOL = "thread-pool"
    PROCESS_POOL = "process-pool"


@dataclass(frozen=True)
class Value:
    kind: Kind
    library: str  # numpy | cupy | torch | numba | python
    device: Device
    #: Guessed, not established: the result of a call we cannot see into (`criterion(out, y)`)
    #: with GPU arrays as arguments. Good enough where only an array could be there
    #: (`loss.item()`), not where a Python number could (`float(loss)`).
    inferred: bool = False
    shape: tuple[int, ...] | None = None  # statically known array shape
    dtype: str | None = None  # statically known element type ("float32", "float64", "int64")
    number: float | None = None  # the value of a NUMBER
    #: Arrays: made from nothing (RNG, zeros, arange), so a GPU could create them in place;
    #: False for data that came from files, lists, parameters and must be copied to a GPU.
    generated: bool = False
    #: An object of unknown type moved with `.to(device)` / `.cuda()` (a PyG/DGL batch, a
    #: data record): its array fields (`batch.x`, `data.train_mask`) live on that device too.
    holds_fields: bool = False
    #: The fields are a mapping's values (the batch a trainer hands its step methods): iterating
    #: it hands out keys, or the examples of a collator that keeps rows, not arrays.
    keyed: bool = False
    #: Modules and instances of a class defined in the checked project: its key ("EMAHelper",
    #: "MoCo"), so `obj.update(...)` and `model(x)` resolve to that class's methods.
    class_name: str | None = None
    #: The number of dimensions when the sizes are not known (`cupy.empty((natm, 3, nao, nao))`).
    ndim: int | None = None
    #: A module's output (`pred = model(imgs)`): one tensor or a tuple, list or dict of them (a
    #: detector's per-scale maps), so iterating it may visit items rather than rows.
    packed: bool = False
    #: An array a library computed and waited for (a KeOps reduction): its backward pass runs
    #: through that library and waits too.
    backward_waits: bool = False
    #: What a function returns when it makes the array on the device a parameter names, where
    #: that parameter defaults to the host (`def is_known_frame(frame_type, device=None):
    #: return torch.tensor(..., device=device)`): (position, name) of the parameter. Each call
    #: places the result where its own argument says (see `Evaluator.placed_by_call`).
    placed_by: tuple[int, str] | None = None

    @property
    def on_gpu(self) -> bool:
        return self.device.on_gpu

    @property
    def is_array(self) -> bool:
        return self.kind is Kind.ARRAY

    @property
    def evidence(self) -> Evidence | None:
        """How we know this value is on the GPU (None when it is not)."""
        if not self.device.on_gpu:
            return None
        if self.inferred:
            return Evidence.INFERRED
        return Evidence.CONFIGURED if self.device is Device.MAYBE_GPU else Evidence.ESTABLISHED

    def on_gpu_by(self, evidence: Evidence) -> bool:
        """An array on the GPU, known at least this well."""
        found = self.evidence
        return self.kind is Kind.ARRAY and found is not None and found >= evidence

    @property
    def names_the_host(self) -> bool:
        """A device the code names as the host (`torch.device("cpu")`, `"cpu"`), not one read
        off a value that merely has not been moved (see `Evaluator` on `x.device`)."""
        return self.kind is Kind.DEVICE and self.device is Device.HOST and not self.inferred

    @property
    def is_gpu_array(self) -> bool:
        """An array on the GPU by configuration or better: what GPU work and copies are read from."""
        return self.on_gpu_by(Evidence.CONFIGURED)

    @property
    def is_device_array(self) -> bool:
        """Maybe only inferred to be on the GPU: enough where only an array could be (`x.item()`)."""
        return self.on_gpu_by(Evidence.INFERRED)

    @property
    def rank(self) -> int | None:
        """The number of dimensions, from the shape or, without one, from how the array was built."""
        return len(self.shape) if self.shape is not None else self.ndim

    def moved_to(self, device: Device) -> Value:
        return replace(self, device=device)

    def submodule(self) -> Value:
        """A module this module holds (`self.nets["policy"]`, each of `zip(self.layers, ...)`,
        `self.encoder`): on the device its container was moved to, of a class not known."""
        return Value(Kind.MODULE, self.library, self.device)


def merge_devices(devices: list[Device]) -> Device | None:
    """Where the result of combining operands lives: a GPU operand wins, as frameworks do."""
    if not devices:
        return None
    if Device.GPU in devices:
        return Device.GPU
    if Device.MAYBE_GPU in devices:
        return Device.MAYBE_GPU
    return Device.HOST


def either(first: Value | None, second: Value | None) -> Value | None:
    """The value of ``a if cond else b``: where the branches disagree on device, maybe-GPU."""
    if first is None or second is None:
        return first or second
    if first == second:
        return first
    if first.kind is not second.kind:
        return None
    if first.on_gpu or second.on_gpu:
        library = first.library if first.library == second.library else "python"
        return Value(first.kind, library, Device.MAYBE_GPU)
    return first


def array(
    library: str,
    device: Device,
    inferred: bool = False,
    shape: tuple[int, ...] | None = None,
    dtype: str | None = None,
    generated: bool = False,
) -> Value:
    return Value(Kind.ARRAY, library, device, inferred, shape, dtype, generated=generated)


def number(value: float) -> Value:
    return Value(Kind.NUMBER, "python", Device.HOST, number=value)


#: A Python number whose value the code does not show: what `loss.item()`, `float(t)` or
#: `len(batch)` hand back, on the host whatever they read.
SOME_NUMBER = Value(Kind.NUMBER, "python", Device.HOST)


@dataclass(frozen=True)
class Passthrough:
    """A function that hands back what it was given: `return model` after wrapping it in place
    (`apply_gradient_allreduce(model)`), or `return model, optimizer, step` from a checkpoint
    loader. `parts` holds, per returned value, the (position, name) of the parameter returned
    unchanged, or None; `single` is a plain `return x`, not a tuple. `made` holds, per item of a
    returned tuple, what the function itself made there when every `return` agrees on it (a GPU
    module or array, or a device: `return model, tokenizer` after `from_pretrained(...,
    device_map="auto")`), or None; empty when no item is known."""

    parts: tuple[tuple[int, str] | None, ...]
    single: bool
    made: tuple[Value | None, ...] = ()


#: `next(obj)` runs the `__next__` of the object's class.
NEXT_METHOD = "__next__"


def iterated_instance(qualname: str | None, handed: Sequence[Value | None]) -> Value | None:
    """The object of a class that `next(obj)` is handed (a batch fetcher): its `__next__` runs."""
    first = handed[0] if qualname == "builtins.next" and handed else None
    return first if first is not None and first.kind is Kind.INSTANCE and first.class_name else None


def next_method(qualname: str | None, handed: Sequence[Value | None]) -> str | None:
    """The method `next(obj)` runs, as `Class.__next__` (None when `obj` is no object of a known class)."""
    fetched = iterated_instance(qualname, handed)
    return f"{fetched.class_name}.{NEXT_METHOD}" if fetched is not None else None