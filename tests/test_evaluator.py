"""The expression evaluator (`facts/evaluate.py`) and its value model (`facts/values.py`), directly.

Every rule reads what the evaluator says an expression is: an array of which library, on which
device, of what shape and dtype, or nothing known (None, on which rules stay silent). These
tests pin that answer on small snippets, without going through a rule. `evaluate` runs the
evaluator alone with names bound by hand; `value_after` runs the whole walk, for what statements
bind (unpacking, `+=`, if/else), and reads the value of one expression written after them.
"""

from __future__ import annotations

import textwrap
from dataclasses import replace

import libcst as cst
import pytest

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.evaluate import Evaluator
from gpuadvisor.analysis.facts.imports import ImportTable
from gpuadvisor.analysis.facts.values import Device, Evidence, Kind, Value, SOME_NUMBER, array, number
from gpuadvisor.analysis.facts.walker import gather_facts

IMPORTS = "import numpy as np\nimport cupy as cp\nimport torch\n"

GPU_TENSOR = array("torch", Device.GPU)
HOST_TENSOR = array("torch", Device.HOST)
HOST_ARRAY = array("numpy", Device.HOST)
CUPY_ARRAY = array("cupy", Device.GPU)


def evaluator() -> Evaluator:
    """An evaluator that knows `IMPORTS`, registered the way the walk registers them."""
    imports = ImportTable()
    for line in cst.parse_module(IMPORTS).body:
        statement = line.body[0]
        assert isinstance(statement, cst.Import)
        imports.add_import(statement)
    return Evaluator(imports, memo={})


def evaluate(expression: str, **names: Value) -> Value | None:
    """What the evaluator says `expression` is, with `names` bound in its scope."""
    values = evaluator()
    for name, value in names.items():
        values.store(name, value)
    return values.evaluate(cst.parse_expression(expression))


def value_after(code: str, expression: str) -> Value | None:
    """What `expression` is after the walk of `code` (the walker binds the names)."""
    module = cst.parse_module(textwrap.dedent(code).lstrip("\n") + f"probe = {expression}\n")
    assignment = module.body[-1].body[0]
    return gather_facts(module).value(assignment.value)


# -- library calls --------------------------------------------------------------------------
def test_a_cupy_call_makes_a_gpu_array_of_known_shape_and_dtype() -> None:
    assert evaluate("cp.zeros(8)") == array("cupy", Device.GPU, shape=(8,), dtype="float64", generated=True)


def test_a_numpy_call_makes_a_host_array_with_the_dtype_it_names() -> None:
    made = evaluate("np.zeros((4, 8), dtype=np.float32)")
    assert made == array("numpy", Device.HOST, shape=(4, 8), dtype="float32", generated=True)


def test_a_torch_factory_given_device_cuda_makes_a_tensor_established_on_the_gpu() -> None:
    made = evaluate("torch.zeros(3, device='cuda')")
    assert made is not None and made.library == "torch" and made.evidence is Evidence.ESTABLISHED


def test_a_torch_factory_sized_by_keyword_or_by_dimensions_has_that_shape() -> None:
    for call in ("torch.zeros(size=(2, 3))", "torch.rand(size=(2, 3))", "torch.ones(2, 3)", "torch.randn(2, 3)"):
        made = evaluate(call)
        assert made is not None and made.shape == (2, 3), call


def test_a_device_chosen_at_run_time_is_configured_not_established() -> None:
    made = evaluate("torch.zeros(3, device='cuda' if ok else 'cpu')")
    assert made is not None and made.device is Device.MAYBE_GPU and made.evidence is Evidence.CONFIGURED


def test_numpy_applied_to_a_cupy_array_runs_on_the_gpu() -> None:
    assert evaluate("np.sum(x)", x=CUPY_ARRAY) == CUPY_ARRAY


def test_a_view_attribute_follows_the_shape() -> None:
    made = evaluate("np.ones((3, 4)).T")
    assert made is not None and made.shape == (4, 3)


@pytest.mark.parametrize(
    ("reshape", "rank"),
    [("x.view(-1, m, n)", 3), ("x.reshape((b, -1))", 2), ("x.view(n)", None), ("x.view(*sizes)", None), ("x.reshape(b, *rest)", None)],
)
def test_a_reshape_of_unknown_sizes_has_as_many_dimensions_as_it_is_handed(reshape: str, rank: int | None) -> None:
    """`view(-1, m, n)` is a stack of matrices whatever `m` and `n` are; one name may be a whole
    shape, and a starred argument hands over sizes we cannot count."""
    made = evaluate(reshape, x=GPU_TENSOR)
    assert made is not None and made.rank == rank


@pytest.mark.parametrize("call", ["torch.std_mean(x, dim=0)", "torch.var_mean(x)", "torch.aminmax(x)", "torch.cummax(x, dim=0)"])
def test_a_call_returning_two_tensors_is_no_tensor_but_its_parts_are(call: str) -> None:
    """Iterating `torch.std_mean(x)` walks its two results, not rows; unpacked, each is a tensor
    where `x` is."""
    assert evaluate(call, x=GPU_TENSOR) is None
    std = value_after(f"import torch\nx = torch.ones(4, 5, device='cuda')\nstd, mean = {call}\n", "mean")
    assert std is not None and std.is_gpu_array


def test_a_gpu_operand_puts_the_result_of_arithmetic_on_the_gpu() -> None:
    assert evaluate("a + b", a=HOST_ARRAY, b=GPU_TENSOR) == GPU_TENSOR


def test_a_comparison_of_arrays_is_a_bool_array_where_they_are() -> None:
    assert evaluate("x > 0", x=GPU_TENSOR) == array("torch", Device.GPU, dtype="bool")


