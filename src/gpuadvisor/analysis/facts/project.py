"""Facts that cross files: what one module of the checked project tells the others.

A file's walk sees its own functions; a training loop in `train.py` that calls
`discriminator_loss()` from `models.py` with GPU tensors, or a `MoCo` module built in
`builder.py` and moved to the GPU by `main_moco.py`, needs both files. After every file is
walked once, each one's `ModuleExports` (the calls it makes into project code, the classes it
defines, the classes it moves to the GPU, what its functions return) are resolved against the
project's files into one `ProjectContext` per file, and the files whose context is not empty
are walked again with it, until nothing changes (see `interfaces/runner.py`).

Everything here is plain data (JSON-able, picklable): it travels between worker processes and
sits in the per-file cache next to the findings.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import libcst as cst

from gpuadvisor._safe_io import read_regular
from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.imports import may_be_project_name
from gpuadvisor.analysis.facts.interfaces import DISPATCHED_PREFIX, dispatched_key, interface_implementations
from gpuadvisor.analysis.facts.frequency import function_label, runs_per_step, site_runs
from gpuadvisor.analysis.facts.module_facts import CallFact, ExternalCall, ModuleFacts, Runs
from gpuadvisor.analysis.facts.values import NEXT_METHOD, Device, Kind, Passthrough, Value, next_method



@dataclass(frozen=True)
class OutgoingCall:
    """A call this file makes to code that may live in another file of the project."""

    target: str  # the qualified name as imported here: "models.discriminator_loss", ".builder.MoCo.forward"
    caller: str  # "`train()`", "the module"
    runs: Runs
    per_step: bool
    positional: tuple[Value | None, ...]
    keywords: tuple[tuple[str, Value | None], ...]
    has_star: bool
    #: Made by a test, whose inputs are its own choice (CUDA tensors to compare two versions):
    #: it tells what a function is handed only where the project itself never calls it.
    from_test: bool = False


@dataclass(frozen=True)
class ModuleExports:
    """What one file tells the rest of the project (computed from its `ModuleFacts`)."""

    classes: tuple[tuple[str, bool], ...] = ()  # (class name, derives from torch.nn.Module)
    results: tuple[tuple[str, Value], ...] = ()  # function key -> the device or GPU array it returns
    calls: tuple[OutgoingCall, ...] = ()
    gpu_instances: tuple[tuple[str, Value], ...] = ()  # qualified class name (as imported) -> moved value
    functions: tuple[str, ...] = ()  # the keys of this file's functions ("train", "EMA.update")
    passthrough: tuple[tuple[str, Passthrough], ...] = ()  # function key -> the parameters it returns
    #: class -> what it sets on `self` that another file's subclass can use (devices, GPU values)
    attributes: tuple[tuple[str, tuple[tuple[str, Value], ...]], ...] = ()
    bases: tuple[tuple[str, tuple[str, ...]], ...] = ()  # class -> its bases' qualified names
    #: `self.train()` in a method of class C: ((C, "train"), the call), so that a subclass in
    #: another file that overrides `train` learns who runs it and how often.
    self_calls: tuple[tuple[tuple[str, str], OutgoingCall], ...] = ()
    inherited_methods: tuple[tuple[str, str], ...] = ()  # "Sub.method" -> "Base.method" (same file)
    #: function key -> (position, name) of the parameter it returns copied to the GPU
    uploads: tuple[tuple[str, tuple[int, str]], ...] = ()
    #: The file turns off the checks of `torch.distributions` for the whole program (see
    #: `turns_off_distribution_checks`), and it builds distributions that check their parameters
    #: while they are on: the runner learns the first from the first pass and re-walks only files
    #: with the second, rather than reading every file before the first pass.
    turns_off_distribution_checks: bool = False
    builds_checked_distributions: bool = False
    #: The keys of this file's functions that read a host clock (`Timer.toc`).
    clock_readers: tuple[str, ...] = ()
    #: The keys of this file's functions that return a compiler's result (`torch.compile(...)`).
    compilers: tuple[str, ...] = ()
    #: Project names (qualified as imported) this file hands to a call without calling them:
    #: `PyroOptim(pt_ClippedAdam, args)` gives the factory the class to build.
    handed: tuple[str, ...] = ()
    #: What the file's top level binds to GPU arrays and devices (`ModuleFacts.module_values`).
    values: tuple[tuple[str, Value], ...] = ()
    #: The file's `from m import a as b` names: (local name, qualified name as written).
    from_imports: tuple[tuple[str, str], ...] = ()
    #: class -> its bases defined in this file (`BC_Gaussian(BC)`), beside `bases`' imported ones
    local_bases: tuple[tuple[str, tuple[str, ...]], ...] = ()


@dataclass(frozen=True)
class ProjectContext:
    """What the rest of the project tells one file before its walk."""

    external_calls: tuple[ExternalCall, ...] = ()
    gpu_classes: tuple[tuple[str, Value], ...] = ()  # this file's classes moved to the GPU elsewhere
    imported_classes: tuple[tuple[str, bool], ...] = ()  # qualified name (as imported here) -> is a module
    imported_results: tuple[tuple[str, Value], ...] = ()  # qualified name (as imported here) -> result
    imported_passthrough: tuple[tuple[str, Passthrough], ...] = ()  # qualified name (as imported here)
    #: this file's classes -> the `self.x` values their base classes in other files set
    inherited_attributes: tuple[tuple[str, tuple[tuple[str, Value], ...]], ...] = ()
    #: Some file of the project names CUDA: a model it trains is meant for the GPU (see
    #: `facts.training`), even in files that only receive the model.
    gpu_project: bool = False
    #: Custom autograd operations of other files this file applies (qualified names as imported
    #: here): `AllReduce.apply(loss)` hands back a tensor where `loss` is.
    imported_autograd_functions: tuple[str, ...] = ()
    #: This file's functions other non-test files call, constructors as `Class.__init__`: all of
    #: them, the whole project having been read; None where the project did not say (a file
    #: checked alone, or one without optimizer classes, the only readers).
    project_callers: tuple[str, ...] | None = None
    #: Some file of the project turns off the parameter checks of `torch.distributions` (see
    #: `turns_off_distribution_checks`): building a distribution then reads nothing back.
    distribution_checks_off: bool = False
    #: Helpers of other files that return an argument copied to the GPU, by qualified name as
    #: imported here -> (position, name) of that argument (see `ModuleFacts.function_uploads`).
    imported_uploads: tuple[tuple[str, tuple[int, str]], ...] = ()
    #: Functions of other files that read a host clock, by the call target this file names
    #: (`pycls.core.timer.Timer.toc` for `timer.toc()`): a wait before one is how a step is timed.
    imported_clock_readers: tuple[str, ...] = ()
    #: Base classes of other files that derive from a framework class, by qualified name as
    #: imported here -> that framework class (a key of `knowledge.FRAMEWORK_STEPS`): trl's
    #: `SFTTrainer(_BaseTrainer)` is a Hugging Face `Trainer` through `base_trainer.py`.
    imported_frameworks: tuple[tuple[str, str], ...] = ()
    #: Wrappers of a compiler in other files (`nerfstudio.utils.misc.torch_compile`), by the
    #: call target this file names: a function decorated with one is compiled.
    imported_compilers: tuple[str, ...] = ()
    #: Top-level GPU arrays and devices of other files this file imports by name (`from utils
    #: import std, device`): local name -> the value that file binds.
    imported_values: tuple[tuple[str, Value], ...] = ()

    def __bool__(self) -> bool:
        return bool(
            self.gpu_project
            or self.imported_values
            or self.imported_frameworks
            or self.imported_compilers
            or self.imported_clock_readers
            or self.distribution_checks_off
            or self.imported_autograd_functions
            or self.external_calls
            or self.gpu_classes
            or self.imported_classes
            or self.imported_results
            or self.imported_passthrough
            or self.imported_uploads
            or self.inherited_attributes
        )


# -- from one file's facts ----------------------------------------------------------------------
def _portable(value: Value | None) -> Value | None:
    """What a value tells another file: where it lives, not its shape here."""
    if value is None or not (value.on_gpu or value.kind in (Kind.ARRAY, Kind.MODULE, Kind.DEVICE)):
        return None
    return replace(value, shape=None, number=None)


def module_exports(facts: ModuleFacts) -> ModuleExports:
    """The exports of one walked file."""
    calls = []
    self_calls = []
    for call in facts.calls:
        func = call.node.func
        owner = call.ctx.function.name.rsplit(".", 1)[0] if "." in call.ctx.function.name else None
        if owner is not None and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            self_calls.append(((owner, func.attr.value), _outgoing(call, f"{owner}.{func.attr.value}", facts)))
        target = call_target(call, facts)
        dispatched = _dispatched_call(call, target, facts)
        if dispatched is not None:
            calls.append(dispatched)
            continue
        fetched = next_method(target, call.args)
        if fetched is not None and "." in fetched.removesuffix(f".{NEXT_METHOD}"):
            # `next(fetcher)` of another file's class (a dotted name) runs its `__next__`, handed nothing but the object
            calls.append(replace(_outgoing(call, fetched, facts), positional=()))
            continue
        if not may_be_project_name(target):
            continue
        assert target is not None
        calls.append(_outgoing(call, target, facts))
    gpu_instances = tuple(sorted((name, value) for name, value in facts.gpu_classes.items() if "." in name))
    return ModuleExports(
        tuple(sorted(facts.class_kinds.items())),
        tuple(sorted((key, value) for key, value in facts.function_results.items())),
        tuple(calls),
        gpu_instances,
        tuple(sorted(facts.functions)),
        tuple(sorted(facts.function_passthrough.items(), key=lambda item: item[0])),
        tuple(
            (name, portable)
            for name, attributes in sorted(facts.class_attributes.items())
            if (portable := tuple(sorted((key, value) for key, raw in attributes.items() if (value := _portable(raw)) is not None)))
        ),
        tuple(sorted((name, bases) for name, bases in facts.class_bases.items() if bases)),
        tuple(self_calls),
        tuple(sorted(facts.inherited_methods.items())),
        tuple(sorted(facts.function_uploads.items())),
        builds_checked_distributions=facts.builds_checked_distributions,
        clock_readers=tuple(sorted(name for name, function in facts.functions.items() if function.reads_clock_when_called)),
        compilers=tuple(sorted(name for name, function in facts.functions.items() if function.returns_compiled)),
        handed=_handed_project_names(facts),
        # a top-level constant has one shape wherever it is imported (`std` of three channels)
        values=tuple(sorted((name, replace(raw, number=None)) for name, raw in facts.module_values.items())),
        from_imports=tuple(sorted(facts.imports.from_imports.items())),
        local_bases=tuple(sorted((name, bases) for name, bases in facts.local_bases.items() if bases)),
    )


def _handed_project_names(facts: ModuleFacts) -> tuple[str, ...]:
    """Names of other files' code passed as arguments (`PyroOptim(ClippedAdam, args)`,
    `partial(Trainer, ...)`): whoever receives them may call them."""
    qualified = (facts.imports.qualified_name(handed) for handed in facts.handed_names())
    return tuple(sorted({name for name in qualified if name is not None and "." in name and may_be_project_name(name)}))


def call_target(call: CallFact, facts: ModuleFacts) -> str | None:
    """The function a call runs, as this file names it: a qualified name, or for a method of an
    object of another file's class, that class's qualified name and the method
    (`pycls.core.timer.Timer.toc` for `timer.toc()`, `models.Head.forward` for `self.head(x)`)."""
    target = call.qualname
    callee = facts.value(call.node.func) if target is None else None
    if callee is not None and callee.kind is Kind.MODULE and callee.class_name and "." in callee.class_name:
        return f"{callee.class_name}.forward"  # `self.head(x)`, `model(x)`: a module of another file
    if target is None and call.method is not None and call.receiver is not None:
        owner = call.receiver.class_name
        target = f"{owner}.{call.method}" if owner and "." in owner else None
    if target is None and call.method is None and callee is not None:
        owner = callee.class_name
        if owner and "." in owner:
            target = f"{owner}.__call__"
    return target


def _dispatched_call(call: CallFact, target: str | None, facts: ModuleFacts) -> OutgoingCall | None:
    """`model.train_on_batch(batch)` in a loop, on an object of no class we know: the call as
    the project's classes that declare `train_on_batch` as one interface receive it (resolved
    in `project_contexts`); a one-off call of that kind tells them nothing."""
    if target is not None or call.method is None or call.node not in facts.dispatched_calls:
        return None
    outgoing = _outgoing(call, dispatched_key(call.method), facts)
    return outgoing if _informative(outgoing) else None


def _outgoing(call: CallFact, target: str, facts: ModuleFacts) -> OutgoingCall:
    ctx = call.ctx
    keywords = tuple((arg.keyword.value, _portable(facts.value(arg.value))) for arg in call.node.args if arg.keyword is not None)
    return OutgoingCall(
        target,
        function_label(ctx.function),
        site_runs(ctx),
        runs_per_step(ctx, facts),
        tuple(_portable(value) for value in call.args),
        keywords,
        any(arg.star for arg in call.node.args),
        facts.in_test_code(ctx),
    )


# -- resolving names to files ------------------------------------------------------------------
class ProjectIndex:
    """The checked files by module name: `a/b/c.py` under packages `a` and `b` is `a.b.c`,
    a script's sibling `utils.py` is `utils` (the script's folder is on `sys.path`)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._by_module: dict[str, list[str]] = {}
        self._known: dict[str, str] = {}  # normalised path -> the path as given
        self._reexports: dict[str, dict[str, str]] = {}  # package `__init__.py` -> its re-exported names
        for path in paths:
            if path.endswith(".py"):
                for name in _module_names(path):
                    self._by_module.setdefault(name, []).append(path)
                self._known[os.path.normpath(path)] = path

    def resolve(self, qualname: str, importer: str) -> tuple[str, str] | None:
        """(file, name inside it) for a qualified name as `importer` wrote it, or None. A name
        a package's `__init__.py` re-exports (`from .utils import LossTracker`, imported as
        `from utils import LossTracker`) resolves to the file that defines it."""
        where = self._resolve_once(qualname, importer)
        for _ in range(_REEXPORT_HOPS):
            if where is None or os.path.basename(where[0]) != "__init__.py":
                break
            head, _, rest = where[1].partition(".")
            if where[0] not in self._reexports:
                self._reexports[where[0]] = _reexports_of(where[0])
            source = self._reexports[where[0]].get(head)
            if source is None:
                break
            where = self._resolve_once(f"{source}.{rest}" if rest else source, where[0])
        return where

    def _resolve_once(self, qualname: str, importer: str) -> tuple[str, str] | None:
        if qualname.startswith("."):
            return self._resolve_relative(qualname, importer)
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            candidates = self._by_module.get(".".join(parts[:cut]))
            if candidates:
                chosen = _nearest(candidates, importer, ".".join(parts[:cut]))
                return (chosen, ".".join(parts[cut:])) if chosen is not None else None
        return None

    def _resolve_relative(self, qualname: str, importer: str) -> tuple[str, str] | None:
        level = len(qualname) - len(qualname.lstrip("."))
        folder = os.path.dirname(importer)
        for _ in range(level - 1):
            folder = os.path.dirname(folder)
        parts = qualname[level:].split(".")
        for cut in range(len(parts) - 1, 0, -1):
            base = os.path.join(folder, *parts[:cut])
            for candidate in (base + ".py", os.path.join(base, "__init__.py")):
                if os.path.normpath(candidate) in self._known:
                    return self._known[os.path.normpath(candidate)], ".".join(parts[cut:])
        package_init = os.path.normpath(os.path.join(folder, "__init__.py"))
        return (self._known[package_init], ".".join(parts)) if package_init in self._known else None


