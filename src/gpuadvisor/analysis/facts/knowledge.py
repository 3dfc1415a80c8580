"""The one table of what we know about NumPy, CuPy, torch, numba and the standard library.

Every fact the walk and the rules use about a library API lives here, grouped by the question
it answers: does this return a device array, does it make the host wait, does it copy, is it
pure, what does it do to shapes. Adding an API is a one-line change in one place. The last
group is weaker evidence (what a name's spelling suggests), used only where nothing better is
known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuadvisor.ops.registry import OPS


# -- Which library a name belongs to, and what returns a device array --------------------------
ARRAY_LIBRARIES = ("numpy", "cupy", "cupyx", "torch", "numba", "warp", "cudf")


def library_of(qualname: str) -> str | None:
    """Which array library a qualified name belongs to.

    For NVIDIA Warp only its top-level API (`wp.array`, `wp.launch`, `wp.synchronize`) counts:
    its sub-packages (`warp.sim`, `warp.fem`, `warp.render`) are simulators, solvers and
    renderers whose calls may read back, allocate or synchronise inside, like a project's code.
    """
    top = qualname.split(".", 1)[0]
    if top == "cupyx":
        return "cupy"
    if top == "warp":
        return "warp" if qualname.count(".") == 1 or qualname in WARP_TIMERS else None
    return top if top in ARRAY_LIBRARIES else None


def is_private_api(qualname: str) -> bool:
    """`torch._C._foo`, `numpy._core.x`: internals whose results we do not model."""
    return any(part.startswith("_") for part in qualname.split(".")[1:])


def returns_device_array(qualname: str) -> bool:
    """Is this CuPy/cupyx name a public function known to return an array on the GPU?

    GPU-ness comes only from the public array API: private modules (`cupy._core.internal`)
    and classes (`NCCLBackend`, `PPoly`) hold helpers returning anything, and the type and
    shape queries return Python objects.
    """
    parts = qualname.split(".")
    if any(part.startswith("_") for part in parts[1:]) or parts[-1][:1].isupper():
        return False
    return parts[-1] not in NON_ARRAY_FUNCTIONS and not qualname.startswith(NON_ARRAY_NAMESPACES)


#: Functions of the array namespaces that answer a question about types, shapes or values
#: with a Python object (a bool, a dtype, a tuple, a string), never an array.
NON_ARRAY_FUNCTIONS = frozenset(
    {
        "issubdtype", "can_cast", "result_type", "promote_types", "min_scalar_type", "common_type", "isdtype",
        "ndim", "shape", "size", "isscalar", "iterable", "binary_repr", "base_repr", "finfo", "iinfo", "dtype",
        "typename", "mintypecode", "get_array_module", "array_repr", "array_str", "array2string",
        "format_float_positional", "format_float_scientific", "may_share_memory", "shares_memory", "is_available",
        "get_include", "show_config", "numel", "is_tensor", "is_storage", "is_floating_point", "is_complex",
        "get_default_dtype", "set_default_dtype", "obj2sctype", "sctype2char", "broadcast_shapes", "get_device",
        "device_count", "typecodes", "ndindex", "ndenumerate", "fuse", "vectorize", "errstate", "seterr", "geterr",
        "set_printoptions", "get_printoptions", "printoptions", "save", "savez", "savez_compressed", "savetxt",
        "issparse", "isspmatrix", "isspmatrix_csr", "isspmatrix_csc", "isspmatrix_coo", "isspmatrix_dia",
        "isrealobj", "iscomplexobj", "isfortran", "is_cuda_array",
    }
)
#: Sub-namespaces of the array libraries whose calls do not return arrays (handles, kernels,
#: streams, profilers, communicators, testing helpers).
NON_ARRAY_NAMESPACES = (
    "cupy.cuda.", "cupy.testing.", "cupy.typing.", "cupyx.profiler.", "cupyx.jit.", "cupyx.distributed.",
    "cupyx.optimizing.", "cupyx.time.", "cupy.random.seed", "cupy.get_default_memory_pool",
    "cupy.get_default_pinned_memory_pool", "cupy.RawKernel", "cupy.ElementwiseKernel", "cupy.ReductionKernel",
    "cupy.RawModule",
)
#: torch namespaces whose calls are not array operations.
TORCH_NON_ARRAY_PREFIXES = (
    "torch.cuda.", "torch.backends.", "torch.device", "torch.manual_seed", "torch.set_",
    "torch.get_", "torch.no_grad", "torch.inference_mode", "torch.autocast", "torch.compile",
    "torch.utils.", "torch.save", "torch.load", "torch.jit.", "torch.distributed.",
    "torch.is_tensor", "torch.is_grad_enabled", "torch.enable_grad", "torch.optim.",
    "torch.dtype", "torch.finfo", "torch.iinfo", "torch.Generator", "torch.Size",
)
NUMPY_NON_ARRAY = frozenset(
    {
        "numpy.random.seed", "numpy.random.RandomState",
        "numpy.dtype", "numpy.finfo", "numpy.iinfo", "numpy.errstate", "numpy.seterr",
        "numpy.set_printoptions", "numpy.save", "numpy.savez", "numpy.savetxt", "numpy.shape",
        "numpy.ndim", "numpy.size", "numpy.isscalar", "numpy.result_type", "numpy.may_share_memory",
    }
) | frozenset(  # scalar types: `np.float32(0.5)` is one number, not an array
    f"numpy.{name}{bits}" for name in ("float", "int", "uint", "complex") for bits in ("", "8", "16", "32", "64", "128")
)
#: torch functions that build a new tensor; with no `device=` they build it on the host.
TORCH_FACTORIES = frozenset(
    {
        "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
        "linspace", "logspace", "eye", "tensor", "as_tensor", "from_numpy", "zeros_like",
        "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
        "normal", "Tensor", "FloatTensor", "LongTensor",
    }
)
#: Legacy typed tensor classes: `torch.FloatTensor` builds on the host, `torch.cuda.FloatTensor`
#: on the GPU (from sizes, or by copying the data it is handed).
LEGACY_TENSOR_TYPES = frozenset(
    f"{kind}Tensor" for kind in ("Float", "Double", "Half", "BFloat16", "Byte", "Char", "Short", "Int", "Long", "Bool")
)


def legacy_tensor_device(qualname: str | None) -> str | None:
    """"gpu" for `torch.cuda.FloatTensor`, "host" for `torch.FloatTensor`, None otherwise."""
    if qualname is None or not qualname.endswith("Tensor"):
        return None
    head, _, name = qualname.rpartition(".")
    if name not in LEGACY_TENSOR_TYPES:
        return None
    return "gpu" if head == "torch.cuda" else "host" if head == "torch" else None


#: The factories that copy user data in (the rest make data from nothing).
TORCH_DATA_COPIES = frozenset({"tensor", "as_tensor", "Tensor", "FloatTensor", "LongTensor"})
TORCH_LIKE_FACTORIES = frozenset(
    {"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like"}
)
#: Functions and methods that return several arrays (a tuple or list), not one array.
MULTI_RESULT_FUNCTIONS = frozenset(
    {
        "broadcast_arrays", "broadcast_tensors", "meshgrid", "split", "array_split", "hsplit", "vsplit",
        "dsplit", "tensor_split", "chunk", "unbind", "unravel_index", "histogram", "histogram2d",
        "histogramdd", "gradient", "topk", "svd", "qr", "eig", "eigh", "slogdet", "lstsq", "frexp", "modf",
        "divmod", "unique_consecutive", "atleast_1d", "atleast_2d", "atleast_3d", "kthvalue", "mode",
        "std_mean", "var_mean", "aminmax", "cummax", "cummin",
    }
)
#: torch returns (values, indices) for these when reducing along a dimension.
TORCH_VALUES_INDICES = frozenset({"max", "min", "median", "sort"})
#: Attributes of an array that are arrays again, on the same device.
ARRAY_VIEW_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag", "data", "grad", "flat"})
#: Methods that exist only on modules (torch.nn.Module): whatever we thought the receiver
#: was, the result is not an array.
MODULE_ONLY_METHODS = frozenset(
    {
        "parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children", "modules",
        "named_modules", "state_dict", "load_state_dict", "zero_grad", "apply", "register_buffer",
        "keys", "values", "items",  # a ModuleDict / ParameterDict: its entries, not an array
    }
)
#: Attributes that hold a handful of entries by construction (an optimizer's parameter groups).
SMALL_COLLECTION_ATTRIBUTES = frozenset({"param_groups", "columns"})
#: Module methods that yield its parameter tensors, one per iteration (on the module's device).
PARAMETER_ITERATORS = frozenset({"parameters", "buffers"})
NAMED_PARAMETER_ITERATORS = frozenset({"named_parameters", "named_buffers"})
ALL_PARAMETER_ITERATORS = PARAMETER_ITERATORS | NAMED_PARAMETER_ITERATORS
#: How a module's parameters are held (the `class_name` of a `Kind.PARAMETERS` value): pairs of
#: (name, tensor) as `named_parameters()` yields them, or a dict from name to tensor.
NAMED_PARAMETERS = "named"
PARAMETERS_BY_NAME = "by-name"
#: `module.state_dict()`: every parameter and buffer tensor by name (a dict, held as PARAMETERS_BY_NAME).
STATE_DICT_METHOD = "state_dict"
#: Methods run through the object (`model(x)` runs `forward`): seen callers are never all of them,
#: so one call site seen running once does not make the method a one-off.
PER_CALL_METHODS = frozenset({"forward", "__call__"})
#: Methods of a model that run it on its device: a forward pass, or Hugging Face's `generate`.
MODULE_RUN_METHODS = PER_CALL_METHODS | {"generate"}
#: Methods of a model that make their own input and compute on it when handed nothing
#: (`vae.sample()`, `model.generate()`).
INPUTLESS_RUN_PREFIXES = ("sample", "generate")
#: torch's in-place arithmetic methods: the tensor they change must be on the device of the
#: tensors they are handed (only `copy_` may cross devices, so it is not here), so
#: `ema.lerp_(p, 0.1)` with `p` on the GPU is a GPU kernel even when `ema` is not known.
SAME_DEVICE_IN_PLACE_METHODS = frozenset(
    {"add_", "sub_", "mul_", "div_", "lerp_", "addcmul_", "addcdiv_", "clamp_", "pow_"}
)
#: `nn.Parameter(t)`, `nn.Buffer(t)`: tensors (not modules) that move with the module holding them.
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer", "torch.nn.parameter.Buffer"})
#: The Lightning module base class under its import paths: a torch module whose per-batch hooks
#: the trainer calls, on the accelerator it was given.
LIGHTNING_MODULES = frozenset(
    {
        "pytorch_lightning.LightningModule", "pytorch_lightning.core.LightningModule",
        "pytorch_lightning.core.module.LightningModule", "pytorch_lightning.core.lightning.LightningModule",
        "lightning.LightningModule", "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
        "lightning.pytorch.core.module.LightningModule",
    }
)
#: Hooks a Lightning trainer calls once per batch (lightning/pytorch/core/hooks.py, module.py).
LIGHTNING_BATCH_HOOKS = frozenset(
    {
        "training_step", "validation_step", "test_step", "predict_step", "on_train_batch_start",
        "on_train_batch_end", "on_validation_batch_start", "on_validation_batch_end", "on_test_batch_start",
        "on_test_batch_end", "on_before_backward", "on_after_backward", "on_before_optimizer_step",
        "on_before_zero_grad", "optimizer_step", "training_step_end", "validation_step_end",
    }
)
@dataclass(frozen=True)
class FrameworkStep:
    """Methods of a framework's base class that its trainer calls once per step, and the
    parameters it hands them: the model, on the accelerator, and the batch, moved there first."""

    trainer: str  # who calls them, for messages ("fairseq's trainer")
    methods: frozenset[str]
    model: str | None
    batch: str | None
    #: Parameters that are tensors on the accelerator (a logits processor's `input_ids`, `scores`).
    tensors: frozenset[str] = frozenset()
    #: Every parameter annotated as a tensor is one on the accelerator (a metric's `update(preds:
    #: Tensor, target: Tensor)`, whose names each metric chooses).
    annotated_tensors: bool = False


#: Tensor fields of a Hugging Face model's output (`transformers.utils.ModelOutput`): no tensor
#: has an attribute of these names, so `model(**inputs).loss` is a tensor where the model runs.
MODEL_OUTPUT_FIELDS = frozenset(
    {"loss", "logits", "last_hidden_state", "hidden_states", "attentions", "pooler_output", "encoder_last_hidden_state"}
)
_FAIRSEQ_CRITERION = FrameworkStep("fairseq's trainer", frozenset({"forward"}), "model", "sample")
_HF_TRAINER = FrameworkStep(
    "the Hugging Face Trainer", frozenset({"compute_loss", "training_step", "prediction_step"}), "model", "inputs"
)
_HF_GENERATION_HOOK = FrameworkStep(
    "the Hugging Face generation loop", frozenset({"__call__"}), None, None,
    frozenset({"input_ids", "scores"}),
)
_TORCHMETRICS_METRIC = FrameworkStep(
    "the loop that feeds the metric its batches", frozenset({"update"}), None, None, annotated_tensors=True
)
_IGNITE_METRIC = FrameworkStep("the engine that feeds the metric its batches", frozenset({"update"}), None, "output")
#: Framework base classes (by import path) whose subclasses' step methods run once per step:
#: a fairseq criterion's `forward(model, sample)` (fairseq/criterions/fairseq_criterion.py), a
#: Hugging Face `Trainer`'s `compute_loss`/`training_step`/`prediction_step(model, inputs)`, and the
#: `__call__(input_ids, scores)` of a logits processor or stopping criterion, which `generate()`
#: calls on every generated token with the model's tensors; a torchmetrics `Metric`'s `update`, which
#: `metric(preds, target)` or `metric.update(...)` runs on every training or evaluation batch with
#: the model's outputs (its `compute` runs once per epoch), and an ignite `Metric`'s
#: `update(output)`, which the engine calls on every iteration with `(y_pred, y)` from the model.
FRAMEWORK_STEPS = {
    "torchmetrics.Metric": _TORCHMETRICS_METRIC,
    "torchmetrics.metric.Metric": _TORCHMETRICS_METRIC,
    "ignite.metrics.Metric": _IGNITE_METRIC,
    "ignite.metrics.metric.Metric": _IGNITE_METRIC,
    "fairseq.criterions.FairseqCriterion": _FAIRSEQ_CRITERION,
    "fairseq.criterions.fairseq_criterion.FairseqCriterion": _FAIRSEQ_CRITERION,
    "transformers.Trainer": _HF_TRAINER,
    "transformers.trainer.Trainer": _HF_TRAINER,
    "transformers.Seq2SeqTrainer": _HF_TRAINER,
    "transformers.trainer_seq2seq.Seq2SeqTrainer": _HF_TRAINER,
    **{
        f"{module}.{hook}": _HF_GENERATION_HOOK
        for module in ("transformers", "transformers.generation", "transformers.generation.logits_process", "transformers.generation.stopping_criteria")
        for hook in ("LogitsProcessor", "LogitsWarper", "StoppingCriteria")
    },
}
#: Base classes of custom optimizers: the tensors of `group["params"]` in their `step()` are
#: the trained model's parameters.
#: Subclassing a built-in optimizer to override `step()` (composer's `DecoupledAdamW(AdamW)`) is the
#: same: its `step()` runs once per training step on the model's parameters.
_BUILTIN_OPTIMIZERS = {
    "sgd": "SGD", "adam": "Adam", "adamw": "AdamW", "rmsprop": "RMSprop", "adagrad": "Adagrad", "adadelta": "Adadelta",
    "adamax": "Adamax", "nadam": "NAdam", "radam": "RAdam", "asgd": "ASGD", "rprop": "Rprop", "lbfgs": "LBFGS",
    "sparse_adam": "SparseAdam", "adafactor": "Adafactor",
}
OPTIMIZER_BASES = frozenset(
    {"torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"}
    | {f"torch.optim.{name}" for name in _BUILTIN_OPTIMIZERS.values()}
    | {f"torch.optim.{module}.{name}" for module, name in _BUILTIN_OPTIMIZERS.items()}
)
#: Base classes of custom autograd operations: autograd runs their `forward` and `backward`
#: on every forward and backward pass of a model that uses them (every training step).
AUTOGRAD_FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
AUTOGRAD_PASS_METHODS = frozenset({"forward", "backward"})
#: `torch.nn.utils` functions that return the total gradient norm as a 0-d tensor on the
#: parameters' device (reading it as a number is a sync).
GRADIENT_NORM_FUNCTIONS = frozenset({"clip_grad_norm_", "clip_grad_norm", "get_total_norm"})
#: Methods that return the same data viewed, laid out or typed differently, where the tensor is
#: (chaining keeps the value; no copy to think about).
RESHAPING_METHODS = frozenset(
    {"detach", "transpose", "permute", "reshape", "view", "squeeze", "unsqueeze", "contiguous", "flatten",
     "t", "float", "double", "half", "int", "long", "short", "clone", "astype"}
)
#: Reshaping methods whose result holds the same data on every call, as far as a copy of it is
#: concerned (`arr.astype(np.float32)` of one table); `clone()` is left out: a fresh tensor each
#: time is what it is asked for (one buffer per subset that each may change on its own).
SAME_DATA_METHODS = RESHAPING_METHODS - {"clone"}
#: Methods that return a view of the same memory: no kernel runs, so there is nothing to load or
#: warm up (`reshape` and `flatten` copy when the layout asks for it, so they are not here).
VIEW_METHODS = frozenset(
    {"detach", "transpose", "permute", "view", "view_as", "squeeze", "unsqueeze", "t", "expand", "expand_as", "narrow", "unflatten"}
)
#: In-place fills of a buffer (`cache.zero_()` flushing L2 between timed runs): a memset-like
#: kernel with no library handle or plan behind it, whose first launch costs next to nothing.
FILL_IN_PLACE_METHODS = frozenset({"zero_", "fill_"})
#: Bases that leave a class plain Python (no tensor, no module): its instances are objects.
PLAIN_CLASS_BASES = frozenset({"builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol"})
#: torch.nn wrappers that return the module they are handed, on its device.
MODULE_WRAPPERS = frozenset({"DistributedDataParallel", "DataParallel", "FullyShardedDataParallel"})
#: NumPy's index-array builders: `np.r_[:2, 4:9]` is an integer array made on the host.
INDEX_BUILDERS = frozenset({"numpy.r_", "numpy.c_"})
#: Calls that hand back the tensor they are given, wrapped, with no kernel and no copy: the
#: legacy autograd `Variable` (a no-op since PyTorch 0.4) and a `Parameter` made of a tensor.
TENSOR_WRAPPERS = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})
#: Functions that return a module compiled, on the device of the module handed in.
COMPILING_WRAPPERS = frozenset({"torch.compile"})
MODULE_SELF_METHODS = frozenset({"eval", "train", "half", "float", "double", "bfloat16", "requires_grad_", "share_memory"})
#: A loop entered every this many steps or more (`if step % 1000 == 0:`) is not a per-step cost.
SPARSE_PERIOD = 10
#: Calls that build a settings object from a class whose fields hold the defaults (`tyro.cli(Args)`).
CONFIG_PARSERS = frozenset({"tyro.cli", "simple_parsing.parse"})
#: Calls that differentiate a loss (`loss.backward()`, `fabric.backward(loss)`).
BACKWARD_METHODS = frozenset({"backward"})
#: Objects of the frameworks that place a model and its data on the accelerator for the user
#: (Lightning Fabric, Hugging Face Accelerate), by the names code gives them.
ACCELERATOR_NAMES = frozenset({"fabric", "accelerator", "accel"})
#: Calls that wrap a model in an engine on the accelerator and hand back, in order, the engine,
#: the optimizer, the data loader and the LR scheduler (`engine, opt, loader, _ = deepspeed.initialize(...)`):
#: DeepSpeed moves the model to the local accelerator device, and calling the engine runs it there.
ENGINE_INITIALIZERS = frozenset({"deepspeed.initialize"})
ENGINE_INITIALIZER_RESULTS = 4
#: Their methods that hand back the model moved to the accelerator (`model = fabric.setup(model)`).
ACCELERATOR_SETUP_METHODS = frozenset({"setup", "setup_module", "prepare", "prepare_model"})
#: Their collectives, which hand back tensors on the device of the tensor they were given
#: (`all_samples = accelerator.gather(sample_length_tensor)`).
ACCELERATOR_COLLECTIVES = frozenset({"gather", "gather_for_metrics", "reduce", "pad_across_processes", "all_gather", "all_reduce"})
#: Their methods whose `with` block builds modules and tensors on the accelerator
#: (`with fabric.init_module(): model = GPT(config)`).
ACCELERATOR_INIT_METHODS = frozenset({"init_module", "init_tensor"})
#: Of those, the ones tensors do not have: a chain through them was a module.
MODULE_MODE_METHODS = frozenset({"eval", "train"})
#: `model.to_empty(device="cuda")`: only modules have it (it allocates a meta-device model's
#: parameters on that device), so whatever the receiver was, the result is a module there.
MODULE_MATERIALISE_METHOD = "to_empty"
#: Random generators: a call makes new data every time, so it is never loop-invariant (NumPy's
#: and CuPy's distributions, also as methods of a `Generator` or `RandomState`).
RANDOM_FUNCTIONS = frozenset(
    {
        "rand", "randn", "randint", "randperm", "normal", "rand_like", "randn_like", "randint_like", "bernoulli", "multinomial",
        "random", "uniform", "standard_normal", "integers", "choice", "permutation", "shuffle", "random_sample", "binomial",
        "beta", "gamma", "poisson", "exponential", "laplace", "lognormal", "dirichlet", "geometric", "gumbel", "logistic",
        "multivariate_normal", "standard_cauchy", "standard_exponential", "standard_gamma", "chisquare", "weibull", "pareto",
        "rayleigh", "triangular", "negative_binomial", "hypergeometric", "vonmises", "wald", "zipf",
    }
)
#: Modules whose every function draws (or seeds) a random generator.
RANDOM_MODULES = ("numpy.random.", "cupy.random.")
#: Builtins that hand back something new on each call with the same arguments: the next item
#: of an iterator (`next(self.loader)`, a new batch every time), a line typed in, a file opened.
STATEFUL_BUILTINS = frozenset({"builtins.next", "builtins.anext", "builtins.input", "builtins.open"})
#: Reads of the device's state (memory held, free memory, utilisation): the answer changes as the
#: program runs, so a call is never loop-invariant either.
DEVICE_STATE_READS = frozenset(
    f"{module}.{name}"
    for module in ("torch.cuda", "torch.cuda.memory")
    for name in (
        "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
        "memory_summary", "mem_get_info", "utilization", "temperature", "power_draw", "clock_rate", "list_gpu_processes",
    )
)


# -- NVIDIA Warp (`import warp as wp`) ---------------------------------------------------------
#: Functions that make a Warp array, on `device=` or else on Warp's default device (the first
#: CUDA device when there is one). Of them, `array` and `from_numpy` copy the data they are handed.
WARP_ARRAY_FACTORIES = frozenset(
    f"warp.{name}"
    for name in ("array", "zeros", "empty", "full", "ones", "from_numpy", "zeros_like", "empty_like", "full_like", "ones_like", "clone")
)
WARP_DATA_COPIES = frozenset({"warp.array", "warp.from_numpy"})
#: `*_like` and `clone` make the array where their source is unless told `device=`.
WARP_LIKE_FACTORIES = frozenset({"warp.zeros_like", "warp.empty_like", "warp.full_like", "warp.ones_like", "warp.clone"})
#: Calls that compile and load a program's kernels up front: a launch after them pays no
#: compilation or module load on its first call.
WARP_MODULE_LOADERS = frozenset({"warp.load_module", "warp.force_load"})
#: Calls that queue GPU work and return at once: kernel launches, graph replays, copies.
WARP_LAUNCHES = frozenset({"warp.launch", "warp.launch_tiled", "warp.capture_launch", "warp.copy"})
#: Arrays shared with torch without a copy (`wp.from_torch(t)`, `wp.to_torch(a)`): the result,
#: of this library, lives where its source does.
WARP_SHARED_MEMORY = {"warp.from_torch": "warp", "warp.to_torch": "torch"}
#: `wp.get_device()`: Warp's default device (the first CUDA device when there is one), or the
#: device it is handed.
WARP_DEVICE_QUERIES = frozenset({"warp.get_device", "warp.get_preferred_device"})
#: Warp's recorder of a differentiable run (`tape = wp.Tape()`, `with tape: ...`): its
#: `backward()` launches the adjoint kernels, GPU work.
WARP_TAPE = "warp.Tape"
#: Its map from each recorded array to that array's gradient array (`tape.gradients[x]`).
TAPE_GRADIENTS = "gradients"
#: Libraries whose kernels write the arrays they are handed in place (`wp.launch(k, inputs=[x])`,
#: a replayed graph, a tape's backward pass): any GPU work a loop runs may change any of their arrays.
IN_PLACE_KERNEL_LIBRARIES = frozenset({"warp"})
#: Methods of a Warp array that read its data on the host (and wait for the GPU to get it).
WARP_HOST_READ_METHODS = frozenset({"numpy", "list"})
#: `arr.assign(data)`: copies `data` into the array (host->device when `data` is host data).
WARP_ASSIGN_METHOD = "assign"
#: Warp's wall-clock timer: a context manager that reads the host clock on entry and exit, and
#: synchronises the device first only with `synchronize=True`.
WARP_TIMERS = frozenset({"warp.ScopedTimer", "warp.utils.ScopedTimer"})
#: Its keywords: whether it waits for the GPU, and where it keeps each elapsed time.
TIMER_SYNCHRONIZE_KEYWORD = "synchronize"
TIMER_KEEPS_KEYWORD = "dict"
TIMER_ACTIVE_KEYWORD = "active"
#: The `class_name` of a timer object's value (`t = wp.ScopedTimer("k0")`), by whether it
#: synchronises.
TIMER_OBJECT = "warp.ScopedTimer"
SYNCHRONIZED_TIMER_OBJECT = "warp.ScopedTimer(synchronize=True)"
#: A Warp device context (`with wp.ScopedDevice("cpu"):`): arrays made inside without
#: `device=` are made there.
WARP_DEVICE_CONTEXTS = frozenset({"warp.ScopedDevice"})


# -- RAPIDS cuDF (`import cudf`): data frames whose columns live on the GPU ----------------------
#: The cuDF functions and classes that build a frame on the GPU: readers, constructors, joins,
#: reshapes. Other names of the package (options, type checks, `cudf.api.*`) return Python objects.
CUDF_FRAME_FACTORIES = frozenset(
    f"cudf.{name}"
    for name in (
        "DataFrame", "Series", "Index", "RangeIndex", "MultiIndex", "from_pandas", "from_dlpack", "concat", "merge",
        "melt", "pivot", "pivot_table", "crosstab", "get_dummies", "unstack", "cut", "to_numeric", "to_datetime",
        "date_range", "interval_range", "read_csv", "read_parquet", "read_orc", "read_json", "read_avro",
        "read_feather", "read_hdf", "read_text",
    )
)
#: RAPIDS libraries whose calls return with their work done: they size their results on the host
#: (readers, joins, filters, group-bys, variable-length spatial and graph results) or only
#: relabel columns, so the timing rules do not count them as asynchronous GPU work.
HOST_SIZED_LIBRARIES = frozenset({"cudf", "cuspatial", "cugraph"})
#: `cudf.DataFrame.from_pandas(...)`, `cudf.Series.from_arrow(...)`: alternate constructors.
CUDF_FRAME_CLASSES = frozenset({"cudf.DataFrame", "cudf.Series", "cudf.Index"})
#: The class a column read (`df["src"]`) or `cudf.Series(...)` gives: its reductions return host scalars.
CUDF_SERIES = "cudf.Series"
#: Methods that copy a frame's data to the host (a pandas object, NumPy array, Arrow table or
#: Python list): each waits for the GPU and moves the whole column or frame.
CUDF_HOST_COPY_METHODS = frozenset({"to_pandas", "to_numpy", "to_arrow", "to_list", "tolist", "to_dict"})
#: Methods that walk a frame by column or by row on the host (`for name, col in df.items()`):
#: Python objects, one per column or row, not GPU work per element.
CUDF_ITERATORS = frozenset({"items", "iteritems", "keys", "iterrows", "itertuples"})
#: The attribute that is a host copy of a column's values (`.values` stays on the GPU, as CuPy).
CUDF_HOST_VALUES = "values_host"
CUDF_DEVICE_VALUES = "values"
#: Element indexers: `s.iloc[i]`, `df.iat[i, j]`, `s.loc[key]`, `df.at[key, col]` with a scalar
#: position or label read one element back to the host, a copy and a wait each.
CUDF_ELEMENT_INDEXERS = frozenset({"iloc", "loc", "iat", "at"})
#: How a sync point names these two reads, so the fix can say what to do instead.
CUDF_ELEMENT_READ = "cudf_element"
#: `out[mask] = src[mask]`: a masked read stored back through the same mask (the read waits to
#: size its result; `torch.where` / `cupy.where` do the same copy without a count).
MASKED_COPY = "masked_copy"
#: `x[x > 180] -= 360`: a masked read changed and stored back through the same mask (the read
#: waits to size its result; `torch.where(mask, x - 360, x)` computes the same without a count).
MASKED_UPDATE = "masked_update"
#: `x[:, vh:vh + s]` with `vh` a GPU scalar: Python slices take integers, so `__index__` reads
#: the bound back (a copy and a wait) each time.
SLICE_BOUND = "slice_bound"
CUDF_SERIES_REDUCTION = "cudf_reduction"
#: Reductions of a Series: cuDF hands back a NumPy scalar, read back from the GPU (a DataFrame's
#: reductions return a Series, which stays there).
CUDF_SERIES_REDUCTIONS = frozenset(
    {
        "sum", "min", "max", "mean", "median", "std", "var", "prod", "product", "count", "nunique", "any", "all",
        "idxmin", "idxmax", "argmin", "argmax", "kurtosis", "skew", "item",
    }
)


# -- KeOps (`from pykeops.torch import LazyTensor`): formulas run by one waiting kernel -----------
#: Calls that build a KeOps formula: a `LazyTensor` (and its `Vi`/`Vj`/`Pm` shorthands) is a
#: symbolic expression, no data and no kernel; `Genred`, `KernelSolve` and the `generic_*`
#: helpers build a routine that runs one when called. KeOps' launcher calls
#: `cuCtxSynchronize()` after its kernel, so a reduction returns with its work done.
FORMULA_BUILDERS = frozenset(
    f"pykeops.{side}.{name}"
    for side in ("torch", "numpy")
    for name in (
        "LazyTensor", "ComplexLazyTensor", "Vi", "Vj", "Pm", "Genred", "KernelSolve",
        "generic_sum", "generic_logsumexp", "generic_argmin", "generic_argkmin",
    )
)
#: The array library a formula's results belong to, by the KeOps module that built it.
FORMULA_RESULT_LIBRARY = {"pykeops.torch": "torch", "pykeops.numpy": "numpy"}
#: Methods of a formula that reduce it over `i` or `j` whatever their arguments: a kernel runs.
FORMULA_REDUCTIONS = frozenset(
    {
        "solve", "logsumexp", "sumsoftmaxweight", "min_argmin", "max_argmax", "Kmin", "argKmin", "Kmin_argKmin",
        "sum_reduction", "logsumexp_reduction", "sumsoftmaxweight_reduction", "min_reduction", "argmin_reduction",
        "min_argmin_reduction", "max_reduction", "argmax_reduction", "max_argmax_reduction", "Kmin_reduction",
        "argKmin_reduction", "Kmin_argKmin_reduction",
    }
)
#: Methods that reduce over `i` or `j` only when handed axis 0 or 1 (`K.sum(dim=1)`); their
#: default, -1, works along the vector dimension and gives another formula (`D.sum(-1)`).
FORMULA_AXIS_METHODS = frozenset({"sum", "min", "max", "argmin", "argmax"})
#: The axes that pick `i` or `j` whatever the formula's batch dimensions.
FORMULA_REDUCED_AXES = frozenset({0, 1})
#: Attributes of a formula that are formulas too (the transpose).
FORMULA_VIEWS = frozenset({"T"})
#: Functions that run a backward pass from the tensors they are handed first.
GRADIENT_FUNCTIONS = frozenset({"torch.autograd.grad", "torch.autograd.backward"})


# -- Devices: what names the device to compute on ----------------------------------------------
#: Calls that name the device to compute on: "gpu" (a CUDA device or index) or "maybe"
#: (the accelerator if there is one: code written this way means to run on a GPU).
DEVICE_QUERIES = {
    "torch.cuda.current_device": "gpu",
    "torch.accelerator.current_accelerator": "maybe",
    "torch.get_default_device": "maybe",
}
#: Fields of a data object moved to a device that hold Python numbers, not arrays
#: (`batch.num_graphs`, `data.batch_size`), beside the metadata attributes of arrays.
COUNT_FIELD_PREFIXES = ("num_", "n_")
#: Suffixes of fields that hold a size (`context_length`, `embed_dim`, `width`), never an array.
COUNT_FIELD_SUFFIXES = ("size", "_count", "count", "_length", "_len", "_dim", "_width", "_depth")
#: Suffixes of fields that hold a mapping or a description of the data (`graph.meta_dict`,
#: `batch.data_dict`, `sample.info`, the dataset name sam2 keeps in `batch.dict_key`), never an
#: array itself.
MAPPING_FIELD_SUFFIXES = ("dict", "_map", "meta", "_info", "_names", "_keys", "_key", "_name", "_path")
#: Calls whose result is a number of GPUs: `rank % torch.cuda.device_count()` is a GPU index.
GPU_COUNT_CALLS = frozenset({"torch.cuda.device_count"})
#: Progress bars that hand out the items of the iterable they wrap (`for step in tqdm(range(n))`,
#: `pbar = tqdm(loader)`, `for x in track(batches)`), and those that count like `range` (`trange(n)`).
PROGRESS_BARS = frozenset(
    {"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm", "tqdm.rich.tqdm", "rich.progress.track"}
)
PROGRESS_RANGES = frozenset({"tqdm.trange", "tqdm.auto.trange", "tqdm.notebook.trange", "tqdm.std.trange"})
#: The number of accelerators of any kind: a loop over `range(...)` of one visits each device once.
DEVICE_COUNT_CALLS = GPU_COUNT_CALLS | frozenset(
    {
        "torch.xpu.device_count", "torch.mps.device_count", "torch.npu.device_count", "torch.mlu.device_count",
        "torch.musa.device_count", "cupy.cuda.runtime.getDeviceCount", "jax.device_count", "jax.local_device_count",
    }
)
#: Names that hold a GPU index when handed to `.to(...)`, `.cuda(...)` or `device=`.
DEVICE_INDEX_NAMES = frozenset({"local_rank", "rank", "gpu", "gpu_id", "gpu_index", "device_id", "device_index"})
#: Device strings that name a GPU (`"cuda:0"`, `"mps"`), read case-insensitively.
GPU_DEVICE_KINDS = frozenset({"cuda", "gpu", "mps", "xpu", "hip"})


# -- What synchronises: the host waits for the GPU ---------------------------------------------
#: Waits for everything queued on the device (not a copy that happens to wait).
DEVICE_WIDE_WAITS = frozenset(
    {
        "torch.cuda.synchronize", "cupy.cuda.runtime.deviceSynchronize", "cupy.cuda.Device.synchronize", "numba.cuda.synchronize",
        "warp.synchronize", "warp.synchronize_device",
    }
)
#: Calls that make the host wait: device-wide and stream waits, and copies that block until done.
EXPLICIT_SYNCS = DEVICE_WIDE_WAITS | frozenset(
    {
        "cupy.cuda.get_current_stream.synchronize", "cupy.asnumpy",
        "torch.cuda.current_stream.synchronize", "torch.cuda.default_stream.synchronize",
        "cupyx.scipy.sparse.csr_matrix.get", "warp.synchronize_stream", "warp.synchronize_event",
        "torch.save",  # serialising copies every CUDA tensor to the host first
    }
)
#: Calls that hand out a device or stream handle whose methods the tables above name through the
#: call (`cp.cuda.Device().synchronize()` is "cupy.cuda.Device.synchronize").
DEVICE_HANDLES = frozenset(
    {"cupy.cuda.Device", "cupy.cuda.get_current_stream", "torch.cuda.current_stream", "torch.cuda.default_stream"}
)
#: Model hubs whose `from_pretrained(..., device_map=...)` loads a torch module onto a device.
PRETRAINED_LIBRARIES = frozenset({"transformers", "diffusers", "peft"})
PRETRAINED_LOADER = ".from_pretrained"
DEVICE_MAP_KEYWORD = "device_map"
#: `device_map` strategies that place the model on the GPUs there are (accelerate's).
DEVICE_MAP_STRATEGIES = frozenset({"auto", "balanced", "balanced_low_0", "sequential"})
#: CUDA event timing: `start.record()`, `start.elapsed_time(end)` (after a synchronize).
EVENT_TIMING_METHODS = frozenset({"record", "elapsed_time"})
#: Methods that wait for the device whatever they are called on: a stream's or event's
#: `synchronize()`, XLA's `wait_device_ops()`.
SYNCING_METHODS = frozenset({"synchronize", "wait_device_ops"})
#: Context managers that synchronise when their block ends (`with stream.auto_synchronize():`).
SYNCING_CONTEXT_METHODS = frozenset({"auto_synchronize"})
#: Methods that return Python objects and therefore wait for the GPU.
SCALAR_SYNC_METHODS = frozenset({"item", "tolist"})
#: The one of them that hands back a Python number.
SCALAR_READ_METHOD = "item"
#: Methods that bring a tensor's data to the host: on a value of unknown type, a possible wait.
HOST_READ_METHODS = SCALAR_SYNC_METHODS | {"cpu"}
#: Bases of Hugging Face stopping criteria: `generate` calls them once per token and reads its own
#: `unfinished_sequences.max() == 0` on the host every token anyway, so their reads add no wait.
STOPPING_CRITERIA_BASES = frozenset(
    {"transformers.StoppingCriteria", "transformers.generation.StoppingCriteria", "transformers.generation.stopping_criteria.StoppingCriteria"}
)
#: Tokenizer methods that turn token ids into text (`tokenizer.decode(generated_ids[0])`): handed
#: a GPU tensor, they copy it to the host first (a wait, as `.tolist()` is).
DECODE_METHODS = frozenset({"decode", "batch_decode"})
# The waits below were measured on an H100 (torch 2.11, CuPy 14.2) by benchmarks/gpu_sync_truth.py:
# benchmarks/gpu_truth/sync_h100.json holds each call's verdict, and tests/test_sync_truth.py keeps
# these tables and that record in agreement.
#: Ops whose output size depends on the values (`x.nonzero()`, `torch.unique(x)`, `torch.bincount(y)`):
#: on CUDA the host waits for the result to allocate the output.
DATA_SIZED_OPS = frozenset({"nonzero", "unique", "unique_consecutive", "masked_select", "argwhere", "bincount", "histc"})
CUPY_DATA_SIZED_FUNCTIONS = frozenset({"nonzero", "flatnonzero", "argwhere", "unique", "bincount", "histogram"})
DATA_SIZED_FUNCTIONS = frozenset(f"torch.{name}" for name in DATA_SIZED_OPS) | frozenset(
    f"cupy.{name}" for name in CUPY_DATA_SIZED_FUNCTIONS
)
#: `where(mask)` with the mask alone lists the positions: data-sized, as `nonzero`.
ONE_ARGUMENT_DATA_SIZED = frozenset({"torch.where", "cupy.where"})
#: Ops whose output size is the sum of a GPU argument unless the size is given:
#: `x.repeat_interleave(counts)` waits, `x.repeat_interleave(counts, output_size=n)` does not.
SIZED_BY_COUNTS = {"repeat_interleave": "output_size"}
#: Library calls that read device values on the host inside, each with what it reads there:
#: `one_hot` reads the largest class (or a tensor `num_classes`) on the host, AMP's
#: `GradScaler.get_scale()` reads the scale with `.item()`, `torch.allclose`/`torch.equal` answer
#: with a Python bool, torch's checked solvers read their status (`info`) to raise on failure.
#: (`torch.multinomial` checks its probabilities with an asynchronous assert: no wait.)
HOST_CHECKING_CALLS = {
    "one_hot": "`one_hot()`'s host read of the class count",
    "get_scale": "`GradScaler.get_scale()`'s `.item()` of the loss scale",
    "fill_value": "a GPU fill value, which `torch.full()` reads on the host with `.item()`,",
    "python_bool": "a whole-array comparison that returns a Python bool",
    "solver_status": "the solver's host check of its status",
    "solver_wait": "a CuPy solver that waits for the GPU before returning",
    "nonfinite_norm": "`clip_grad_norm_()`'s host check of the norm (`error_if_nonfinite=True`)",
    "gpu_elements": "building a tensor from GPU values (each read on the host)",
    "validated_distribution": "the parameter check of a `torch.distributions` constructor (on by default; its "
    "answer is read on the host)",
}
#: `torch.distributions` classes that check the values of their parameters when built (those
#: with `arg_constraints`). With validation on, PyTorch's default outside `python -O`, the
#: constructor evaluates each constraint on the parameters' device and reads the answer on the
#: host to raise (`if not torch._is_all_true(valid)`): a wait per parameter, each time one is
#: built. Wrappers without parameters of their own (`Independent`, `TransformedDistribution`,
#: `MixtureSameFamily`) check nothing themselves.
VALIDATED_DISTRIBUTIONS = frozenset(
    {
        "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
        "Exponential", "FisherSnedecor", "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
        "Kumaraswamy", "Laplace", "LKJCholesky", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal",
        "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
        "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical",
        "StudentT", "Uniform", "VonMises", "Weibull", "Wishart",
    }
)
#: `validate_args=False` turns the check off for one distribution; this call (on
#: `torch.distributions.Distribution`) turns it off for all of them.
DISTRIBUTION_VALIDATION_KEYWORD = "validate_args"
#: Factories whose fill value is a Python number: a GPU tensor given there is read with `.item()`.
#: Function -> position of the fill value.
SCALAR_FILL_FUNCTIONS = {"torch.full": 1, "torch.full_like": 1}
ONE_HOT_FUNCTIONS = frozenset({"torch.nn.functional.one_hot"})
#: Comparisons of whole arrays that return a Python bool (CuPy's return a 0-d GPU array: no wait).
PYTHON_BOOL_COMPARISONS = frozenset({"allclose", "equal"})
#: Solvers that check the factorisation's status on the host after every call (measured), and
#: their `*_ex` forms that return the status as a GPU tensor instead (`check_errors=False`).
CHECKED_SOLVERS = frozenset(
    {"torch.linalg.solve", "torch.linalg.inv", "torch.linalg.cholesky", "torch.linalg.eigh", "torch.linalg.svd",
     "torch.inverse", "cupy.linalg.eigh", "cupy.linalg.svd"}
)
#: Builtins that compare their arguments: `max(t, 1)` on a GPU value calls `bool(1 > t)`.
COMPARING_BUILTINS = frozenset({"builtins.max", "builtins.min"})
HOST_CHECKING_FUNCTIONS = (
    ONE_HOT_FUNCTIONS | COMPARING_BUILTINS | frozenset(SCALAR_FILL_FUNCTIONS) | CHECKED_SOLVERS
    | frozenset(f"torch.{name}" for name in PYTHON_BOOL_COMPARISONS)
)
#: `clip_grad_norm_(..., error_if_nonfinite=True)` reads the total norm on the host to raise.
NONFINITE_CHECK_KEYWORD = "error_if_nonfinite"
#: AMP's loss scaler: its scale lives on the GPU.
GRAD_SCALERS = frozenset(
    {"torch.amp.GradScaler", "torch.cuda.amp.GradScaler", "torch.amp.grad_scaler.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler"}
)
#: Builtins that turn a device value into a Python value (a device->host sync).
SYNCING_BUILTINS = frozenset({"builtins.float", "builtins.int", "builtins.bool", "builtins.complex"})
#: ctypes scalars built from a value (`ct.c_float(gnorm_scale)`, bitsandbytes' kernel arguments):
#: each calls `float()` or `int()` of it, so a GPU scalar is read back first.
CTYPES_SCALARS = frozenset(
    f"ctypes.c_{kind}"
    for kind in (
        "float", "double", "longdouble", "bool", "int", "long", "longlong", "short", "size_t", "ssize_t",
        "int8", "int16", "int32", "int64", "uint", "ulong", "ulonglong", "ushort", "uint8", "uint16", "uint32", "uint64",
    )
)
#: `torch.optim.Optimizer.state`: a dict keyed by the parameter tensors (looked up by identity).
HASHED_STATE_ATTRIBUTES = frozenset({"state"})
#: Modules whose functions take Python numbers: `math.isnan(t)` calls `float(t)` first.
PYTHON_NUMBER_MODULES = frozenset({"math", "cmath"})
#: Builtins whose result is a Python number whatever they are handed (a GPU scalar is read back).
NUMBER_BUILTINS = frozenset({"builtins.float", "builtins.int", "builtins.len"})
FORMATTING_BUILTINS = frozenset({"builtins.print", "builtins.str", "builtins.repr", "builtins.format"})
#: Builtins that iterate their argument element by element.
ITERATING_BUILTINS = frozenset(
    {"builtins.sum", "builtins.max", "builtins.min", "builtins.sorted", "builtins.any", "builtins.all", "builtins.list", "builtins.tuple"}
)
#: Logging methods that read a tensor's value (so wait for it) when handed one.
LOGGING_METHODS = frozenset({"add_scalar", "add_scalars", "add_histogram", "log_metric", "log_metrics", "log_scalar"})
#: Logging functions called by module name, which turn each tensor they are handed into a host
#: number (`wandb.log({"loss": loss})` copies it with `.item()`; MLflow calls `float()`).
LOGGING_FUNCTIONS = frozenset({"wandb.log", "mlflow.log_metric", "mlflow.log_metrics"})
#: Calls that turn device images into host images or files (PIL, PNG): they wait for the GPU.
HOST_IMAGE_METHODS = frozenset({"postprocess", "numpy_to_pil", "pt_to_pil", "pt_to_numpy"})
HOST_IMAGE_FUNCTIONS = frozenset(
    {"torchvision.utils.save_image", "torchvision.transforms.functional.to_pil_image", "torchvision.io.write_png", "torchvision.io.write_jpeg"}
)


# -- What copies between host and device -------------------------------------------------------
#: torch's constructors from data: with a GPU `device=` they copy the data there and wait for it.
TENSOR_FROM_DATA = frozenset({"torch.tensor", "torch.as_tensor"})
#: Calls that turn host data into a tensor where it is (the data they are handed first).
DATA_WRAPPERS = TENSOR_FROM_DATA | {"torch.from_numpy", "torch.Tensor"}
#: Record types that hold what they are handed as fields (`batch = Munch(x=x.to(device))`, then `batch.x`).
RECORD_TYPES = frozenset(
    {"builtins.dict", "munch.Munch", "easydict.EasyDict", "types.SimpleNamespace", "addict.Dict", "box.Box", "attrdict.AttrDict"}
)
#: Methods that change only the element type: the tensor stays where it is.
DTYPE_CASTS = frozenset({"float", "double", "half", "bfloat16", "long", "int", "short", "bool", "byte", "type", "contiguous"})
#: How a sync point names a Python number copied with them (the fix: a fill, or a hoist).
NUMBER_UPLOAD = "number_upload"
#: Methods that copy device data to the host and therefore wait for the GPU.
D2H_METHODS = frozenset({"cpu", "numpy", "copy_to_host"})


# -- What is pure: metadata reads, in-place changes, Python-only calls -------------------------
#: Tensor/array methods that read metadata only: no kernel, no sync.
METADATA_METHODS = frozenset(
    {
        "size", "dim", "ndimension", "numel", "nelement", "element_size", "stride", "is_contiguous",
        "data_ptr", "get_device", "type", "storage_offset", "is_floating_point", "is_complex",
        "nbytes", "itemsize", "requires_grad_", "retain_grad", "register_hook",
    }
)
#: Methods that run no user code whatever they are called on: a loop calling them stays transparent.
NO_USER_CODE_METHODS = SCALAR_SYNC_METHODS | METADATA_METHODS
METADATA_ATTRIBUTES = frozenset(
    {"shape", "dtype", "device", "ndim", "size", "is_cuda", "requires_grad", "nbytes", "itemsize", "layout", "grad_fn"}
)
#: Methods that change their receiver in place (so it varies between loop iterations).
MUTATING_METHODS = frozenset(
    {"append", "extend", "insert", "pop", "update", "add", "remove", "clear", "setdefault", "sort", "reverse", "fill", "put", "assign"}
)
#: List methods that collect one result per iteration (`preds.append(pred.cpu())`).
COLLECTING_METHODS = frozenset({"append", "extend", "insert"})
#: Methods that turn a tensor into host data for other code (an environment, a plot, a
#: file): `actions.cpu().numpy()` feeds code that needs the values on the host.
HOST_DATA_METHODS = frozenset({"numpy", "tolist"})
#: Calls a pure-Python compute function may make and still hold the GIL the whole time.
PURE_PYTHON_CALLS = frozenset(
    {f"builtins.{name}" for name in (
        "range", "len", "abs", "min", "max", "sum", "pow", "divmod", "round", "int", "float",
        "complex", "bool", "enumerate", "zip", "reversed", "sorted", "isinstance", "list", "tuple",
        "dict", "set", "map", "filter", "all", "any", "hash", "ord", "chr",
    )}
) | frozenset({"math", "cmath", "operator", "itertools", "fractions", "decimal", "statistics"})
#: Container methods that stay inside the interpreter (hold the GIL, do no I/O).
PURE_CONTAINER_METHODS = frozenset(
    {"append", "extend", "insert", "pop", "get", "items", "keys", "values", "add", "update", "count", "index", "copy", "setdefault"}
)
#: Calls that answer at once, never waiting for anything (a memory gauge, a clock, a flag): a
#: `while` loop that makes only these, and pure-Python calls, never lets go of the CPU.
NONBLOCKING_PROBES = frozenset(
    {
        "method.memory_info", "method.memory_allocated", "method.max_memory_allocated", "method.memory_reserved",
        "torch.cuda.memory_allocated", "torch.cuda.max_memory_allocated", "torch.cuda.memory_reserved",
        "time.time", "time.perf_counter", "time.monotonic", "method.is_set", "method.is_alive",
    }
)


#: Functions that join a sequence of arrays into one (`torch.cat([a, b])`, `np.stack(parts)`):
#: the result is made where, and from what, its parts are.
JOINS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack"})

# -- Shapes: what an operation does to the shape of its operands -------------------------------
#: Fills whose result shape is their first argument.
FILL_FACTORIES = frozenset({"zeros", "ones", "empty", "full"})
#: A torch module's mode flag: set by `model.train()` / `model.eval()`, it holds (or fails) on every
#: step of that phase, so a branch under it runs once per training (or evaluation) step.
MODE_FLAGS = frozenset({"self.training"})
#: Names of functions whose job is to copy something to the device (`copy_to_device`, `to_gpu`,
#: `move_to_cuda`): the first word and one of the following ones.
MOVER_VERBS = frozenset({"to", "copy", "move", "send", "put", "upload"})
#: The tensor method that takes another tensor's dtype and its device (`kernel.type_as(x)`): on a
#: host tensor, with x on the GPU, a host-to-device copy like `.to(x)`.
DEVICE_FOLLOWING_CAST = "type_as"
MOVER_TARGETS = frozenset({"device", "gpu", "cuda", "gpus"})
#: Factories that only allocate: their bytes are whatever the memory held (copying them copies nothing useful).
UNINITIALISED_FACTORIES = frozenset({"empty", "empty_like", "empty_strided"})
LIKE_FACTORIES = frozenset({"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like"})
DATA_READERS = frozenset({"load", "loadtxt", "genfromtxt", "fromfile", "frombuffer", "memmap", "fromstring", "read_csv", "read_parquet"})
ELEMENTWISE = frozenset(
    {
        "sin", "cos", "tan", "exp", "log", "log2", "log10", "sqrt", "tanh", "sinh", "cosh", "abs", "absolute",
        "arctan", "arcsin", "arccos", "expm1", "log1p", "square", "negative", "add", "subtract", "multiply",
        "divide", "true_divide", "power", "maximum", "minimum", "where", "clip", "sign", "floor", "ceil", "erf",
        "sigmoid", "relu", "clamp", "exp2", "reciprocal", "rsqrt", "round",
    }
)
#: dot, matmul, mm, bmm: the calls of the registry's matrix product.
MATMUL_FUNCTIONS = OPS["matmul"].call_names
REDUCTIONS = frozenset({"sum", "mean", "std", "var", "max", "min", "prod", "amax", "amin", "nansum", "nanmean"})
#: Elementwise tests whose result is a boolean array (a mask), as functions and as methods.
#: (`torch.equal`/`array_equal` return a Python bool: they are reads, not masks.)
MASK_RESULTS = frozenset(
    {
        "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isclose", "isin", "signbit",
        "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
        "logical_and", "logical_or", "logical_not", "logical_xor", "bool",
    }
)
SAME_SHAPE_METHODS = frozenset({"copy", "clone", "contiguous", "detach", "cuda", "cpu", "numpy", "get", "requires_grad_"})


# -- Host fills: factories a GPU fill replaces -------------------------------------------------
#: Factories that make values from nothing, the same on any device: a GPU fill replaces them.
TORCH_HOST_FILLS = frozenset(
    f"torch.{name}" for name in ("zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye")
)


# -- Clocks, compilers, threads and processes --------------------------------------------------
CLOCKS = frozenset(
    {
        "time.time", "time.perf_counter", "time.monotonic", "time.process_time", "time.time_ns",
        "time.perf_counter_ns", "time.monotonic_ns", "time.process_time_ns", "timeit.default_timer",
        "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.now", "datetime.utcnow",
    }
)
#: torch.distributed collectives: handed CUDA tensors (the NCCL backend), each is queued on a
#: stream and returns before it has run, as any other GPU work.
DISTRIBUTED_COLLECTIVES = frozenset(
    f"torch.distributed.{name}"
    for name in (
        "all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
        "broadcast", "reduce", "all_to_all", "all_to_all_single", "gather", "scatter",
    )
)
TIMEIT_CALLS = frozenset({"timeit.timeit", "timeit.repeat"})
#: `timeit.Timer(stmt).timeit(number=...)`: a Timer made on the spot times its statement when
#: one of these is called on it.
TIMEIT_TIMER = "timeit.Timer"
TIMEIT_TIMER_METHODS = frozenset({"timeit", "repeat", "autorange"})
#: CuPy's read of the time between two recorded CUDA events (`get_elapsed_time(start, end)`).
EVENT_ELAPSED_FUNCTIONS = frozenset({"cupy.cuda.get_elapsed_time", "cupy.cuda.stream.get_elapsed_time"})
#: pytest-benchmark's fixture: a test parameter of this name times the callable it is handed.
BENCHMARK_FIXTURE = "benchmark"
#: Decorators that compile a function, so Python-level loop costs do not apply inside it.
COMPILING_DECORATORS = frozenset(
    {
        "numba.njit", "numba.jit", "numba.vectorize", "numba.guvectorize", "numba.stencil",
        "numba.cuda.jit", "numba.prange", "cython.cfunc", "cython.ccall", "cython.compile",
        "torch.compile", "torch.jit.script", "jax.jit", "numba.cfunc", "taichi.kernel", "taichi.func",
        "warp.kernel", "warp.func", "warp.func_native", "warp.func_grad", "warp.func_replay",
        "triton.jit",
    }
)
CUDA_KERNEL_DECORATORS = frozenset({"numba.cuda.jit"})
#: Calls that only mean something inside a compiled kernel (the thread's index): a function
#: making one is a kernel, decorated or not (`wp.Kernel(func)` builds one from a plain function).
KERNEL_ONLY_BUILTINS = frozenset({"warp.tid"})

#: `if __name__ == "__main__":`: the file is a script, run as a program.
ENTRY_POINT = re.compile(r"""__name__\s*==\s*["']__main__["']""")

#: Builtins that take a class only to name it (`super(Adam, self)`, `isinstance(x, Adam)`): not a
#: factory that builds what it is handed.
CLASS_NAMING_BUILTINS = frozenset({"builtins.super", "builtins.isinstance", "builtins.issubclass", "builtins.type"})

#: Hints for a tracer (torch.export, torch.compile) that eager code never needs: a function calling
#: one is written to be traced, so its `.item()` is a symbolic size and its loops are unrolled.
TRACING_CHECKS = frozenset({"torch._check", "torch._check_is_size", "torch._check_with", "torch._check_value", "torch._check_index"})
#: The text every call of one contains (a cheap test before reading a file's functions for them).
TRACING_CHECK_TEXT = "_check"
#: Triton's kernel decorator: `kernel[grid](x, y, ...)` launches the kernel, and Triton takes
#: tensors on the GPU only (a host tensor is an error), so what a launch is handed is there.
TRITON_KERNEL_DECORATORS = frozenset({"triton.jit"})
#: What only a tensor has (an int or a float handed to the same launch has none of them): a
#: parameter read this way and handed to a Triton launch is a GPU tensor.
TENSOR_ONLY_ATTRIBUTES = frozenset(
    {"stride", "contiguous", "is_contiguous", "numel", "data_ptr", "element_size", "shape", "device", "dtype", "view", "reshape"}
)
#: Words that name a function as the plain, slow version of an operation, kept to check a fast
#: one against (`sample_farthest_points_naive`, `rasterize_meshes_python`, `naive_attention`).
REFERENCE_WORDS = frozenset({"naive", "reference", "ref", "slow", "python"})
#: Of those, the ones that name a reference version as a name's first word too (`naive_matmul`;
#: `python_callback` is no reference version).
REFERENCE_PREFIXES = REFERENCE_WORDS - {"python"}
#: First words of a conversion helper's name (`to_python`, `as_reference`): not a reference version.
CONVERSION_PREFIXES = frozenset({"to", "as", "from", "get", "load", "make"})
#: Methods called as statements that only a tensor has (`loss.backward()`, `x.clamp_(0, 1)`): a
#: list or a number handed back beside tensors has none of them.
TENSOR_ONLY_STATEMENTS = frozenset(
    {"backward", "retain_grad", "requires_grad_", "zero_", "fill_", "copy_", "add_", "sub_", "mul_", "div_", "clamp_"}
)
#: Classes of `torch.nn` that are not modules (a parameter is a tensor), and the module bases of
#: other libraries (a PyTorch Geometric layer is a module with a message-passing `forward`).
NON_MODULE_TORCH_NN_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.UninitializedParameter", "torch.nn.UninitializedBuffer"})
OTHER_MODULE_BASES = frozenset(
    {"torch_geometric.nn.MessagePassing", "torch_geometric.nn.conv.MessagePassing", "torch_geometric.nn.conv.message_passing.MessagePassing"}
    # fairseq's model classes, all `nn.Module`s (Graphormer's models are built on them)
    | {
        f"fairseq.models.{path}{name}"
        for name, module in (
            ("BaseFairseqModel", "fairseq_model"), ("FairseqEncoderModel", "fairseq_model"), ("FairseqEncoderDecoderModel", "fairseq_model"),
            ("FairseqLanguageModel", "fairseq_model"), ("FairseqMultiModel", "fairseq_model"), ("FairseqEncoder", "fairseq_encoder"),
            ("FairseqDecoder", "fairseq_decoder"), ("FairseqIncrementalDecoder", "fairseq_incremental_decoder"),
        )
        for path in ("", f"{module}.")
    }
)


def is_module_base(qualname: str) -> bool:
    """`torch.nn.Module`, or a module class built on it (`nn.Linear`, `nn.Sequential`, PyG's
    `MessagePassing`): a subclass is a module too. Helpers under `torch.nn` (`functional`,
    `init`, `utils`) and parameters are not."""
    if qualname in OTHER_MODULE_BASES:
        return True
    if not qualname.startswith("torch.nn.") or qualname in NON_MODULE_TORCH_NN_CLASSES:
        return False
    parts = qualname.split(".")
    return parts[2] not in ("functional", "init", "utils", "parameter") and parts[-1][:1].isupper()


#: What a module's `forward` reads of an input that only an array has (a number, a flag, a
#: list, a string or a dict has none of them): such an unannotated input is a tensor.
FORWARD_TENSOR_ATTRIBUTES = TENSOR_ONLY_ATTRIBUTES | frozenset(
    {
        "max", "min", "sum", "mean", "all", "any", "nonzero", "float", "long", "unsqueeze", "squeeze",
        "size", "dim", "masked_fill", "index_select", "new_zeros", "new_ones", "new_full", "new_empty",
        "new_tensor", "type_as", "detach", "permute", "transpose", "flatten", "expand", "bincount", "argmax",
    }
)
#: How the notebook reader writes `%timeit stmt`: `while 7:stmt` (as wide as `%timeit `, with a
#: test nobody writes), so the loop is known to be a timing repetition, not a loop of the program.
TIMEIT_LOOP_HEADER = "while 7:"
#: Decorators that make a ufunc; with `target="cuda"` calling it runs on the GPU.
NUMBA_UFUNC_DECORATORS = frozenset({"numba.vectorize", "numba.guvectorize"})
#: The thread class: its instances (and its subclasses') run their target on a thread.
THREAD_CLASS = "threading.Thread"
THREAD_POOL_FACTORIES = frozenset(
    {
        "concurrent.futures.ThreadPoolExecutor", "concurrent.futures.thread.ThreadPoolExecutor",
        "multiprocessing.dummy.Pool", "multiprocessing.pool.ThreadPool",
    }
)
PROCESS_POOL_FACTORIES = frozenset(
    {
        "concurrent.futures.ProcessPoolExecutor", "multiprocessing.Pool", "multiprocessing.pool.Pool",
        "multiprocessing.get_context.Pool",
    }
)
POOL_SUBMIT_METHODS = frozenset(
    {"submit", "map", "imap", "imap_unordered", "starmap", "apply", "apply_async", "map_async", "starmap_async"}
)
#: Environment variables that size the native thread pools at library import time.
THREAD_ENV_VARS = frozenset(
    {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS"}
)
#: Debugging switches that slow every step while on: (qualified name, what it does).
ANOMALY_DETECTION = frozenset(
    {
        "torch.autograd.set_detect_anomaly",
        "torch.autograd.anomaly_mode.set_detect_anomaly",
        "torch.autograd.detect_anomaly",
        "torch.autograd.anomaly_mode.detect_anomaly",
    }
)
#: Calls that hand the caching allocator's free GPU memory back to the driver: `cudaFree` waits
#: for the device to finish, and the next allocations go back to `cudaMalloc`.
ALLOCATOR_FLUSHES = frozenset({"torch.cuda.empty_cache", "torch.xpu.empty_cache", "torch.mps.empty_cache"})
#: Environment variables that make every CUDA kernel launch block until it finishes.
BLOCKING_LAUNCH_ENV_VARS = frozenset({"CUDA_LAUNCH_BLOCKING"})
#: Modules whose import starts a BLAS/OpenMP runtime (directly or by importing NumPy).
THREAD_POOL_IMPORTERS = frozenset({"numpy", "torch", "scipy", "sklearn", "pandas", "jax", "tensorflow", "cupy", "numba", "numexpr"})
#: Modules whose presence means the file starts other processes (which read the environment).
PROCESS_LAUNCHERS = frozenset({"subprocess", "multiprocessing", "torch.multiprocessing", "torch.distributed.elastic"})


# -- Evidence from names: what a name's spelling tells (used only where nothing better is known) ---
#: Parameters called this hold the device the code runs on (a GPU, when there is one).
DEVICE_PARAMETER_NAMES = frozenset({"device", "dev"})
#: A loop whose target says it counts epochs (`for epoch in range(...)`): one iteration is a
#: whole pass over the data, so a sync per iteration of a callee costs nothing next to it.
EPOCH_WORDS = ("epoch", "run")
#: A period named for the training cadence (`T % args.replay_frequency == 0: dqn.learn(mem)`,
#: `train_freq`, `update_every`): the guarded branch is the training step, not a sampled log.
TRAINING_CADENCE_WORDS = ("replay", "train", "learn", "update", "optim")
#: ... unless the name says it is a rarer event (`target_update_frequency`, `log_every`).
SPARSE_EVENT_WORDS = ("target", "log", "print", "save", "eval", "ckpt", "checkpoint", "vis", "sync", "copy")
#: Samplers that hand out each mini-batch as a Python list of indices (`for indices in
#: BatchSampler(SubsetRandomSampler(range(n)), 64, drop_last=True)`): indexing a tensor with one
#: copies the list to the tensor's device first.
INDEX_BATCH_SAMPLERS = frozenset({"torch.utils.data.BatchSampler", "torch.utils.data.sampler.BatchSampler"})
#: A loop bound that says it counts the samples of a data set (`range(args.nsamples)`): a pass
#: over data, like a loop over a loader, not the repetitions of a benchmark.
SAMPLE_COUNT_WORDS = ("sample",)
#: Waits that hold a loop to a rate besides the `sleep`s (`busy_wait(1 / fps - dt)`): a clock
#: read handed to one paces the loop, it does not measure GPU work.
PACING_WAITS = frozenset({"busy_wait", "wait_until", "sleep_until"})
#: Names of what a data loop iterates (`for x, y in val_loader`, `enumerate(train_dataset)`).
DATA_LOOP_WORDS = ("loader", "dataset", "batches")
#: Benchmark harnesses: handed a callable (or a statement), they run it many times and time it;
#: and the profilers, which record each kernel's own duration.
BENCHMARK_HARNESSES = frozenset(
    {
        "triton.testing.do_bench", "triton.testing.do_bench_cudagraph", "torch.utils.benchmark.Timer",
        "torch._inductor.utils.do_bench_using_profiling", "torch.profiler.profile", "torch.autograd.profiler.profile",
    }
) | TIMEIT_CALLS
#: Words in the name of a project's own harness (`bench_f`, `benchmark_model`, `run_timeit`).
BENCHMARK_WORDS = ("bench", "timeit")
#: Words of names that say which process of a distributed job runs (`rank`, `is_main_process`):
#: a test on them is true in a one-GPU run, unlike a `verbose` or `debug` switch.
#: Optimizers that fall back to their one-tensor-at-a-time path, with a host read of the step
#: size per tensor, when `lr` is a GPU tensor and `capturable` is off (torch/optim/adam.py).
TENSOR_LR_SINGLE_TENSOR_OPTIMIZERS = frozenset({"torch.optim.Adam", "torch.optim.AdamW", "torch.optim.adam.Adam", "torch.optim.adamw.AdamW"})
#: What one iteration of a Python loop picks from a GPU array is a slab, not an element or a
#: row, from this many elements (a kernel over it is no longer mostly launch overhead).
SLAB_ELEMENTS = 16_384
#: A float literal at most this small compared with a GPU value is a tolerance (`< 1e-10`).
TOLERANCE = 1e-3
#: `if count < N:` with N at most this runs on the first iterations only (a debug print of the
#: first examples), not on every one.
FIRST_ITERATIONS = 100
#: Loop targets that name optimisation steps: their inner loops are micro-steps, not a data loop.
STEP_WORDS = ("step",)
#: The `class_name` of a list a function built by appending GPU arrays and hands back
#: (`res = []; res.append(acc); return res`): unpacked, each item is one of those arrays.
APPENDED_ARRAYS = "appended-arrays"
#: Classes `isinstance(x, ...)` tests for a tensor with.
TENSOR_CLASSES = frozenset({"torch.Tensor", "cupy.ndarray"})
#: Words of a loop bound that counts the iterations of a solver, an attack or a sampler
#: (`range(self.n_iter)`, `range(max_iters)`, `range(self.n_queries)`, `range(num_steps)`).
ITERATION_WORDS = ("iter", "step", "quer")
PROCESS_WORDS = ("rank", "main_process", "master")
#: Tests that a GPU is present: code in their `else` (or under `if not ...`) runs on the CPU only.
GPU_PRESENT_TESTS = frozenset({"torch.cuda.is_available", "cupy.cuda.is_available", "numba.cuda.is_available"})
#: Names of an optimizer (`optimizer`, `optim_g`, `opt`): `if acc_step == 0: optimizer.step()`
#: is the training step itself, taken every accumulation period, not a sampled log.
OPTIMIZER_NAME_WORDS = ("optim",)
OPTIMIZER_SHORT_NAMES = frozenset({"opt", "opt_g", "opt_d"})
#: A loop over these iterates dimensions: a handful of iterations, each a whole-array kernel.
DIMENSION_ATTRIBUTES = frozenset({"shape", "ndim", "dim", "ndimension"})
DIMENSION_NAMES = frozenset({"ndim", "axes", "axis", "dims", "dimensions", "shape"})

#: Decorators that memoize a function: the same arguments hand back the same object (a table
#: built once), so copying a call's result to the GPU on every call repeats one copy.
MEMOIZING_DECORATORS = frozenset({"functools.lru_cache", "functools.cache"})

#: The last word of a name that holds a network (`actor`, `self.q_net`, `ema_model`): what such a
#: name moves with `.to(device)` is a module, whose calls and fields follow it, not a tensor.
MODEL_WORDS = frozenset(
    {"model", "net", "network", "actor", "critic", "policy", "encoder", "decoder", "generator", "discriminator", "backbone"}
)

#: Methods that initialise a model's weights (`reset_parameters`, torch's own name for it): with no
#: caller in the project, they run once, when the model is built.
WEIGHT_INIT_METHODS = frozenset(
    {"reset_parameters", "init_weights", "initialize_weights", "weights_init", "weight_init", "init_params",
     "init_parameters", "initialize_parameters", "reset_params"}
)
#: Bases whose subclass's `run` method is the body of a thread or process, run once when started.
WORKER_BASES = frozenset({THREAD_CLASS, "multiprocessing.Process", "multiprocessing.context.Process", "torch.multiprocessing.Process"})