def test_an_identity_test_is_no_array() -> None:
    assert evaluate("x is None", x=GPU_TENSOR) is None


# -- numbers and devices -------------------------------------------------------------------
def test_sizes_are_folded_into_numbers() -> None:
    assert evaluate("2 * N", N=number(1024)) == number(2048)


def test_a_shift_is_folded_too() -> None:
    assert evaluate("1 << 20") == number(1 << 20)


def test_shifts_are_folded_up_to_62_bits_and_no_further() -> None:
    """Sizes stop at 2**63 (no array has more elements): a shift of 63 bits or more, or by a
    negative count, is no size."""
    assert evaluate("1 << 62") == number(1 << 62)
    assert evaluate("N >> 62", N=number(1 << 62)) == number(1)
    assert evaluate("1 << 63") is None
    assert evaluate("N >> 63", N=number(1 << 40)) is None
    assert evaluate("1 << -1") is None


def test_products_are_folded_up_to_2_to_the_63_and_no_further() -> None:
    """`2**64` or `N * N` past 2**63 is no array size: folding stops there."""
    assert evaluate("2 ** 62") == number(2**62)
    assert evaluate("2 ** 64") is None
    assert evaluate("N * N", N=number(2**33)) is None


@pytest.mark.parametrize("operator", ["+", "-", "*", "//", "/", "%", "**", "<<", ">>"])
@pytest.mark.parametrize("left, right", [(7, 3), (-7, 2), (12, -5), (2.5, 2), (6, 0), (3, 70), (10**7, 3), (1, 64), (1, 65)])
def test_constant_sizes_fold_as_python_computes_them(operator: str, left: float, right: float) -> None:
    """Folding is Python's arithmetic, bounded: a division by zero, a shift by a negative or
    more than 62 bits, a power of a huge base or over 64, or a result past 2**63 is no size."""
    try:
        expected: float | None = eval(f"({left}) {operator} ({right})")
    except (ZeroDivisionError, ValueError, TypeError):  # TypeError: a float shifted
        expected = None
    beyond = (operator in ("<<", ">>") and not 0 <= right <= 62) or (operator == "**" and (abs(left) >= 1e6 or not 0 <= right <= 64))
    if beyond or (expected is not None and abs(expected) > 2.0**63):
        expected = None
    assert evaluate(f"A {operator} B", A=number(left), B=number(right)) == (None if expected is None else number(expected))


def test_unary_minus_negates_a_number() -> None:
    assert evaluate("-N", N=number(4)) == number(-4)


def test_unary_minus_keeps_an_array_as_it_is() -> None:
    assert evaluate("-x", x=GPU_TENSOR) == GPU_TENSOR


def test_not_of_an_array_is_a_python_bool() -> None:
    assert evaluate("not x", x=GPU_TENSOR) is None


def test_a_cuda_string_names_the_gpu() -> None:
    assert evaluate("'cuda:0'") == Value(Kind.DEVICE, "python", Device.GPU)


def test_a_device_string_is_short_and_a_longer_one_is_a_message() -> None:
    """Literals of up to 40 characters (quotes included) are read as device strings; longer ones
    (`"cuda: out of memory, halving the batch"` in a log call) name no device."""
    device_string = "'cuda:" + "0" * (40 - len("'cuda:'")) + "'"
    message = "'cuda:" + "0" * (41 - len("'cuda:'")) + "'"
    assert (len(device_string), len(message)) == (40, 41)
    assert evaluate(device_string) == Value(Kind.DEVICE, "python", Device.GPU)
    assert evaluate(message) is None


def test_an_f_string_names_the_device_before_its_placeholder() -> None:
    assert evaluate("f'cuda:{rank}'") == Value(Kind.DEVICE, "python", Device.GPU)


def test_the_device_attribute_of_an_array_is_where_it_lives() -> None:
    assert evaluate("x.device", x=GPU_TENSOR) == Value(Kind.DEVICE, "torch", Device.GPU)


# -- moves between devices -----------------------------------------------------------------
def test_to_a_cuda_device_moves_a_tensor_to_the_gpu() -> None:
    assert evaluate("x.to(torch.device('cuda'))", x=HOST_TENSOR) == GPU_TENSOR


def test_to_cpu_moves_a_tensor_to_the_host() -> None:
    assert evaluate("x.to('cpu')", x=GPU_TENSOR) == HOST_TENSOR


def test_to_a_dtype_keeps_the_device_and_takes_the_dtype() -> None:
    assert evaluate("x.to(torch.float16)", x=GPU_TENSOR) == array("torch", Device.GPU, dtype="float16")


def test_to_an_unknown_target_is_unknown() -> None:
    assert evaluate("x.to(somewhere)", x=GPU_TENSOR) is None


def test_to_a_device_parameter_is_the_configured_gpu() -> None:
    made = value_after("import torch\ndef f(device):\n    return torch.ones(3).to(device)\n", "f(1)")
    assert made is not None and made.device is Device.MAYBE_GPU


def test_cpu_keeps_the_library_and_moves_to_the_host() -> None:
    assert evaluate("x.cpu()", x=GPU_TENSOR) == HOST_TENSOR


def test_cuda_moves_to_the_gpu() -> None:
    assert evaluate("x.cuda()", x=HOST_TENSOR) == GPU_TENSOR


def test_numpy_of_a_tensor_is_a_numpy_array_on_the_host() -> None:
    assert evaluate("x.numpy()", x=GPU_TENSOR) == HOST_ARRAY


def test_get_of_a_cupy_array_is_a_numpy_array_on_the_host() -> None:
    assert evaluate("x.get()", x=CUPY_ARRAY) == HOST_ARRAY


def test_asnumpy_is_a_numpy_array_on_the_host() -> None:
    assert evaluate("cp.asnumpy(x)", x=CUPY_ARRAY) == HOST_ARRAY


