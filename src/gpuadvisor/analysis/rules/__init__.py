"""The rule registry: every rule class, in code order, and selection by code or category.

Rules are discovered, not listed: each module of this package may define `Rule` subclasses,
so adding a rule touches its own module (and its document in `rules/`) and nothing else.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterable

from gpuadvisor._suggest import did_you_mean
from gpuadvisor.analysis.rules.base import Rule


def _discover() -> tuple[type[Rule], ...]:
    found: dict[str, type[Rule]] = {}
    for module_info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Rule) and cls is not Rule and cls.__module__ == module.__name__:
                if cls.code in found:
                    raise RuntimeError(f"rule code {cls.code} defined twice: {found[cls.code].__name__} and {cls.__name__}")
                found[cls.code] = cls
    return tuple(found[code] for code in sorted(found))


ALL_RULES: tuple[type[Rule], ...] = _discover()
RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}
CATEGORIES: frozenset[str] = frozenset(rule.category for rule in ALL_RULES)


class UnknownRuleError(ValueError):
    pass


def _expand(selector: str) -> set[str]:
    name = selector.strip()
    if name.upper() == "ALL":
        return set(RULES_BY_CODE)
    if name.upper() in RULES_BY_CODE:
        return {name.upper()}
    if name.lower() in CATEGORIES:
        return {rule.code for rule in ALL_RULES if rule.category == name.lower()}
    prefix = [code for code in RULES_BY_CODE if code.startswith(name.upper())] if name else []
    if prefix:
        return set(prefix)  # "GPU1" selects GPU101, GPU102, like ruff's prefixes
    hint = did_you_mean(name, [*RULES_BY_CODE, *sorted(CATEGORIES)])
    raise UnknownRuleError(f"unknown rule code or category: {selector!r}{hint} (see `gpuadvisor rules`)")


def resolve_codes(selectors: Iterable[str]) -> set[str]:
    codes: set[str] = set()
    for selector in selectors:
        if selector.strip():
            codes |= _expand(selector)
    return codes


def select_rules(select: Iterable[str] | None = None, ignore: Iterable[str] | None = None) -> list[type[Rule]]:
    """The rules to run: those on by default (or `select`), minus `ignore`; codes, prefixes or categories."""
    chosen = resolve_codes(select) if select else {rule.code for rule in ALL_RULES if rule.enabled_by_default}
    chosen -= resolve_codes(ignore or ())
    return [rule for rule in ALL_RULES if rule.code in chosen]
