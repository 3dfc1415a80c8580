"""Import aliases: which local name stands for which module or module member.

`import torch as th`, `from cupy import asarray`, `from time import perf_counter as clock`
all end up here, so rules ask `qualified_name(node)` and get "torch.cuda.synchronize"
whatever the spelling. We build this table ourselves during the one shared walk instead of
using LibCST's QualifiedNameProvider, which costs several times the parse.
"""

from __future__ import annotations

import builtins
import sys
from typing import cast
from collections.abc import Iterator

import libcst as cst

from gpuadvisor.analysis.facts import knowledge as kb
from gpuadvisor.analysis.facts.traverse import child_nodes

_BUILTIN_NAMES = frozenset(dir(builtins))


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` as a string, or None for anything that is not a plain dotted name."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    return None


def is_none(node: cst.BaseExpression) -> bool:
    """The literal `None`."""
    return isinstance(node, cst.Name) and node.value == "None"


def positional_arg(node: cst.Call, index: int = 0) -> cst.BaseExpression | None:
    """The index-th positional argument of a call (not counting *args)."""
    args = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
    return args[index] if len(args) > index else None


def keyword_arg(node: cst.Call, name: str) -> cst.BaseExpression | None:
    return next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == name), None)


def passed_argument(node: cst.Call, name: str, index: int | None) -> cst.BaseExpression | None:
    """The expression a call hands for the parameter `name`, by keyword or at position `index`."""
    given = keyword_arg(node, name)
    if given is None and index is not None and index < len(node.args) and node.args[index].keyword is None:
        given = node.args[index].value
    return given


def literal_integer(node: cst.BaseExpression) -> int | None:
    """The value of an integer literal, negated ones included (`3`, `-1`); None for anything else."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.evaluated_value)
    return int(node.evaluated_value) if isinstance(node, cst.Integer) else None


def called_name(qualname: str | None, method: str | None) -> str:
    """The name a call calls: the method's (`x.nonzero()`), else the last part of its qualified
    name (`torch.bincount(y)` -> "bincount")."""
    return method or (qualname or "").rsplit(".", 1)[-1]


def literal_string(node: cst.BaseExpression) -> str | None:
    """The text of a plain string literal; None for anything else, or for a literal CPython
    itself would refuse (`"\\N{NO SUCH NAME}"`, which LibCST parses)."""
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except (SyntaxError, ValueError):
            return None
        return value if isinstance(value, str) else None
    return None


def names_in_target(target: cst.BaseExpression) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from names_in_target(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from names_in_target(target.value)
    elif isinstance(target, (cst.Attribute, cst.Subscript)):
        base: cst.BaseExpression | None = target.value
        while isinstance(base, (cst.Attribute, cst.Subscript)) or _getattr_of(base) is not None:
            # `getattr(batch.camera, k)[0] = ...` writes into `batch` as `batch.camera.R[0]` would
            base = base.value if isinstance(base, (cst.Attribute, cst.Subscript)) else _getattr_of(base)
        if isinstance(base, cst.Name):
            yield base.value
        dotted = dotted_name(target) if isinstance(target, cst.Attribute) else None
        if dotted is not None:
            yield dotted


def _getattr_of(node: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The object of `getattr(obj, name)`; None for any other expression."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "getattr" and node.args:
        return node.args[0].value
    return None


class ImportTable:
    """Maps local names to fully qualified names, plus which top-level modules were imported."""

    def __init__(self) -> None:
        self._aliases: dict[str, str] = {}
        self.local_definitions: set[str] = set()
        #: Names bound by `from m import a [as b]`: local name -> qualified name ("b" -> "m.a"),
        #: so that the project pass can hand this file the values other files define at top level.
        self.from_imports: dict[str, str] = {}
        #: `self.ActionDist = th.distributions.normal.Normal`: fields that name a class or function
        #: wherever the file assigns them (see `field_names`), read where such a field is called.
        self.fields: dict[str, cst.Name | cst.Attribute | None] = {}

    def add_import(self, node: cst.Import) -> list[str]:
        modules = []
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            modules.append(full)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._aliases[alias.asname.name.value] = full
            else:
                top = full.split(".")[0]
                self._aliases[top] = top
        return modules

    def add_import_from(self, node: cst.ImportFrom) -> list[str]:
        """Aliases of `from m import a`; relative imports (`from .m import a`) keep their dots
        (".m.a"), which no library name starts with: the project pass resolves them to files."""
        dots = "." * len(node.relative)
        module = dotted_name(node.module) if node.module is not None else ""
        if module is None or isinstance(node.names, cst.ImportStar):
            return [module] if module and not dots else []
        if dots:
            module = dots + module if module else dots[:-1]
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            local = alias.name.value
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self._aliases[local] = self.from_imports[local] = f"{module}.{alias.name.value}"
        return [] if dots else [module]

    def imports_module(self, top: str) -> bool:
        """Whether any import of this file is `top` or comes from it (`import triton.language as tl`)."""
        return any(full == top or full.startswith(f"{top}.") for full in self._aliases.values())

    def define_locally(self, name: str) -> None:
        """A def/class in this file shadows a builtin or an earlier import of that name."""
        self.local_definitions.add(name)
        self._aliases.pop(name, None)

    def builds_index_array(self, expr: cst.BaseExpression) -> bool:
        """`np.r_[:2, 4:n_ch]`: NumPy's index builder, an integer array made on the host from the
        positions its slices name (`kb.INDEX_BUILDERS`)."""
        return isinstance(expr, cst.Subscript) and self.qualified_name(expr.value) in kb.INDEX_BUILDERS

    def qualified_name(self, node: cst.BaseExpression) -> str | None:
        """Fully qualified name of a Name/Attribute chain rooted in an import or a builtin."""
        if isinstance(node, cst.Name):
            name = node.value
            if name in self._aliases:
                return self._aliases[name]
            if name in _BUILTIN_NAMES and name not in self.local_definitions:
                return f"builtins.{name}"
            return None
        if isinstance(node, cst.Attribute):
            if isinstance(node.value, cst.Name) and node.value.value == "self":
                named = self.fields.get(node.attr.value)
                qualname = self.qualified_name(named) if named is not None else None  # (never a `self.` name)
                return qualname if qualname is not None and not qualname.startswith("builtins.") else None
            base = self.qualified_name(node.value)
            if base is None or base.startswith("builtins."):
                return None
            if base == node.attr.value and base in _SELF_NAMED_MODULES:
                return base  # `torch.torch.rand`: the package is an attribute of itself
            return f"{base}.{node.attr.value}"
        return None


def class_methods(module: cst.Module) -> dict[str, bool]:
    """`Class.method` of every method of the file's top-level classes, True for a property
    (`@property`, `@cached_property`: reading it off an instance runs it): known wherever the
    class is written (a meter defined below the loop that updates it and prints its `avg`)."""
    found: dict[str, bool] = {}
    for statement in module.body:
        if not isinstance(statement, cst.ClassDef) or not isinstance(statement.body, cst.IndentedBlock):
            continue
        for member in statement.body.body:
            if isinstance(member, cst.FunctionDef):
                found[f"{statement.name.value}.{member.name.value}"] = any(_names_a_property(decorator.decorator) for decorator in member.decorators)
    return found


def _names_a_property(decorator: cst.BaseExpression) -> bool:
    name = decorator.attr.value if isinstance(decorator, cst.Attribute) else decorator.value if isinstance(decorator, cst.Name) else ""
    return name in ("property", "cached_property")


#: Assignment statements (concrete classes, so `type(node) in` is exact and cheaper than isinstance).
_Store = cst.Assign | cst.AnnAssign | cst.AugAssign
_STORES = frozenset({cst.Assign, cst.AnnAssign, cst.AugAssign})


def field_names(module: cst.Module) -> dict[str, cst.Name | cst.Attribute | None]:
    """Every `self.field = dotted.name` of the file: a field the file only ever sets to one name is
    that name where it is called (`self.ActionDist(mean, std)`); None where two assignments disagree."""
    fields: dict[str, cst.Name | cst.Attribute | None] = {}
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        stack.extend(child_nodes(node))
        if type(node) not in _STORES:
            continue
        store = cast(_Store, node)
        targets = [t.target for t in store.targets] if isinstance(store, cst.Assign) else [store.target]
        for target in targets:
            if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"):
                continue
            field, value = target.attr.value, store.value
            named = value if isinstance(store, cst.Assign) and isinstance(value, (cst.Name, cst.Attribute)) else None
            if named is not None and (dotted_name(named) or "self.").startswith("self."):
                named = None  # (one field set to another: not followed)
            earlier = fields.get(field, named)
            agrees = named is not None and earlier is not None and dotted_name(earlier) == dotted_name(named)
            fields[field] = named if agrees else None
    return fields


#: Packages that hold themselves as an attribute (`torch.torch is torch`).
_SELF_NAMED_MODULES = frozenset({"torch"})


def referenced_names(expr: cst.CSTNode) -> set[str]:
    """Variable names an expression reads (`self.x` is reported as both `self` and `self.x`)."""
    names: set[str] = set()
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            names.add(node.value)
        elif isinstance(node, cst.Attribute):
            dotted = dotted_name(node)
            if dotted is not None:
                names.add(dotted)
            stack.append(node.value)
        elif isinstance(node, cst.Arg):
            stack.append(node.value)
        else:
            stack.extend(child_nodes(node))
    return names


#: Top-level modules that are never files of the checked project.
_NOT_PROJECT = frozenset(sys.stdlib_module_names) | {"builtins", "numpy", "torch", "cupy", "cupyx", "numba", "scipy", "jax"}


def may_be_project_name(qualname: str | None) -> bool:
    """A qualified name that could name code of the checked project (not the standard library,
    not an array library): relative imports always, other names when their root is not known."""
    if not qualname:
        return False
    if qualname.startswith("."):
        return True
    return qualname.split(".", 1)[0] not in _NOT_PROJECT and kb.library_of(qualname) is None