def test_item_reads_back_a_python_number_that_is_no_array() -> None:
    """The read itself is a sync the call facts record; its result is a Python number on the
    host, whose value the code does not show (so a function summing such reads returns one)."""
    assert evaluate("x.item()", x=GPU_TENSOR) == SOME_NUMBER
    assert evaluate("float(x)", x=GPU_TENSOR) == SOME_NUMBER
    assert evaluate("total + x.item()", total=number(0.0), x=GPU_TENSOR) == SOME_NUMBER


def test_whole_array_comparisons_answer_with_a_python_bool() -> None:
    """`torch.equal`/`allclose` read their answer back themselves: what they return is a host
    bool, not a GPU value for an `if` to read a second time."""
    assert evaluate("torch.equal(x, torch.ones_like(x))", x=GPU_TENSOR) is None
    assert evaluate("x.allclose(x * 2)", x=GPU_TENSOR) is None


def test_a_reduction_method_stays_where_its_array_is() -> None:
    """A full reduction is a scalar (0-d) on the array's device, even when the sizes are unknown."""
    assert evaluate("x.sum()", x=GPU_TENSOR) == replace(GPU_TENSOR, ndim=0)
    assert evaluate("x.sum(dim=1)", x=GPU_TENSOR) == GPU_TENSOR


# -- a or b, conditionals ------------------------------------------------------------------
def test_or_of_two_equal_values_is_that_value() -> None:
    assert evaluate("a or b", a=GPU_TENSOR, b=GPU_TENSOR) == GPU_TENSOR


def test_or_with_an_unknown_side_is_the_known_side() -> None:
    assert evaluate("a or b", a=GPU_TENSOR) == GPU_TENSOR


def test_or_of_a_gpu_and_a_host_array_is_maybe_on_the_gpu() -> None:
    assert evaluate("a or b", a=HOST_ARRAY, b=GPU_TENSOR) == array("python", Device.MAYBE_GPU)


def test_a_conditional_whose_branches_disagree_on_device_is_maybe_on_the_gpu() -> None:
    assert evaluate("a if ok else b", a=GPU_TENSOR, b=HOST_TENSOR) == array("torch", Device.MAYBE_GPU)


def test_an_if_else_choosing_the_device_binds_a_maybe_gpu_device() -> None:
    code = """
    import torch
    if torch.cuda.is_available():
        device = "cuda"
    else:
        device = "cpu"
    """
    assert value_after(code, "device") == Value(Kind.DEVICE, "python", Device.MAYBE_GPU)


# -- unknown calls and names ---------------------------------------------------------------
def test_an_unbound_name_is_unknown() -> None:
    assert evaluate("nobody") is None


def test_an_unknown_call_on_numbers_is_unknown() -> None:
    assert evaluate("mystery(3)") is None


def test_an_unknown_call_on_host_arrays_is_unknown() -> None:
    assert evaluate("mystery(x)", x=HOST_ARRAY) is None


def test_an_unknown_call_on_a_gpu_tensor_is_only_inferred_to_be_on_the_gpu() -> None:
    """`criterion(out, y)`: probably a tensor there, not enough for rules that need it established."""
    made = evaluate("mystery(x)", x=GPU_TENSOR)
    assert made is not None and made.evidence is Evidence.INFERRED and not made.is_gpu_array


# -- what statements bind ------------------------------------------------------------------
def test_tuple_unpacking_binds_each_name_to_its_own_value() -> None:
    code = "import numpy as np\nimport cupy as cp\na, b = cp.ones(3), np.ones(3)\n"
    first, second = value_after(code, "a"), value_after(code, "b")
    assert first is not None and first.library == "cupy" and first.device is Device.GPU
    assert second is not None and second.library == "numpy" and second.device is Device.HOST


def test_unpacking_the_output_of_a_gpu_module_infers_each_part_is_on_the_gpu() -> None:
    code = "import torch\nmodel = torch.nn.LSTM(4, 4).cuda()\nout, hidden = model(x)\n"
    # each part may itself be a tuple (LSTM's `hidden` is `(h, c)`): still packed
    assert value_after(code, "out") == replace(array("torch", Device.GPU, inferred=True), packed=True)


def test_adding_a_tensor_to_a_float_makes_the_name_a_tensor() -> None:
    """`x = 0.0; x += loss`: an accumulator becomes the tensor it sums (and reading it a sync)."""
    code = "import torch\nt = torch.ones(3).cuda()\nx = 0.0\nx += t\n"
    made = value_after(code, "x")
    assert made is not None and made.is_array and made.device is Device.GPU


def test_an_expression_keeps_the_value_it_had_where_it_stood() -> None:
    """Values are memoised per node: a later rebinding does not change what rules read there."""
    values = evaluator()
    node = cst.parse_expression("x")
    values.store("x", GPU_TENSOR)
    values.evaluate(node)
    values.store("x", HOST_ARRAY)
    assert values.evaluate(node) == GPU_TENSOR


def test_a_name_holds_the_value_of_its_latest_binding() -> None:
    code = "import numpy as np\nimport cupy as cp\nx = cp.ones(3)\nx = np.ones(3)\n"
    assert value_after(code, "x") == array("numpy", Device.HOST, shape=(3,), dtype="float64", generated=True)


# -- cases found by the mutation run of seed 7219 ---------------------------------------------
def test_a_module_wrapper_hands_back_the_module_where_it_is() -> None:
    model = Value(Kind.MODULE, "torch", Device.GPU, class_name="Net")
    assert evaluate("torch.nn.parallel.DistributedDataParallel(model)", model=model) == model


