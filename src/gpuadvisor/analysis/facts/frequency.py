"""How often each function runs: once, per call, or on every step of a hot loop.

Read by the rules whose cost is per run of a function (a sync in a helper, a host fill in a
`forward`, a per-parameter update): computed once after the walk, from this file's call sites
and from the calls other files of the project make (`ModuleFacts.external_calls`).
"""

from __future__ import annotations

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.imports import dotted_name, referenced_names
from gpuadvisor.analysis.facts.module_facts import Context, Event, EventKind, ExternalCall, FunctionFacts, LoopFacts, ModuleFacts, Runs, StepCaller, while_bound
from gpuadvisor.analysis.facts.traverse import child_nodes
from gpuadvisor.analysis.facts.training import steps_an_optimizer
from gpuadvisor.analysis.facts.values import Kind


def _first_iterations(node: cst.CSTNode) -> bool:
    """`count < 10`: a counter below a small literal bound, true on the first few iterations only."""
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
        return False
    (comparison,) = node.comparisons
    bound = comparison.comparator
    return (
        isinstance(comparison.operator, (cst.LessThan, cst.LessThanEqual))
        and isinstance(node.left, cst.Name)
        and isinstance(bound, cst.Integer)
        and int(bound.value.replace("_", ""), 0) <= kb.FIRST_ITERATIONS
    )


def _step_in_listed_steps(node: cst.CSTNode, loop: LoopFacts) -> bool:
    """`iteration in save_iters`: the loop's step counter (an index target, or a name the loop
    adds 1 to) looked up in a collection the loop does not change: true on the listed steps only.
    (`key in wanted` over the keys of a dict filters items; it samples nothing.)"""
    if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, cst.In):
        return False
    step = node.left
    listed = node.comparisons[0].comparator
    if not isinstance(step, cst.Name) or referenced_names(listed) & loop.varying:
        return False
    return _step_counter(step.value, loop)


def _step_counter(name: str, loop: LoopFacts) -> bool:
    """The loop's step counter: an index target (`range`, `enumerate`) or a name it adds 1 to."""
    if name in loop.targets:
        return loop.counts_indices
    return name in loop.counters


def is_sampling_guard(test: cst.BaseExpression, loop: LoopFacts, first_only: bool = False) -> bool:
    """`if step % N == 0`, `if i == last`, `if n < 10`: the body runs on a few iterations only
    (`first_only`: only the last kind, true on the first iterations and never again). The test
    must read what the loop changes (`if not overflow and rank == 0:` runs on every step)."""
    if not referenced_names(test) & loop.varying or test in loop.every_iteration_tests:
        return False
    if _negates_a_test(test):
        return False  # `not (step % 100 == 0)`, an `else` of such a test: most iterations
    remainders = _nonzero_remainders(test)
    stack: list[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        modulo = isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo) and node not in remainders
        equal = isinstance(node, cst.Comparison) and any(isinstance(c.operator, cst.Equal) for c in node.comparisons) and _tests_a_counter(node, loop)
        listed = _step_in_listed_steps(node, loop)
        helper = node in loop.sampling_tests  # `every_n_steps(state, freq)`, `now - last_log > period`
        sampled = _first_iterations(node) or (not first_only and (modulo or equal or listed or helper))
        if sampled and referenced_names(node) & loop.varying:
            return True
        stack.extend(child_nodes(node))
    return False


def _tests_a_counter(comparison: cst.Comparison, loop: LoopFacts) -> bool:
    """`i == last`, `step + 1 == total`, `self.step == 0`: a side is a name the loop changes (a
    counter, a target), bare or give or take a literal. A test of the data an index picks
    (`best_n_mask[ti] == 1`, `pred[i] == label`) holds on any number of iterations."""
    for side in (comparison.left, *(target.comparator for target in comparison.comparisons)):
        while isinstance(side, cst.BinaryOperation) and isinstance(side.operator, (cst.Add, cst.Subtract)) and isinstance(side.right, cst.Integer):
            side = side.left
        name = dotted_name(side) if isinstance(side, (cst.Name, cst.Attribute)) else None
        if name is not None and name in loop.varying:
            return True
    return False


