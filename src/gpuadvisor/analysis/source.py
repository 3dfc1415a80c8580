"""Turning bytes into a LibCST module, or into a clear error.

Decoding follows CPython (PEP 263 coding cookie, UTF-8 BOM). Before handing text to
LibCST's native parser we reject what CPython itself rejects for nesting depth, because
LibCST's parser crashes the whole process on extremely deep nesting instead of raising.
"""

from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize
from dataclasses import dataclass

import libcst as cst

#: CPython's tokenizer refuses more than 200 open brackets; we only ask CPython for a
#: verdict when a cheap bracket count says a file gets anywhere near that.
_SUSPICIOUS_NESTING = 150
_BRACKET_DEPTH_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
_NON_BRACKETS = re.compile(r"[^()\[\]{}]+")


class SourceError(Exception):
    """A file cannot be analysed; `kind` and `line` end up in the report's `errors`."""

    def __init__(self, kind: str, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.line = line


@dataclass(frozen=True)
class ParsedSource:
    text: str
    module: cst.Module


def decode_source(data: bytes) -> str:
    """Decode like the interpreter would, refusing binary files with a readable reason."""
    if b"\0" in data:
        raise SourceError("decode", "file contains NUL bytes; it looks like a binary file, not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise SourceError("decode", f"bad coding declaration: {exc.msg}", exc.lineno) from None
    try:
        text = data.decode(encoding)
    except (UnicodeError, LookupError) as exc:  # UnicodeError: codecs such as 'undefined'
        raise SourceError("decode", f"cannot decode as {encoding}: {exc}") from None
    return text.removeprefix("\ufeff")


def _naive_bracket_depth(text: str) -> int:
    """Upper-bound-ish nesting depth, ignoring strings; cheap because it runs in C loops."""
    brackets = _NON_BRACKETS.sub("", text)
    if not brackets:
        return 0
    return max(itertools.accumulate(map(_BRACKET_DEPTH_STEP.__getitem__, brackets)))


def _reject_pathological_nesting(text: str) -> None:
    if _naive_bracket_depth(text) < _SUSPICIOUS_NESTING:
        return
    try:
        ast.parse(text)
    except SyntaxError as exc:
        raise SourceError("syntax", f"invalid syntax: {exc.msg}", exc.lineno) from None
    except (RecursionError, MemoryError):
        raise SourceError("syntax", "expression nesting too deep to analyse") from None


def ensure_valid_syntax(text: str) -> None:
    """Syntax check for files no rule needs to parse: CPython's C parser, LibCST as referee.

    CPython may be older than the code (3.12 `type` statements on 3.11), so a file CPython
    rejects is only reported when LibCST rejects it too.
    """
    try:
        compile(text, "<checked>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        parse_source(text)


def parse_source(text: str) -> ParsedSource:
    """Parse text into a LibCST module, or raise SourceError with a one-line reason."""
    _reject_pathological_nesting(text)
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise _explain_syntax_error(text, exc) from None
    except RecursionError:
        raise SourceError("syntax", "expression nesting too deep to analyse") from None
    return ParsedSource(text=text, module=module)


def _explain_syntax_error(text: str, exc: cst.ParserSyntaxError) -> SourceError:
    """Prefer CPython's wording and line (what users see when they run the file)."""
    try:
        ast.parse(text)
    except SyntaxError as cpython:
        return SourceError("syntax", f"invalid syntax: {cpython.msg}", cpython.lineno)
    except (RecursionError, MemoryError, ValueError):
        pass
    return SourceError("syntax", f"LibCST cannot parse this file: {exc.message}", exc.raw_line)