def test_a_whole_array_reduction_is_a_scalar() -> None:
    x = array("numpy", Device.HOST, shape=(4, 5), dtype="float64")
    assert evaluate("np.sum(x)", x=x).shape == ()  # type: ignore[union-attr]
    assert evaluate("x.sum()", x=x).shape == ()  # type: ignore[union-attr]


def test_a_reduction_over_an_unknown_axis_has_an_unknown_shape() -> None:
    x = array("torch", Device.GPU, shape=(4, 5), dtype="float32")
    assert evaluate("x.sum(dim=k)", x=x).shape is None  # type: ignore[union-attr]
    assert evaluate("np.sum(x, k)", x=array("numpy", Device.HOST, shape=(4, 5))).shape is None  # type: ignore[union-attr]


# -- dimensions without sizes -----------------------------------------------------------------
def test_a_factory_of_unknown_sizes_still_says_how_many_dimensions() -> None:
    made = evaluate("cp.empty((natm, 3, nao, nao))")
    assert made is not None and made.shape is None and made.rank == 4


def test_indexing_drops_a_dimension_per_plain_index_and_keeps_one_per_slice() -> None:
    blocks = replace(CUPY_ARRAY, ndim=4)
    assert evaluate("dv[i]", dv=blocks).rank == 3
    assert evaluate("dv[i, :, 0]", dv=blocks).rank == 2


def test_an_index_array_or_a_reduction_leaves_the_dimensions_unknown() -> None:
    blocks = replace(CUPY_ARRAY, ndim=4)
    assert evaluate("dv[order]", dv=blocks, order=CUPY_ARRAY).rank is None
    assert evaluate("dv.sum(0)", dv=blocks).rank is None
    assert evaluate("dv.astype(cp.float32)", dv=blocks).rank == 4


# -- the knowledge tables, entry by entry ---------------------------------------------------
@pytest.mark.parametrize("method", sorted(kb.D2H_METHODS))
def test_every_copy_back_method_gives_an_array_on_the_host(method: str) -> None:
    assert evaluate(f"x.{method}()", x=GPU_TENSOR) in (HOST_ARRAY, HOST_TENSOR)  # `.cpu()` keeps the library


@pytest.mark.parametrize("method", sorted((kb.SCALAR_SYNC_METHODS - {kb.SCALAR_READ_METHOD}) | kb.METADATA_METHODS - {"requires_grad_", "type"}))
def test_every_scalar_read_and_metadata_method_gives_no_array(method: str) -> None:
    assert evaluate(f"x.{method}()", x=GPU_TENSOR) is None


@pytest.mark.parametrize("attribute", sorted(kb.ARRAY_VIEW_ATTRIBUTES))
def test_every_view_attribute_is_an_array_where_its_array_is(attribute: str) -> None:
    made = evaluate(f"x.{attribute}", x=CUPY_ARRAY)
    assert made is not None and (made.library, made.device) == ("cupy", Device.GPU)


@pytest.mark.parametrize("method", sorted(kb.MODULE_SELF_METHODS))
def test_every_module_method_that_returns_its_module_keeps_it_where_it_is(method: str) -> None:
    model = value_after("import torch\nmodel = torch.nn.Linear(4, 4).cuda()\n", f"model.{method}()")
    assert model is not None and model.kind is Kind.MODULE and model.device is Device.GPU


# -- objects built with a device ----------------------------------------------------------------
def test_a_module_class_of_this_file_built_with_a_gpu_device_is_on_the_gpu() -> None:
    code = """
        import torch
        class Net(torch.nn.Module):
            pass
        model = Net(config, device="cuda")
        plain = Net(config)
    """
    assert value_after(code, "model").device is Device.GPU
    assert value_after(code, "plain").device is Device.HOST


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        ("GPTLMHeadModel(config, device='cuda', dtype=torch.float16)", Kind.MODULE),  # PyTorch's factory keywords
        ("Record({'obs': torch.randn(4, device='cuda')}, device='cuda')", Kind.ARRAY),  # holds the tensors it was handed
        ("RunResult(name, device='cuda')", None),  # a device's name among other settings
    ],
)
def test_an_unknown_class_built_with_a_gpu_device(call: str, kind: Kind | None) -> None:
    made = evaluate(call)
    assert (made.kind if made is not None else None) is kind
    assert made is None or made.on_gpu


def test_a_batch_moved_item_by_item_is_a_batch_on_the_gpu() -> None:
    moved = value_after("import torch\nbatch = tuple(t.to('cuda') for t in batch)\n", "batch")
    assert moved is not None and moved.is_array and moved.on_gpu and moved.holds_fields
    assert value_after("import torch\nsizes = [t.size(0) for t in batch]\n", "sizes") is None


@pytest.mark.parametrize(
    ("text", "device"),
    [
        ('"cuda:" + str(args.gpu)', Device.GPU),  # as `f"cuda:{args.gpu}"`
        ('"cuda:%d" % rank', Device.GPU),
        ('"cpu:" + str(rank)', Device.HOST),
        ('"run_" + name', None),  # a string, no device
        ('"cuda" + suffix', None),  # no colon: the device type is not all of the prefix
        ('"x%d" % i', None),
    ],
)
def test_a_device_named_by_a_string_built_from_its_type(text: str, device: Device | None) -> None:
    named = evaluate(text)
    assert (named.device if named is not None and named.kind is Kind.DEVICE else None) is device


def test_a_generators_items_are_what_its_yields_agree_on() -> None:
    code = """
        import torch
        def batches(x, size):
            for start in range(0, x.size(0), size):
                yield x[start:start + size]
        data = torch.randn(1000, 8, device="cuda")
        for batch in batches(data, 64):
            last = batch
    """
    assert value_after(code, "batches(data, 64)").kind is Kind.ITEMS  # the generator itself is no array
    assert value_after(code, "last").is_gpu_array