#: How many package `__init__.py` files one name is followed through (`a` re-exports from `a.b`,
#: which re-exports from `a.b.c`).
_REEXPORT_HOPS = 3
#: `__init__.py` files larger than this are not read for re-exports (they hold code, not a list).
_REEXPORT_READ_LIMIT = 256 * 1024


def _reexports_of(init_path: str) -> dict[str, str]:
    """`from .utils import LossTracker as Tracker` at the top of a package's `__init__.py`:
    {"Tracker": ".utils.LossTracker"}, the names as that file wrote them. An unreadable or
    invalid file re-exports nothing (its own walk reports it)."""
    try:
        tree = ast.parse(read_regular(init_path, _REEXPORT_READ_LIMIT))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):  # UnsafeFile is a ValueError
        return {}
    found = {}
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom):
            module = "." * statement.level + (statement.module or "")
            for alias in statement.names:
                if alias.name != "*":
                    found[alias.asname or alias.name] = f"{module}.{alias.name}" if statement.module else f"{module}{alias.name}"
    return found


def _module_name(path: str) -> str:
    """Dotted name of a file, climbing folders while they are packages (hold `__init__.py`)."""
    folder, file = os.path.split(path)
    parts = [] if file == "__init__.py" else [file[:-3]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        if not package:
            break
        parts.insert(0, package)
    return ".".join(parts)


#: Folders above a file's packages that may be namespace packages (`train/metrics.py` imported
#: as `train.metrics` from the repository root, with no `__init__.py`).
_NAMESPACE_LEVELS = 3


def _module_names(path: str) -> list[str]:
    """The names a file may be imported by: its package name, and that name under the
    namespace packages its folders can be when the repository root is on `sys.path`."""
    name = _module_name(path)
    names = [name]
    folder = os.path.dirname(path)
    package_levels = name.count(".") + (os.path.basename(path) == "__init__.py")  # `a/__init__.py` is `a`: its folder is named
    for _ in range(package_levels):
        folder = os.path.dirname(folder)
    for _ in range(_NAMESPACE_LEVELS):
        folder, package = os.path.split(folder)
        if not package.isidentifier():
            break
        name = f"{package}.{name}"
        names.append(name)
    return names


def _nearest(candidates: list[str], importer: str, module: str) -> str | None:
    """The file `import module` in `importer` loads: first one whose import root (the folder
    `module` is named from) holds the importer, the deepest such root (a script run from
    `Formers/FEDformer` imports its own `utils.masking`, one run from the folder above imports
    the outer one); else the candidate sharing the longest folder prefix with the importer.
    None on a tie."""
    def rank(path: str) -> tuple[int, int]:
        root = _import_root(path, module)
        holds = os.path.commonpath([root, os.path.dirname(importer)]) == root
        return (len(root) if holds else -1, len(os.path.commonpath([os.path.dirname(path), os.path.dirname(importer)])))

    ranked = sorted(candidates, key=rank, reverse=True)
    if len(ranked) > 1 and rank(ranked[0]) == rank(ranked[1]):
        return None
    return ranked[0]


def _import_root(path: str, module: str) -> str:
    """The folder from which `path` is imported as `module`: `a/b/utils/masking.py` as
    `utils.masking` from `a/b` (a package's `__init__.py` names its folder)."""
    folder = os.path.dirname(path)
    levels = module.count(".") + (os.path.basename(path) == "__init__.py")
    for _ in range(levels):
        folder = os.path.dirname(folder)
    return folder


def _qualified(result: Value, target: str, classes: dict[str, bool]) -> Value:
    """A factory's result named by the caller's path to it: `MoCo` returned by `models.moco.moco`
    is `models.moco.MoCo` in the calling file, which is how a move there reaches the class."""
    if result.class_name is None or result.class_name not in classes or "." not in target:
        return result
    return replace(result, class_name=f"{target.rsplit('.', 1)[0]}.{result.class_name}")


def _informative(call: OutgoingCall) -> bool:
    """A call that can change what the callee's file reports: it runs in a loop, or hands over a
    GPU value, or names the host as a device (`Filter(torch.device("cpu"))`: that file's walk
    takes a `device` parameter for the GPU by its name). A one-off call with other host or
    unknown arguments only repeats what that file's own walk assumes: nothing about them."""
    if call.runs is Runs.REPEATED or call.per_step:
        return True
    values = [*call.positional, *(value for _, value in call.keywords)]
    return any(value is not None and (value.on_gpu or value.names_the_host) for value in values)


def _caller_label(caller_path: str, callee_path: str, label: str) -> str:
    """"train.py's `train()`": the caller's file, relative to what both files share."""
    try:
        base = os.path.commonpath([os.path.dirname(caller_path), os.path.dirname(callee_path)])
        shown = os.path.relpath(caller_path, base)
    except ValueError:
        shown = os.path.basename(caller_path)
    return f"{shown} (module level)" if label == "the module" else f"{shown}'s {label}"


def _received(call: OutgoingCall, key: str, caller_path: str, callee_path: str) -> ExternalCall:
    """An outgoing call as the callee's file sees it: its function `key`, called from `caller_path`."""
    return ExternalCall(
        key, _caller_label(caller_path, callee_path, call.caller), call.runs, call.per_step, call.positional, call.keywords, call.has_star
    )


def _project_implementations(method: str, exports: Mapping[str, ModuleExports | None], index: ProjectIndex) -> list[tuple[str, str]]:
    """(file, class) of each definition of `method` a call on an object of unknown class runs:
    the project's classes that define it, where they are one interface (see `interfaces.py`)."""
    definers = [
        (path, cls)
        for path, found in exports.items()
        if found is not None
        for cls, _ in found.classes
        if f"{cls}.{method}" in found.functions
    ]
    imported_bases = {path: dict(found.bases) for path, found in exports.items() if found is not None}
    local_bases = {path: dict(found.local_bases) for path, found in exports.items() if found is not None}

    def parents(owner: tuple[str, str]) -> list[tuple[str, str]]:
        path, cls = owner
        found = [(path, base) for base in local_bases.get(path, {}).get(cls, ())]
        for base in imported_bases.get(path, {}).get(cls, ()):
            where = index.resolve(base, path)
            if where is not None:
                found.append(where)
        return found

    return interface_implementations(method, definers, parents)


def _method_owners(cls: str, inherited: Mapping[str, str]) -> set[str]:
    """The classes of the file whose methods an instance of `cls` runs as its own (`MoCo_ResNet`
    inheriting `MoCo.forward`): an instance moved to the GPU runs their methods with `self` there."""
    return {defined.split(".", 1)[0] for own, defined in inherited.items() if own.split(".", 1)[0] == cls} - {cls}


def names_gpu(source: str | bytes) -> bool:
    """The text mentions CUDA (`.cuda()`, `device="cuda"`, `torch.cuda`) or Triton, whose kernels
    run on GPUs only: code meant for a GPU."""
    if isinstance(source, bytes):
        return b"cuda" in source or b"triton" in source
    return "cuda" in source or "triton" in source


#: `torch.distributions.Distribution.set_default_validate_args(False)`, however the class is named.
_DISTRIBUTION_CHECKS_OFF = r"\bset_default_validate_args\s*\(\s*False\s*\)"
_DISTRIBUTION_CHECKS_OFF_TEXT = re.compile(_DISTRIBUTION_CHECKS_OFF)
_DISTRIBUTION_CHECKS_OFF_BYTES = re.compile(_DISTRIBUTION_CHECKS_OFF.encode())


def turns_off_distribution_checks(source: str | bytes) -> bool:
    """The text turns off the parameter checks of every `torch.distributions` distribution the
    program builds afterwards (`kb.VALIDATED_DISTRIBUTIONS`). Read from the text, as `names_gpu`
    is: the call usually sits in the entry script, after the code that builds distributions."""
    if isinstance(source, bytes):
        return _DISTRIBUTION_CHECKS_OFF_BYTES.search(source) is not None
    return _DISTRIBUTION_CHECKS_OFF_TEXT.search(source) is not None


def _framework_classes(exports: Mapping[str, ModuleExports | None], index: ProjectIndex) -> dict[tuple[str, str], str]:
    """(file, class) -> the framework class (a key of `knowledge.FRAMEWORK_STEPS`) it derives
    from, through bases in any file of the project: a chain of subclasses across files runs the
    framework's step methods all the same."""
    bases_of = {  # each base resolved once: the rounds below look them up again and again
        (path, name): [(base, index.resolve(base, path)) for base in bases]
        for path, found in exports.items() if found is not None
        for name, bases in found.bases
    }
    derived: dict[tuple[str, str], str] = {}
    grew = True
    while grew:  # each round reaches one more file down a chain; a chain is finite
        grew = False
        for (path, name), bases in bases_of.items():
            if (path, name) in derived:
                continue
            for base, where in bases:
                framework = base if base in kb.FRAMEWORK_STEPS else derived.get(where) if where is not None else None
                if framework is not None:
                    derived[(path, name)] = framework
                    grew = True
                    break
    return derived


def project_contexts(
    exports: Mapping[str, ModuleExports | None],
    index: ProjectIndex,
    gpu_project: bool = False,
    distribution_checks_off: bool = False,
) -> dict[str, ProjectContext]:
    """One context per file that the rest of the project tells something (others are absent,
    or, in a `gpu_project`, hold only the project-wide flags); `index` holds the same files (built
    once: it reads the folders for `__init__.py`)."""
    classes_of = {path: dict(found.classes) for path, found in exports.items() if found is not None}
    results_of = {path: dict(found.results) for path, found in exports.items() if found is not None}
    passthrough_of = {path: dict(found.passthrough) for path, found in exports.items() if found is not None}
    functions_of = {path: set(found.functions) for path, found in exports.items() if found is not None}
    inherited_of = {path: dict(found.inherited_methods) for path, found in exports.items() if found is not None}
    autograd_of = {
        path: {name for name, bases in found.bases if set(bases) & kb.AUTOGRAD_FUNCTION_BASES}
        for path, found in exports.items()
        if found is not None
    }
    imported_autograd: dict[str, set[str]] = {}
    calls: dict[str, list[ExternalCall]] = {}
    tested_only: dict[tuple[str, str], list[ExternalCall]] = {}  # calls made by tests, per function
    called_by_project: set[tuple[str, str]] = set()  # functions some non-test code calls
    handed_by_project: set[tuple[str, str]] = set()  # classes and functions handed to a call (a factory may build them)
    gpu_classes: dict[str, dict[str, Value]] = {}
    imported_classes: dict[str, dict[str, bool]] = {}
    imported_results: dict[str, dict[str, Value]] = {}
    imported_passthrough: dict[str, dict[str, Passthrough]] = {}
    uploads_of = {path: dict(found.uploads) for path, found in exports.items() if found is not None}
    imported_uploads: dict[str, dict[str, tuple[int, str]]] = {}
    clock_readers_of = {path: set(found.clock_readers) for path, found in exports.items() if found is not None}
    imported_clock_readers: dict[str, set[str]] = {}
    compilers_of = {path: set(found.compilers) for path, found in exports.items() if found is not None}
    imported_compilers: dict[str, set[str]] = {}
    attributes_of = {path: dict(found.attributes) for path, found in exports.items() if found is not None}
    self_calls_of = {path: found.self_calls for path, found in exports.items() if found is not None}
    inherited: dict[str, dict[str, tuple[tuple[str, Value], ...]]] = {}
    frameworks_of = _framework_classes(exports, index)
    imported_frameworks: dict[str, dict[str, str]] = {}
    values_of = {path: dict(found.values) for path, found in exports.items() if found is not None}
    imported_values: dict[str, dict[str, Value]] = {}
    dispatched: list[tuple[str, OutgoingCall]] = []  # `model.train_on_batch(batch)`: (caller's file, call)
    for path, found in exports.items():
        if found is None:
            continue
        for local, qualname in found.from_imports:
            where = index.resolve(qualname, path)
            if where is not None and where[0] != path and where[1] in values_of.get(where[0], {}):
                imported_values.setdefault(path, {})[local] = values_of[where[0]][where[1]]
        for name, bases in found.bases:
            merged: dict[str, Value] = {}
            for base in bases:
                where = index.resolve(base, path)
                if where is not None and where[0] != path and where in frameworks_of:
                    imported_frameworks.setdefault(path, {})[base] = frameworks_of[where]
                if where is not None and where[0] != path and where[1] in classes_of.get(where[0], {}):
                    imported_classes.setdefault(path, {})[base] = classes_of[where[0]][where[1]]  # `class Wide(Base)`: a module if Base is one
                if where is not None and where[0] != path:
                    merged.update(attributes_of.get(where[0], {}).get(where[1], ()))
                    for (owner, method), call in self_calls_of.get(where[0], ()):
                        if owner == where[1] and f"{name}.{method}" in functions_of.get(path, set()):
                            # the base class's loop runs `self.train()`: this class's override
                            calls.setdefault(path, []).append(
                                _received(call, f"{name}.{method}", where[0], path)
                            )
            if merged:
                inherited.setdefault(path, {})[name] = tuple(sorted(merged.items()))
        for handed in found.handed:
            where = index.resolve(handed, path)
            if where is not None and where[0] != path:
                handed_by_project.add(where)
        for call in found.calls:
            if call.target.startswith(DISPATCHED_PREFIX):
                dispatched.append((path, call))
                continue
            where = index.resolve(call.target, path)
            if where is None or where[0] == path:
                continue
            callee_path, name = where
            if name.endswith(".apply") and name.removesuffix(".apply") in autograd_of.get(callee_path, set()):
                imported_autograd.setdefault(path, set()).add(call.target.removesuffix(".apply"))
            name = inherited_of.get(callee_path, {}).get(name, name)  # `UniformSampler.sample` runs `ScheduleSampler.sample`
            if name in classes_of.get(callee_path, {}):
                imported_classes.setdefault(path, {})[call.target] = classes_of[callee_path][name]
                name = f"{name}.__init__"
            elif name in results_of.get(callee_path, {}):
                imported_results.setdefault(path, {})[call.target] = _qualified(results_of[callee_path][name], call.target, classes_of.get(callee_path, {}))
            elif name in passthrough_of.get(callee_path, {}):
                imported_passthrough.setdefault(path, {})[call.target] = passthrough_of[callee_path][name]
            if name in uploads_of.get(callee_path, {}):
                imported_uploads.setdefault(path, {})[call.target] = uploads_of[callee_path][name]
            if name in clock_readers_of.get(callee_path, set()):
                imported_clock_readers.setdefault(path, set()).add(call.target)
            if name in compilers_of.get(callee_path, set()):
                imported_compilers.setdefault(path, set()).add(call.target)
            defined = functions_of.get(callee_path)  # None: not walked yet (no array library in it)
            if not call.from_test:
                called_by_project.add((callee_path, name))
            if defined is not None and (name not in defined or not _informative(call)):
                continue  # not a function there (`model.cuda()`), or a call that tells nothing new
            received = _received(call, name, path, callee_path)
            if call.from_test:
                tested_only.setdefault((callee_path, name), []).append(received)
            else:
                calls.setdefault(callee_path, []).append(received)
        for qualname, value in found.gpu_instances:
            where = index.resolve(qualname, path)
            if where is not None and where[1] in classes_of.get(where[0], {}):
                on_gpu = gpu_classes.setdefault(where[0], {})
                on_gpu[where[1]] = replace(value, class_name=where[1])
                for base in _method_owners(where[1], inherited_of.get(where[0], {})):
                    on_gpu.setdefault(base, replace(value, class_name=base))
    implementations: dict[str, list[tuple[str, str]]] = {}
    for path, call in dispatched:
        method = call.target.removeprefix(DISPATCHED_PREFIX)
        if method not in implementations:
            implementations[method] = _project_implementations(method, exports, index)
        for callee_path, owner in implementations[method]:
            if callee_path != path:  # (the caller's own file resolves its classes in its walk)
                calls.setdefault(callee_path, []).append(_received(call, f"{owner}.{method}", path, callee_path))
    for function, from_tests in tested_only.items():
        if function not in called_by_project:
            calls.setdefault(function[0], []).extend(from_tests)  # the tests are all we know of its inputs
    # what steps an optimizer class: only files that hold one are told what the project calls of
    # them (a context that changes makes the file's walk and cache entry change with it)
    callers_of: dict[str, set[str]] = {
        path: set() for path, found in exports.items()
        if found is not None and any(set(bases) & kb.OPTIMIZER_BASES for _, bases in found.bases)
    }
    for callee, name in called_by_project | handed_by_project:
        if callee in callers_of:
            callers_of[callee].add(name)
    contexts = {}
    for path, found in exports.items():
        context = ProjectContext(
            tuple(calls.get(path, ())),
            tuple(sorted(gpu_classes.get(path, {}).items())),
            tuple(sorted(imported_classes.get(path, {}).items())),
            tuple(sorted(imported_results.get(path, {}).items())),
            tuple(sorted(imported_passthrough.get(path, {}).items(), key=lambda item: item[0])),
            tuple(sorted(inherited.get(path, {}).items())),
            gpu_project,
            tuple(sorted(imported_autograd.get(path, ()))),
            project_callers=tuple(sorted(callers_of[path])) if path in callers_of else None,
            imported_uploads=tuple(sorted(imported_uploads.get(path, {}).items())),
            imported_clock_readers=tuple(sorted(imported_clock_readers.get(path, ()))),
            imported_compilers=tuple(sorted(imported_compilers.get(path, ()))),
            imported_frameworks=tuple(sorted(imported_frameworks.get(path, {}).items())),
            distribution_checks_off=distribution_checks_off and found is not None and found.builds_checked_distributions,
            imported_values=tuple(sorted(imported_values.get(path, {}).items())),
        )
        if context:
            contexts[path] = context
    return contexts


# -- JSON (the cache stores exports next to the findings) ----------------------------------------
def _value_to_json(value: Value | None) -> dict[str, Any] | None:
    if value is None:
        return None
    return {f.name: (getattr(value, f.name).value if f.name in ("kind", "device") else getattr(value, f.name)) for f in fields(value)}


def _value_from_json(data: Any) -> Value | None:
    if data is None:
        return None
    items = dict(data)
    items["kind"], items["device"] = Kind(items["kind"]), Device(items["device"])
    for key in ("shape", "placed_by"):
        if items.get(key) is not None:
            items[key] = tuple(items[key])
    return Value(**items)


def exports_to_json(exports: ModuleExports) -> dict[str, Any]:
    return {
        "classes": [list(item) for item in exports.classes],
        "results": [[key, _value_to_json(value)] for key, value in exports.results],
        "calls": [_call_to_json(call) for call in exports.calls],
        "gpu_instances": [[name, _value_to_json(value)] for name, value in exports.gpu_instances],
        "functions": list(exports.functions),
        "passthrough": [
            [key, [list(part) if part else None for part in through.parts], through.single, [_value_to_json(value) if value else None for value in through.made]]
            for key, through in exports.passthrough
        ],
        "attributes": [[name, [[key, _value_to_json(value)] for key, value in values]] for name, values in exports.attributes],
        "bases": [[name, list(bases)] for name, bases in exports.bases],
        "self_calls": [[owner, method, _call_to_json(call)] for (owner, method), call in exports.self_calls],
        "inherited_methods": [list(item) for item in exports.inherited_methods],
        "uploads": [[key, list(uploaded)] for key, uploaded in exports.uploads],
        "turns_off_distribution_checks": exports.turns_off_distribution_checks,
        "builds_checked_distributions": exports.builds_checked_distributions,
        "clock_readers": list(exports.clock_readers),
        "compilers": list(exports.compilers),
        "handed": list(exports.handed),
        "values": [[name, _value_to_json(value)] for name, value in exports.values],
        "from_imports": [list(item) for item in exports.from_imports],
        "local_bases": [[name, list(bases)] for name, bases in exports.local_bases],
    }


def _call_to_json(call: OutgoingCall) -> dict[str, Any]:
    return {
        "target": call.target,
        "caller": call.caller,
        "runs": call.runs.value,
        "per_step": call.per_step,
        "positional": [_value_to_json(value) for value in call.positional],
        "keywords": [[name, _value_to_json(value)] for name, value in call.keywords],
        "has_star": call.has_star,
        "from_test": call.from_test,
    }


def _call_from_json(call: Any) -> OutgoingCall:
    return OutgoingCall(
        str(call["target"]),
        str(call["caller"]),
        Runs(call["runs"]),
        bool(call["per_step"]),
        tuple(_value_from_json(value) for value in call["positional"]),
        tuple((str(name), _value_from_json(value)) for name, value in call["keywords"]),
        bool(call["has_star"]),
        bool(call["from_test"]),
    )


def exports_from_json(data: Any) -> ModuleExports:
    """Raises KeyError/TypeError/ValueError on a damaged entry (the cache then re-analyses)."""
    calls = tuple(_call_from_json(call) for call in data["calls"])
    return ModuleExports(
        tuple((str(name), bool(is_module)) for name, is_module in data["classes"]),
        tuple((str(key), value) for key, raw in data["results"] if (value := _value_from_json(raw)) is not None),
        calls,
        tuple((str(name), value) for name, raw in data["gpu_instances"] if (value := _value_from_json(raw)) is not None),
        tuple(str(key) for key in data["functions"]),
        tuple(
            (
                str(key),
                Passthrough(
                    tuple((int(part[0]), str(part[1])) if part else None for part in parts),
                    bool(single),
                    tuple(_value_from_json(raw) if raw is not None else None for raw in made),
                ),
            )
            for key, parts, single, made in data["passthrough"]
        ),
        tuple(
            (str(name), tuple((str(key), value) for key, raw in values if (value := _value_from_json(raw)) is not None))
            for name, values in data["attributes"]
        ),
        tuple((str(name), tuple(str(base) for base in bases)) for name, bases in data["bases"]),
        tuple(((str(owner), str(method)), _call_from_json(call)) for owner, method, call in data["self_calls"]),
        tuple((str(own), str(defined)) for own, defined in data["inherited_methods"]),
        tuple((str(key), (int(position), str(name))) for key, (position, name) in data["uploads"]),
        bool(data["turns_off_distribution_checks"]),
        bool(data["builds_checked_distributions"]),
        tuple(str(key) for key in data["clock_readers"]),
        tuple(str(key) for key in data["compilers"]),
        tuple(str(name) for name in data["handed"]),
        tuple((str(name), value) for name, raw in data["values"] if (value := _value_from_json(raw)) is not None),
        tuple((str(local), str(qualname)) for local, qualname in data["from_imports"]),
        tuple((str(name), tuple(str(base) for base in bases)) for name, bases in data["local_bases"]),
    )