def _nonzero_remainders(test: cst.BaseExpression) -> set[cst.BaseExpression]:
    """Remainders the test asks to be non-zero, true on all but one iteration in N: `if step %
    50:` (the inverted logging guard), `step % 50 != 0`, either side of an `and`/`or`."""
    found: set[cst.BaseExpression] = set()
    stack: list[cst.BaseExpression] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BooleanOperation):
            stack.extend((node.left, node.right))
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            found.add(node)
        elif isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, cst.NotEqual):
            sides = (node.left, node.comparisons[0].comparator)
            found.update(side for side in sides if isinstance(side, cst.BinaryOperation) and isinstance(side.operator, cst.Modulo))
    return found


def _negates_a_test(test: cst.BaseExpression) -> bool:
    """`not (step % 100 == 0)` (also the guard of the `else` branch of such a test), but not the
    sampling idiom `not step % 100`, true when the remainder is zero."""
    if not (isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)):
        return False
    inner = test.expression
    return not (isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Modulo))


def sampling_period(test: cst.BaseExpression, facts: ModuleFacts) -> float | None:
    """N in a guard `step % N == 0` when N is a known number: a literal, or the default of a
    config class field that no code of the file assigns (`args.target_network_frequency`)."""
    stack: list[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            value = facts.value(node.right)
            if value is not None and value.kind is Kind.NUMBER:
                return value.number
            return _config_default(node.right, facts)
        stack.extend(child_nodes(node))
    return None


def _config_default(expr: cst.BaseExpression, facts: ModuleFacts) -> float | None:
    if not isinstance(expr, cst.Attribute):
        return None
    owner = facts.value(expr.value)
    if owner is None or owner.kind is not Kind.INSTANCE:
        return None
    default = facts.class_defaults.get(owner.class_name or "", {}).get(expr.attr.value)
    if default is None or assigned_in_file(expr, facts):
        return None
    return default.number


def assigned_in_file(expr: cst.Attribute, facts: ModuleFacts) -> bool:
    """`args.x = ...` or `args.x += ...` anywhere in the file."""
    wanted = dotted_name(expr)
    if wanted is None:
        return True  # `cfg()["x"].y`: cannot tell, so not a default
    stack: list[cst.CSTNode] = [facts.module]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.AssignTarget, cst.AugAssign)) and dotted_name(node.target) == wanted:
            return True
        stack.extend(child_nodes(node))
    return False


def is_sampled(ctx: Context) -> bool:
    """Code that runs on a few iterations only: under a sampling guard in its loop, or in an inner
    loop that an enclosing loop enters on its first iterations only (`if n < 10: for e in
    endings: ...`). An inner loop entered every N steps (validation) still repeats each time,
    unless it is a handful of iterations itself (`for i in range(4)` over generated samples every
    250 steps): then what it does runs a few times every N steps."""
    loop = ctx.loop
    if loop is None:
        return False
    if any(is_sampling_guard(test, loop) for test in ctx.guards):
        return True
    short = True  # every loop from the code out to `outer` runs a handful of times
    while loop.parent is not None:
        outer = loop.parent
        short = short and loop.few_iterations
        if any(is_sampling_guard(test, outer, first_only=not short) for test in loop.entry_guards):
            return True
        loop = outer
    return False


def is_per_step(ctx: Context, facts: ModuleFacts) -> bool:
    """Code on every step of a hot loop: not sampled (`if step % 100 == 0`), not once per epoch
    of an epoch loop, not in a test, not compiled (where a per-step cost is the compiler's), not
    in the constructor of a module or of a class of unknown bases (`for i in range(n_layers):
    self.layers.append(Block(...))` builds the model once; a plain class's may run a job)."""
    loop = ctx.loop
    if loop is None or loop.has_inner_loop or not ctx.repeated or ctx.compiled or ctx.opt_in or facts.in_test_code(ctx):
        return False
    owner, _, method = ctx.function.name.rpartition(".")
    if method == "__init__" and facts.class_kinds.get(owner) is not False:
        return False  # a module's, or one of a class whose bases are not known (a project's `SequenceModule`)
    if is_sampled(ctx):
        return False
    return not counts_epochs(loop)


def counts_epochs(loop: LoopFacts) -> bool:
    """`for epoch in ...`, `for run in ...`, `for _ in range(self.max_epochs)`: one iteration is a
    whole pass over the data (or a whole run), so what it does once costs nothing next to it.
    A loop over a data loader steps once per batch whatever its counter is called
    (`for iter_epoch, (inp, target) in enumerate(loader)`)."""
    iterable = loop.iterable
    if iterable is not None and names_data(iterable):
        return False
    if any(word in target.lower() for target in loop.targets for word in kb.EPOCH_WORDS):
        return True
    if not isinstance(iterable, cst.Call) or dotted_name(iterable.func) != "range" or not iterable.args:
        return False
    bound = dotted_name(iterable.args[-1].value)
    return bound is not None and "epoch" in bound.lower()