def test_a_batch_samplers_items_are_lists_of_indices() -> None:
    code = """
        from torch.utils.data import BatchSampler, SequentialSampler
        for indices in BatchSampler(SequentialSampler(range(100)), 10, drop_last=False):
            picked = indices
    """
    assert value_after(code, "picked").kind is Kind.INDEX_LIST


def test_a_warp_array_type_with_no_data_is_no_array() -> None:
    code = """
        import warp as wp
        wp.set_device("cuda:0")
    """
    assert value_after(code, "wp.array(dtype=wp.vec3)") is None  # a kernel parameter's type
    assert value_after(code, "wp.array(shape=8, dtype=float)") is not None


def test_a_thing_moved_then_switched_to_eval_mode_is_a_module() -> None:
    code = """
        import torch
        model = build(config)
        model = model.cuda().eval()
    """
    moved = value_after(code, "model")
    assert moved is not None and moved.kind is Kind.MODULE and moved.on_gpu


def test_a_helper_returning_a_model_and_its_tokenizer_hands_back_the_model_on_the_gpu() -> None:
    code = """
        from transformers import AutoModelForCausalLM, AutoTokenizer
        def load(name):
            tokenizer = AutoTokenizer.from_pretrained(name)
            model = AutoModelForCausalLM.from_pretrained(name, device_map="auto")
            return model, tokenizer
        model, tokenizer = load("gpt2")
    """
    model = value_after(code, "model")
    assert model is not None and model.kind is Kind.MODULE and model.on_gpu
    assert value_after(code, "tokenizer") is None


@pytest.mark.parametrize("item", ['nets["policy"]', "nets[0]", "nets[1:]"])
def test_an_item_of_a_module_container_is_a_module_where_the_container_is(item: str) -> None:
    """`self.nets["policy"](obs)` in robomimic: an item of a `ModuleDict` (a `ModuleList`, a slice
    of a `Sequential`) is a submodule, on the device the container was moved to."""
    code = """
        import torch
        nets = torch.nn.ModuleDict({"policy": torch.nn.Linear(4, 4)}).cuda()
    """
    submodule = value_after(code, item)
    assert submodule is not None and submodule.kind is Kind.MODULE and submodule.on_gpu


def test_an_accelerator_collective_hands_back_a_tensor_on_its_inputs_device() -> None:
    gathered = evaluate("accelerator.gather(counts)", counts=GPU_TENSOR)
    assert gathered is not None and gathered.is_gpu_array
    assert evaluate("accelerator.gather(counts)", counts=HOST_TENSOR).device is Device.HOST
    guessed = evaluate("archive.gather(counts)", counts=GPU_TENSOR)  # not an accelerator by its name: only inferred
    assert guessed is not None and not guessed.is_gpu_array and guessed.is_device_array


def test_a_boolean_factory_makes_a_boolean_mask() -> None:
    made = evaluate("torch.zeros(4, 3, dtype=torch.bool, device='cuda')")
    assert made is not None and made.dtype == "bool"
    like = evaluate("torch.zeros_like(x, dtype=torch.bool)", x=evaluate("torch.ones(4, 3, device='cuda')"))
    assert like is not None and like.dtype == "bool"


def test_a_named_dtype_we_do_not_know_leaves_the_dtype_unknown_not_the_default() -> None:
    made = evaluate("torch.zeros(4, dtype=torch.complex32)")
    assert made is not None and made.dtype is None


@pytest.mark.parametrize(
    ("expression", "shape"),
    [
        ("torch.zeros(4, 3)", (4, 3)),  # torch takes the sizes one by one
        ("torch.ones(4, 3, device='cuda')", (4, 3)),
        ("torch.full((4, 3), 0.5)", (4, 3)),  # but `full` takes them as one tuple, then the value
        ("np.zeros((4, 3))", (4, 3)),  # NumPy and CuPy always take one shape
        ("np.full((4, 3), 0.5)", (4, 3)),
        ("cp.full((4, 3), 2.0)", (4, 3)),
    ],
)
def test_a_fill_factory_reads_its_shape_the_way_its_library_takes_it(expression: str, shape: tuple[int, ...]) -> None:
    made = evaluate(expression)
    assert made is not None and made.shape == shape


def test_a_test_or_a_join_of_values_made_from_nothing_is_made_from_nothing() -> None:
    """A label table built from `arange` (compared with itself, joined with copies of itself) is a
    host fill: it could be made on the GPU. A test against data or an unknown value is data."""
    code = "import torch\nlabels = torch.arange(4)\n"
    assert value_after(code, "labels.unsqueeze(0) == labels.unsqueeze(1)").generated  # type: ignore[union-attr]
    assert value_after(code, "labels < 3").generated  # type: ignore[union-attr]
    assert value_after(code, "torch.cat([torch.arange(4) for _ in range(2)])").generated  # type: ignore[union-attr]
    assert value_after(code, "torch.cat([labels, labels])").generated  # type: ignore[union-attr]
    assert not value_after(code, "labels == targets").generated  # type: ignore[union-attr]
    assert not value_after(code + "data = torch.load('x.pt')\n", "torch.cat([labels, data])").generated  # type: ignore[union-attr]


def test_what_a_cudf_frame_hands_back_lives_where_its_method_puts_it() -> None:
    """`to_numpy()` and `.values_host` are NumPy copies on the host, `.values` and `to_cupy()` CuPy
    arrays on the GPU: the rules after a cuDF read see where the data went."""
    code = "import cudf\ndf = cudf.read_parquet('sales.parquet')\n"
    assert value_after(code, "df['amount'].to_numpy()") == HOST_ARRAY
    assert value_after(code, "df['amount'].values_host") == HOST_ARRAY
    assert value_after(code, "df['amount'].values") == CUPY_ARRAY


@pytest.mark.parametrize(
    ("call", "series"),
    [("cudf.DataFrame.from_pandas(pdf)", False), ("cudf.Series.from_pandas(ps)", True), ("cudf.Series([1, 2])", True)],
)
def test_a_cudf_constructor_builds_a_frame_on_the_gpu_and_other_package_functions_do_not(call: str, series: bool) -> None:
    """The `from_*` constructors of cuDF's frame classes build frames there, as readers do; a
    `from_*` function elsewhere in the package (`cudf.io.from_dlpack`'s neighbours) is not one."""
    found = value_after("import cudf\n", call)
    assert found is not None and (found.library, found.device, found.class_name == kb.CUDF_SERIES) == ("cudf", Device.GPU, series)
    assert value_after("import cudf\n", "cudf.utils.from_config(cfg)") is None


def test_the_sum_of_a_dict_of_gpu_losses_is_a_gpu_tensor_but_a_list_of_them_is_no_tensor() -> None:
    """`sum(scaled.values())` adds the tensors into one on their device; `list(scaled.values())`
    is a Python list of them, no array a rule may read as one."""
    code = """
    import torch
    model = Detector().cuda()
    losses = criterion(model(images.cuda()), targets)
    scaled = {k: v * weights[k] for k, v in losses.items()}
    """
    summed = value_after(code, "sum(scaled.values())")
    assert summed is not None and summed.is_array and summed.on_gpu
    assert value_after(code, "list(scaled.values())") is None
    assert value_after(code, "sorted(scaled.values())") is None


# -- methods of a module on the GPU ---------------------------------------------------------
_GPU_MODEL = """
import torch
model = torch.nn.Linear(8, 8).cuda()
obs = torch.randn(4, 8, device="cuda")
"""


def test_a_method_of_a_gpu_module_handed_data_computes_there() -> None:
    value = value_after(_GPU_MODEL, "model.get_action(obs)")
    assert value is not None and value.is_gpu_array


def test_a_method_of_a_gpu_module_handed_nothing_answers_about_the_model() -> None:
    # `model.no_weight_decay_keywords()` is a set of names; `vae.sample()` draws its own input
    assert value_after(_GPU_MODEL, "model.no_weight_decay_keywords()") is None
    sampled = value_after(_GPU_MODEL, "model.sample()")
    assert sampled is not None and sampled.is_gpu_array


def test_a_cudf_frame_copied_to_pandas_is_no_longer_a_gpu_value() -> None:
    code = """
    import cudf
    gdf = cudf.read_parquet("events.parquet")
    """
    assert value_after(code, "gdf.to_pandas()") is None
    assert value_after(code, "gdf.to_numpy()") == array("numpy", Device.HOST)


def test_an_item_stored_under_a_string_key_is_read_back_until_the_dict_is_bound_anew() -> None:
    """`state["mu"] = torch.zeros_like(p)`, then `mu = state["mu"]`: an optimizer's momentum
    buffer lives where the parameter does; once `state` names another dict, it is unknown."""
    code = "import torch\nx = torch.zeros(3, device='cuda')\nstate = {}\nstate['mu'] = torch.zeros_like(x)\n"
    assert value_after(code + "mu = state['mu']\n", "mu").on_gpu
    assert value_after(code + "state = {}\nmu = state['mu']\n", "mu") is None
    assert value_after(code + "mu = state['nu']\n", "mu") is None


def test_a_numpy_draw_without_a_size_is_one_number() -> None:
    """`np.random.choice(train_ids)` picks one id: indexing a tensor with it copies no index array."""
    assert evaluate("np.random.choice(ids)").kind is Kind.NUMBER
    assert evaluate("np.random.randint(0, n)").kind is Kind.NUMBER
    assert evaluate("np.random.rand()").kind is Kind.NUMBER
    assert evaluate("np.random.choice(ids, 4)").is_array
    assert evaluate("np.random.randint(0, n, size=8)").is_array
    assert evaluate("np.random.rand(3)").is_array


def test_a_python_sum_over_gpu_terms_is_a_tensor_there_known_by_inference() -> None:
    """`sum(F.mse_loss(q, t) for q in qs)`: builtin `sum` of GPU terms hands back a GPU tensor, but
    only inferred (the first term could be a Python number added to them)."""
    made = evaluate("sum(x.pow(2).mean() for _ in range(3))", x=array("torch", Device.GPU))
    assert made is not None and made.is_array and made.on_gpu
    assert made.evidence is Evidence.INFERRED


FETCHER = """
import torch
from munch import Munch
class InputFetcher:
    def __init__(self, loader):
        self.loader = loader
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    def __next__(self):
        x, y = next(iter(self.loader))
        inputs = Munch(x_src=x, y_src=y, z=torch.randn(x.size(0), 16))
        return Munch({k: v.to(self.device) for k, v in inputs.items()})
fetcher = InputFetcher(loader)
inputs = next(fetcher)
"""


def test_a_batch_fetcher_object_hands_next_a_record_of_gpu_fields() -> None:
    """`inputs = next(fetcher)` runs the class's `__next__`, which moves each field of a record to the
    device (`{k: v.to(device) for k, v in inputs.items()}`): `inputs.x_src` is a GPU tensor."""
    fields = value_after(FETCHER, "inputs.x_src")
    assert fields is not None and fields.is_array and fields.on_gpu
    assert value_after(FETCHER, "inputs").holds_fields