def names_data(iterable: cst.BaseExpression) -> bool:
    """`loader`, `enumerate(train_loader)`, `tqdm(self.dataset)`: the iterable reads a data source."""
    return any(word in name.lower() for name in referenced_names(iterable) for word in kb.DATA_LOOP_WORDS)


def is_setting_switch(test: cst.BaseExpression) -> bool:
    """`if self.automatic_entropy_tuning:`, `if not args.fp16:`: a flag of the object or of the
    run's settings, fixed while it trains, so one branch or the other runs on every call (a
    branch a caller must turn on is `Context.opt_in`); so is a setting compared with a named
    choice (`if self.args.loss_type == "dft":`) and a key looked up in the settings or the batch
    (`if "attention_mask" in inputs:`: a collator hands the same keys on every step), and any
    `and`/`or` of them. Other comparisons and a parameter of the call (`if first:`, `if cache is
    None:`, `if self.step > 100:`) can change from call to call."""
    flag = _unnegated(test)
    if isinstance(flag, cst.BooleanOperation):
        return is_setting_switch(flag.left) and is_setting_switch(flag.right)
    if isinstance(flag, cst.Comparison) and len(flag.comparisons) == 1:
        return _setting_compared(flag.left, flag.comparisons[0])
    return _is_setting(flag)


def _is_setting(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Attribute) and dotted_name(expr) is not None


def _setting_compared(left: cst.BaseExpression, comparison: cst.ComparisonTarget) -> bool:
    """`self.args.loss_type == "chunked_nll"`, `cfg.mode in ("a", "b")`, `"labels" in batch`."""
    right, operator = comparison.comparator, comparison.operator
    if isinstance(operator, (cst.Equal, cst.NotEqual)):
        return (_is_setting(left) and isinstance(right, cst.SimpleString)) or (_is_setting(right) and isinstance(left, cst.SimpleString))
    if not isinstance(operator, (cst.In, cst.NotIn)):
        return False
    if isinstance(left, cst.SimpleString):
        return dotted_name(right) is not None
    choices = right.elements if isinstance(right, (cst.Tuple, cst.List, cst.Set)) else None
    return _is_setting(left) and bool(choices) and all(isinstance(choice.value, cst.SimpleString) for choice in choices or ())


def _unnegated(test: cst.BaseExpression) -> cst.BaseExpression:
    """The flag under any `not`s (`not self.training` -> `self.training`)."""
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    return test


def site_runs(ctx: Context) -> Runs:
    """How often code at `ctx` runs: every iteration of a loop; per call where a sampling guard
    thins the loop out (`if step % 500 == 0: sample_images()` runs now and then, not per step);
    else as often as its function; once at most on a path a caller has to turn on (`if
    self.stratified:` where the code sets it False: see `facts.settings`)."""
    if ctx.opt_in:
        return Runs.ONCE
    if not ctx.repeated or (ctx.function.runs is Runs.ONCE and _builds_a_model(ctx.function)):
        return ctx.function.runs  # a constructor's loop over layers, built once: set-up
    if ctx.loop is not None and any(_one_iteration(test, ctx.loop) for test in ctx.guards):
        # `if epoch == args.start_epoch: sanity_check(...)`: once per pass of the loop
        return Runs.REPEATED if ctx.loop.parent is not None else ctx.function.runs
    if is_sampled(ctx):
        return Runs.SAMPLED
    return Runs.REPEATED


def _builds_a_model(function: FunctionFacts) -> bool:
    """A class's constructor or weight initialiser (`initialize_weights`): its loops walk the
    layers it builds, once per object."""
    owner, _, method = function.name.rpartition(".")
    return bool(owner) and (method == "__init__" or _initialises_weights(method))


def _initialises_weights(method: str) -> bool:
    """`reset_parameters`, `_init_weights`, ... (see `knowledge.WEIGHT_INIT_METHODS`)."""
    return method.lstrip("_") in kb.WEIGHT_INIT_METHODS