def test_a_record_holds_gpu_fields_only_when_every_array_it_is_handed_is_on_a_gpu() -> None:
    made = "import torch\nfrom munch import Munch\nx = torch.randn(4, device='cuda')\n"
    record = value_after(made, "Munch(x=x, y=x * 2)")
    assert record is not None and record.holds_fields and record.on_gpu
    assert value_after(made, "Munch(x=x, y=torch.zeros(4))") is None  # a host tensor among its fields
    assert value_after(made, "dict(lr=0.1, steps=10)") is None
    assert value_after(made, "dict(q=x, seqlens=[128, 256])") is None  # flash-attention's benchmark context: mixed fields


def test_only_a_mode_switch_on_a_built_object_says_it_is_a_module() -> None:
    """`make_model(cfg).eval().to("cuda")`: only modules switch modes, so the result is a module on
    the GPU; `load(path).float().to("cuda")` may be a tensor cast first, so it is a tensor there."""
    assert evaluate("make_model(cfg).eval().to('cuda')").kind is Kind.MODULE
    cast = evaluate("load(path).float().to('cuda')")
    assert cast is not None and cast.kind is Kind.ARRAY and cast.on_gpu


def test_zip_binds_rows_only_when_each_target_has_its_own_argument() -> None:
    """`for x, y in zip(a, b)`: x is a row of a; with a starred argument (`zip(*pairs, b)`) the
    targets no longer line up with the arguments, so nothing is bound."""
    code = "import torch\nouts = torch.randn(4, 3, device='cuda')\nfor x, y in zip({}):\n    pass\n"
    paired = value_after(code.format("outs, outs"), "x")
    assert paired is not None and paired.on_gpu
    assert value_after(code.format("*outs, outs"), "x") is None


def test_a_reduction_of_a_cudf_column_is_a_number() -> None:
    code = "import cudf\ndf = cudf.read_csv('sales.csv')\ncolumn = df['amount']\n"
    assert value_after(code, "column.sum()").kind is Kind.NUMBER


# -- KeOps formulas: symbolic until reduced ----------------------------------------------------
KEOPS = """
import torch
from pykeops.torch import Genred, LazyTensor
x = torch.randn(1000, 3, device="cuda")
b = torch.randn(1000, 2, device="cuda")
x_i, x_j = LazyTensor(x[:, None, :]), LazyTensor(x[None, :, :])
d = ((x_i - x_j) ** 2).sum(-1)
routine = Genred("SqDist(x,y)", ["x=Vi(3)", "y=Vj(3)"], reduction_op="Sum", axis=1)
"""


@pytest.mark.parametrize("expression", ["d", "-d", "(-d / 2).exp()", "d.T", "d.sum(2)", "d.min()", "x_i * 2.0"])
def test_building_a_keops_formula_gives_a_formula_where_its_inputs_live(expression: str) -> None:
    found = value_after(KEOPS, expression)
    assert found is not None and (found.kind, found.library, found.device) == (Kind.FORMULA, "torch", Device.GPU)


@pytest.mark.parametrize("expression", ["d.sum(dim=1)", "d.sum(0)", "d.argKmin(5, dim=1)", "d.exp() @ b", "d.solve(b, alpha=1.0)", "routine(x, x)"])
def test_a_keops_reduction_is_a_tensor_whose_backward_waits(expression: str) -> None:
    assert value_after(KEOPS, expression) == Value(Kind.ARRAY, "torch", Device.GPU, backward_waits=True)


def test_a_formula_of_inputs_of_unknown_place_runs_to_nothing_known() -> None:
    """Stay silent on what is not known: a reduction of a formula built from parameters is no array."""
    code = "from pykeops.torch import LazyTensor\ndef kernel(a):\n    return LazyTensor(a[:, None, :]).sum(dim=1)\n"
    assert value_after(code, "kernel(z)") is None
    assert value_after(code + "k = LazyTensor(z[:, None])\n", "k.sum(dim=1)") is None


# -- basic indexing, against NumPy -------------------------------------------------------------
@pytest.mark.parametrize(
    "index",
    ["...", "..., 0", "0, ...", "..., ...", "None, ...", "1:, ..., None", ":, :, :, :", "0, 0, 0", "0, 0, 0, 0", "..., None, 1", "0, ..., 0, ..."],
)
def test_a_basic_index_gives_numpys_shape_or_none_where_numpy_refuses(index: str) -> None:
    """`x[..., ...]` and too many indices are IndexErrors in NumPy: no shape, rather than a wrong one."""
    import numpy as np

    try:
        expected: tuple[int, ...] | None = eval(f"np.empty((2, 3, 4))[{index}]", {"np": np}).shape  # noqa: S307 (the test's own literals)
    except IndexError:
        expected = None
    found = evaluate(f"x[{index}]", x=array("cupy", Device.GPU, shape=(2, 3, 4)))
    assert (found.shape if found is not None else None) == expected


# -- cases found by the mutation run of seed 9494 ---------------------------------------------
@pytest.mark.parametrize(("item", "device"), [("fabric.init_module()", Device.MAYBE_GPU), ("self.accelerator.init_module()", Device.MAYBE_GPU), ("builder.init_module()", None)])
def test_an_accelerators_init_module_sets_the_default_device(item: str, device: Device | None) -> None:
    """`with fabric.init_module():` builds the model on the accelerator; the same method of
    something not named as an accelerator says nothing."""
    assert evaluator().context_device(cst.parse_expression(item)) is device


@pytest.mark.parametrize("query", ["wp.get_device()", "wp.get_preferred_device()"])
def test_warps_device_query_without_an_argument_is_its_default_device_and_a_bare_scope_is_none(query: str) -> None:
    found = value_after("import warp as wp\n", query)
    assert found is not None and found.kind is Kind.DEVICE and found.library == "warp"
    assert value_after("import warp as wp\n", "wp.ScopedDevice()") is None


@pytest.mark.parametrize(
    ("expression", "rank"),
    [
        ("torch.ones(x.shape[0])", 1),
        ("torch.zeros(x.size(0))", 1),
        ("torch.zeros(len(batch))", 1),
        ("torch.ones(x.numel())", 1),
        ("torch.zeros(x.shape[0], 3)", 2),
        ("torch.zeros([n, m, k])", 3),
        ("torch.ones(x.shape)", None),  # a whole shape: any rank
        ("torch.ones(x.shape[1:])", None),
        ("torch.ones(size)", None),
        ("torch.ones(x.size())", None),
    ],
)
def test_a_factory_of_unknown_sizes_has_the_rank_its_arguments_give(expression: str, rank: int | None) -> None:
    """`torch.ones(x.shape[0])` is a vector however long it is (GPU102 reads a vector as a flag
    vector, not an image-sized canvas); one argument that may be a whole shape gives no rank."""
    made = evaluate(expression, x=GPU_TENSOR)
    assert made is not None and made.shape is None and made.ndim == rank


@pytest.mark.parametrize(
    ("expression", "reads_the_gpu"),
    [
        ("p in self.state", False),  # an optimizer's state: a dict keyed by parameter tensors
        ("p not in optimizer.state", False),
        ("p in {q: 1}", False),
        ("p in {q}", False),
        ("p in t", True),  # a tensor's `__contains__` compares every element
        ("p in [q, t]", True),  # a list compares its elements with `==`
    ],
)
def test_a_membership_test_reads_the_gpu_only_where_the_container_compares(expression: str, reads_the_gpu: bool) -> None:
    tested = evaluate(expression, p=GPU_TENSOR, q=GPU_TENSOR, t=GPU_TENSOR)
    assert (tested is not None and tested.on_gpu) is reads_the_gpu


def test_a_like_factory_is_made_where_its_source_is() -> None:
    """`torch.zeros_like(X)` follows `X`: on the GPU for a GPU `X`, on the host for a host one,
    and unknown for an `X` nothing places (a `.cuda()` of it may copy nothing at all)."""
    for source, device in ((GPU_TENSOR, Device.GPU), (HOST_TENSOR, Device.HOST)):
        made = evaluate("torch.zeros_like(x)", x=source)
        assert made is not None and made.is_array and made.device is device
    assert evaluate("torch.zeros_like(x)") is None
    made_here = evaluate("torch.zeros(3)")
    assert made_here is not None and made_here.device is Device.HOST


@pytest.mark.parametrize(
    ("call", "library"), [("wp.from_torch(t)", "warp"), ("wp.to_torch(a)", "torch")]
)
def test_warps_zero_copy_views_share_the_memory_of_what_they_are_handed(call: str, library: str) -> None:
    """`wp.from_torch(t)` / `wp.to_torch(a)` wrap the same memory: an array of the other library,
    on the device of the one handed in (the GPU for a GPU tensor, the host for a host one)."""
    for source, device in ((GPU_TENSOR, Device.GPU), (HOST_TENSOR, Device.HOST)):
        values = evaluator()
        warp_import = cst.parse_statement("import warp as wp").body[0]
        assert isinstance(warp_import, cst.Import)
        values.imports.add_import(warp_import)
        values.store("t", source)
        values.store("a", replace(source, library="warp"))
        viewed = values.evaluate(cst.parse_expression(call))
        assert viewed is not None and viewed.is_array and viewed.library == library and viewed.device is device


def test_a_number_as_the_empty_case_of_a_conditional_leaves_the_array() -> None:
    """`0 if count == 0 else total / count`: the array whenever it is not the default, and only
    the array can make a read wait; two arrays on different devices stay maybe-GPU."""
    assert evaluate("0 if n == 0 else t / n", t=GPU_TENSOR) == GPU_TENSOR
    assert evaluate("t / n if n else 0.0", t=GPU_TENSOR) == GPU_TENSOR
    assert evaluate("a if ok else b", a=GPU_TENSOR, b=number(1)) == GPU_TENSOR
    mixed = evaluate("a if flag else b", a=GPU_TENSOR, b=HOST_ARRAY)
    assert mixed is None or mixed.device is not Device.GPU


@pytest.mark.parametrize("test", ["torch.is_tensor(x)", "isinstance(x, torch.Tensor)"])
def test_the_side_a_tensor_test_leaves_holds_no_tensor(test: str) -> None:
    """`x.cpu().numpy() if torch.is_tensor(x) else x`: the other side runs only when `x` is no
    tensor, so the result is the host copy (an EMA metric's value, formatted every step)."""
    made = evaluate(f"x.cpu().numpy() if {test} else x", x=GPU_TENSOR)
    assert made is not None and made.device is Device.HOST


def test_a_helper_making_its_array_on_a_device_parameter_places_it_per_call() -> None:
    """pytorch3d's `is_known_frame(frame_type, device=None)`: a caller that leaves `device` out
    gets a host tensor, one that hands a GPU device gets a GPU tensor."""
    code = """
        import torch


        def is_known_frame(frame_type, device=None):
            return torch.tensor([ft.endswith("known") for ft in frame_type], dtype=torch.bool, device=device)
    """
    assert value_after(code, 'is_known_frame(["a"])').device is Device.HOST
    assert value_after(code, 'is_known_frame(["a"], "cpu")').device is Device.HOST
    assert value_after(code, 'is_known_frame(["a"], device=torch.device("cuda"))').device is Device.GPU


def test_a_device_parameter_without_a_host_default_keeps_the_helpers_own_placement() -> None:
    """`device="cuda"` by default: the call that leaves it out gets a GPU tensor."""
    code = """
        import torch


        def ones(n, device="cuda"):
            return torch.ones(n, device=device)
    """
    assert value_after(code, "ones(3)").device.on_gpu