def _one_iteration(test: cst.BaseExpression, loop: LoopFacts) -> bool:
    """`epoch == start_epoch`, `step == 0`: the loop's own counter against a value the loop does
    not change holds on one iteration of each pass (a test of computed values, `pred == label`,
    may hold on any number)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = (test.left, test.comparisons[0].comparator)
    for counter, other in (sides, sides[::-1]):
        if isinstance(counter, cst.Name) and _step_counter(counter.value, loop) and not referenced_names(other) & loop.varying:
            return True
    return False


def carries_step(ctx: Context, facts: ModuleFacts) -> bool:
    """A call outside any loop that runs whenever its function runs: unconditional, under a
    module's mode flag (`if self.training:` holds on every training step, its `else` on every
    evaluation step), or under a setting that is on unless a caller turns it off (`if
    self.validate_args:` with `validate_args=True`). A call under `if verbose:` may never run."""
    return ctx.loop is None and all(_mode_flag(test) or test in facts.on_by_default_tests for test in ctx.guards)


def _mode_flag(test: cst.BaseExpression) -> bool:
    """`self.training` or `not self.training`."""
    return dotted_name(_unnegated(test)) in kb.MODE_FLAGS


def runs_per_step(ctx: Context, facts: ModuleFacts) -> bool:
    """Code that runs on every step of a hot loop, directly or through the function it sits in
    (read once `resolve_frequencies` has run)."""
    return is_per_step(ctx, facts) or (carries_step(ctx, facts) and ctx.function.stepped_by is not None)


def function_label(function: FunctionFacts) -> str:
    """`main()`, or "the module" for module-level code."""
    return "the module" if function.node is None else f"`{function.name.rsplit('.', 1)[-1]}()`"


def _may_be_built(owner: str, facts: ModuleFacts, sites: dict[int, list[Context]]) -> bool:
    """Some code may make an instance of the class: it has no constructor of its own to look for,
    or this file or (where the whole project was read) another file calls it. An optimizer class
    nothing builds (kept for a commented-out option) has no step that runs."""
    constructor = next((scope for scope in facts.scopes if scope.name == f"{owner}.__init__"), None)
    if constructor is None or facts.project_callers is None or id(constructor) in sites or _handed_here(owner, facts):
        return True
    return bool({owner, constructor.name} & facts.project_callers)  # `LARS(...)` or `Wrapper(LARS, ...)`, as resolved there


def _handed_here(name: str, facts: ModuleFacts) -> bool:
    """This file passes the class to a call (`PyroOptim(ClippedAdam, args)`): the callee builds it."""
    return any(isinstance(handed, cst.Name) and handed.value == name for handed in facts.handed_names())


def resolve_frequencies(facts: ModuleFacts) -> None:
    """Set `runs` and `stepped_by` on every function of the file: a least fixed point over the
    call graph (each pass can only raise a function's frequency), so recursion terminates."""
    sites: dict[int, list[Context]] = {}
    for scope in facts.scopes:
        for event in scope.events:
            for callee in facts.functions_called(event):
                if callee is not scope:
                    sites.setdefault(id(callee), []).append(event.ctx)
    external: dict[str, list[ExternalCall]] = {}
    for call in facts.external_calls:
        external.setdefault(call.key, []).append(call)
    order = list(Runs)  # most frequent first
    for function in facts.scopes:
        function.called_in_file = id(function) in sites
        function.called_from_project = function.name in external
        if _builds_a_plain_object(function, facts):
            function.built_at = list(sites.get(id(function), []))
    _mark_opted_into(facts, sites)
    for function in facts.scopes:
        called = function.called_in_file or function.called_from_project
        owner, _, method = function.name.rpartition(".")
        if function.node is None or (method == "__init__" and not (called and _builds_a_plain_object(function, facts))):
            function.runs = Runs.ONCE  # a module's constructor builds the model once; a plain one as often as it is called
        elif method == "run" and owner in facts.worker_classes:
            function.runs = Runs.ONCE  # (a thread's or a process's `run`: once, when it is started)
        elif function.is_test:
            function.runs = Runs.ONCE  # pytest runs a test once: what it calls is not called per step
        elif called:
            function.runs = min((call.runs for call in external.get(function.name, [])), key=order.index, default=Runs.ONCE)
            if function.runs in (Runs.ONCE, Runs.SAMPLED) and function.name.rsplit(".", 1)[-1] in kb.PER_CALL_METHODS:
                function.runs = Runs.PER_CALL  # a module's forward: callers we cannot see run it too
        elif _initialises_weights(method):
            function.runs = Runs.ONCE  # `model.initialize_weights()`, called by whoever builds the model: set-up
        else:
            function.runs = Runs.ONCE if function.has_loop and "." not in function.name else Runs.PER_CALL
        direct = next((ctx for ctx in sites.get(id(function), []) if is_per_step(ctx, facts)), None)
        if owner in facts.lightning_classes and method in kb.LIGHTNING_BATCH_HOOKS:
            function.runs = Runs.REPEATED
            function.stepped_by = StepCaller("the Lightning trainer")  # once per batch of its loops
        elif owner in facts.optimizer_classes and method == "step":
            # `optimizer.step()`, once per training step; an optimizer no code builds is never stepped
            built = _may_be_built(owner, facts, sites)
            function.runs = Runs.REPEATED if built else Runs.ONCE
            function.stepped_by = StepCaller("the training loop") if built else None
        elif owner in facts.autograd_functions and method in kb.AUTOGRAD_PASS_METHODS:
            function.runs = Runs.REPEATED
            function.stepped_by = StepCaller("the training loop")  # autograd, on every pass of the model
        elif owner in facts.framework_classes and method in facts.framework_classes[owner].methods:
            function.runs = Runs.REPEATED
            function.stepped_by = StepCaller(facts.framework_classes[owner].trainer)  # once per step of its loop
        elif direct is not None:
            function.stepped_by = StepCaller(function_label(direct.function))
        else:
            # a caller handing GPU values is the one that pays (a dataset may call it on the host)
            per_step = sorted((call for call in external.get(function.name, []) if call.per_step), key=lambda call: not call.hands_gpu_values)
            caller = per_step[0].caller if per_step else None
            function.stepped_by = StepCaller(caller) if caller is not None else None
    changed = True
    while changed:
        changed = False
        for function in facts.scopes:
            contexts = sites.get(id(function), [])
            if function.node is None or not contexts:
                continue
            if function.name.rsplit(".", 1)[-1] != "__init__" or _builds_a_plain_object(function, facts):
                found = [site_runs(ctx) for ctx in contexts] + [function.runs]
                most = min(found, key=order.index)
                if most is not function.runs:
                    function.runs, changed = most, True
            if function.stepped_by is None:
                for ctx in contexts:
                    outer = ctx.function.stepped_by if carries_step(ctx, facts) else None
                    if outer is not None:
                        function.stepped_by = StepCaller(outer.where, outer.through or function_label(ctx.function))
                        changed = True
                        break


def _builds_a_plain_object(function: FunctionFacts, facts: ModuleFacts) -> bool:
    """The constructor of a plain class (`class ProbMask():`, not a module, not one of unknown
    bases): it runs each time the object is built, a causal mask made in every attention call
    as often as that call. A module's constructor builds a model, once."""
    owner, _, method = function.name.rpartition(".")
    return method == "__init__" and facts.class_kinds.get(owner) is False


def _mark_opted_into(facts: ModuleFacts, sites: dict[int, list[Context]]) -> None:
    """Functions every caller reaches only on an opted-into path (`if use_cpu:` around the one
    call), through callers of the same kind too; none another file calls, none the module runs."""
    changed = True
    while changed:
        changed = False
        for function in facts.scopes:
            contexts = sites.get(id(function), [])
            if function.opted_into or function.node is None or function.called_from_project or not contexts:
                continue
            if all(ctx.opt_in for ctx in contexts):
                function.opted_into = changed = True


def loops_over_gpu_work(function: FunctionFacts) -> bool:
    """The function calls a model (or a helper doing GPU work) in a loop on every call: a
    sampler's denoising steps, a generation loop. A single wait or host fill outside that loop is a
    small share of each call. Loops over parameters or of array methods are tiny kernels, and a
    loop over a container's submodules is one model pass (a decoder's layers), not this,
    and a function that trains (steps an optimizer) runs a training update: a wait there stalls
    every update."""
    runs_models = any(
        _runs_a_model(event)
        and event.ctx.function is function
        and event.ctx.repeated
        and event.ctx.loop is not None
        and event.ctx.loop.parameters_of is None
        and not event.ctx.loop.over_submodules
        for event in function.events
    )
    return runs_models and function.node is not None and not steps_an_optimizer(function.node)  # the walk last: it is the costly test


def mark_iterating_functions(facts: ModuleFacts) -> None:
    """Set `FunctionFacts.runs_iterations`: each call runs a loop of iterations that call a model
    (an attack's `for i in range(self.n_iter)`, a sampler's steps), itself or through a function
    of this file it calls (`perturb()` running `attack_single_run()` once per restart), so what the
    call does once, or what a loop around such calls does once per pass, is a sliver of those
    iterations. A function that steps an optimizer is a training update, and a module's `forward`
    is a model pass (a decoder's loop over 26 characters runs on every training step, as does what
    it fills), not this. A least fixed point over the calls, so recursion terminates."""
    iterating_loops = {id(loop.function) for loop in facts.loops if _iterates_gpu_work(loop, facts)}
    if not iterating_loops:
        return  # most files: no such loop, nothing to follow through the calls
    candidates = [f for f in facts.scopes if f.node is not None and f.name.rsplit(".", 1)[-1] not in kb.PER_CALL_METHODS]
    for function in candidates:
        node = function.node
        function.runs_iterations = node is not None and id(function) in iterating_loops and not steps_an_optimizer(node)
    callees = {id(f): [c for event in f.events for c in facts.functions_called(event) if c is not f] for f in candidates}
    changed = True
    while changed:
        changed = False
        for function in candidates:
            if not function.runs_iterations and any(callee.runs_iterations for callee in callees[id(function)]):
                function.runs_iterations = changed = True


def _iterates_gpu_work(loop: LoopFacts, facts: ModuleFacts) -> bool:
    """`for i in range(self.n_iter):` or `while it < self.n_iter:` calling a model, more than a
    handful of times (a bisection's tensor ops are not a model)."""
    bound = _iteration_bound(loop, facts)
    if loop.few_iterations or bound is None or not any(word in bound.lower() for word in kb.ITERATION_WORDS):
        return False
    return any(_runs_a_model(event) and loop in event.ctx.loops() for event in loop.function.events)


def _runs_a_model(event: Event) -> bool:
    """GPU work of a call that is no library op or array method: a model or a GPU helper (not an
    operator, `mask & (ids != i)`, nor `x.sum()`)."""
    return event.kind is EventKind.GPU_WORK and isinstance(event.node, cst.Call) and not event.key.startswith(".") and kb.library_of(event.key) is None


def _iteration_bound(loop: LoopFacts, facts: ModuleFacts) -> str | None:
    """The name that bounds a counted loop: `range(..., bound)`, or `while i < bound:`."""
    if isinstance(loop.node, cst.While):
        bound = while_bound(loop.node.test)
        return dotted_name(bound) if bound is not None else None
    iterable = loop.iterable
    if not isinstance(iterable, cst.Call) or facts.imports.qualified_name(iterable.func) != "builtins.range" or not iterable.args:
        return None
    return dotted_name(iterable.args[-1].value)


def forward_of_gpu_module(function: FunctionFacts, facts: ModuleFacts) -> str | None:
    """The `forward` of a module class moved to the GPU (here, by its owner, or in another file)
    that runs `function` on every pass of the model, whoever calls it: the function itself, or a
    method of the class it calls through `self` (`self._dequeue_and_enqueue(k)`, also through
    other such methods) on every call, not under a test a caller or an iteration decides.
    Each class's reach is walked once per file (`ModuleFacts.forward_reach`), whichever rule asks."""
    owner = function.name.rpartition(".")[0]
    forward = facts.functions.get(f"{owner}.forward") if owner in facts.gpu_classes else None
    if forward is None:
        return None
    if owner not in facts.forward_reach:
        facts.forward_reach[owner] = _reached_from_forward(forward, owner, facts)
    return forward.name if function.name in facts.forward_reach[owner] else None


def _reached_from_forward(forward: FunctionFacts, owner: str, facts: ModuleFacts) -> set[str]:
    """`forward` and the methods of `owner` it runs on every call, through `self`."""
    reached, pending = {forward.name}, [forward]
    while pending:
        caller = pending.pop()
        for event in caller.events:
            callee = facts.function_called(event)
            every_call = not event.ctx.opt_in and all(is_setting_switch(test) for test in event.ctx.guards)
            if callee is not None and callee.name.startswith(f"{owner}.") and callee.name not in reached and every_call:
                reached.add(callee.name)
                pending.append(callee)
    return reached
