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
import warnings
from dataclasses import dataclass

import libcst as cst

from gpuadvisor.analysis.reading.guard import FEW_NODES_BELOW, MAX_CHAIN, TooComplex, check_size, check_structure, may_referee

#: Lines this long, or this many `elif`, send a file through CPython's parser first.
_LONG_LINE = 1_000
_MANY_ELIFS = 300
#: Files this large are parsed by CPython first, to find data literals worth leaving out.
ELIDE_FROM_SIZE = 256 * 1024
#: A literal of constants this long (in characters) is left out of the analysis.
ELIDE_LITERAL_SIZE = 10_000
#: What stands in for a literal left out: an unknown function, so its value is unknown.
ELIDED_NAME = "__gpuadvisor_elided_literal__"


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
    #: CPython's verdict when it rejected the text and LibCST accepted it (newer syntax, or
    #: code CPython refuses for a reason LibCST does not check): the answer if analysis fails.
    cpython_error: SourceError | None = None


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


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def code_lines(text: str) -> list[str]:
    """Lines as Python counts them: only \\n, \\r\\n and \\r end a line.

    `str.splitlines` also breaks at form feeds, U+2028 and other separators, which would shift
    every line shown after one of them.
    """
    lines = _LINE_BREAK.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def _looks_generated(text: str) -> bool:
    """Cheap signs of machine-written shapes (very long lines, huge elif ladders)."""
    longest_line = max(map(len, code_lines(text)), default=0)
    return longest_line > _LONG_LINE or text.count("elif") > _MANY_ELIFS


def _longest_string_run(text: str) -> int:
    """Most string literals written next to each other (`"a" "b" ...`, merged by CPython's tree)."""
    longest = run = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING:
                run += 1
                longest = max(longest, run)
            elif token.type not in (tokenize.NL, tokenize.COMMENT):
                run = 0
    except (tokenize.TokenError, SyntaxError):
        pass  # CPython accepted the file; a tokenizer quirk is no reason to refuse it
    return longest


def _cpython_tree(text: str) -> ast.Module | None:
    """CPython's tree of the text, after the structural guard (`guard.py`) has measured it.

    None when CPython rejects the text but LibCST may referee (the code may be written for a
    newer Python); CPython's own message when the text is beyond what LibCST is shown."""
    try:
        with warnings.catch_warnings():  # the checked code's SyntaxWarnings are not ours to print
            warnings.simplefilter("ignore")
            tree = compile(text, "<checked>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        if may_referee(text):
            return None
        raise SourceError("syntax", f"invalid syntax: {exc.msg}", exc.lineno) from None
    except ValueError as exc:  # e.g. "source code string cannot contain null bytes"
        raise SourceError("syntax", f"invalid source: {exc}") from None
    except (RecursionError, MemoryError):
        raise SourceError("too-complex", "code nested or chained too deeply to analyse") from None
    try:
        check_structure(tree)
        if _looks_generated(text) and (run := _longest_string_run(text)) > MAX_CHAIN:
            raise TooComplex(f"an expression chains {run:,} string literals")
    except TooComplex as exc:
        raise SourceError(
            "too-complex",
            f"{exc}; too much to analyse (the limit is {MAX_CHAIN:,}, generated code is the usual reason)",
        ) from None
    return tree  # type: ignore[return-value]  # compile with PyCF_ONLY_AST gives a Module


def _constant_only(node: ast.AST) -> bool:
    """A literal made of constants alone (numbers, strings, None, nested containers of them)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Constant):
            continue
        if isinstance(item, ast.UnaryOp) and isinstance(item.op, (ast.USub, ast.UAdd)) and isinstance(item.operand, ast.Constant):
            continue
        if isinstance(item, (ast.List, ast.Tuple, ast.Set)):
            stack.extend(item.elts)
        elif isinstance(item, ast.Dict) and all(key is not None for key in item.keys):
            stack.extend(item.keys)  # type: ignore[arg-type]
            stack.extend(item.values)
        else:
            return False
    return True


def _elide_large_literals(text: str, tree: ast.Module, long_strings: bool = False) -> str:
    """The text with each data literal of ELIDE_LITERAL_SIZE characters or more replaced by a call
    of an unknown function spanning the same lines: a table of constants holds no GPU pattern,
    yet costs LibCST ~20x CPython's time and ~700 bytes of memory per byte. Line numbers and the
    columns before each literal stay as they were; the analysis sees an unknown value there.
    `long_strings`: also strings written in many pieces (implicitly joined), for the few
    thousand pieces LibCST's parser refuses."""
    smallest = 1_000 if long_strings else ELIDE_LITERAL_SIZE
    lines = _LINE_BREAK.split(text)
    starts = list(itertools.accumulate((len(line) + len(brk) for line, brk in zip(lines, _LINE_BREAK.findall(text))), initial=0))

    def offset(line: int, byte_column: int) -> int:  # ast columns count UTF-8 bytes
        return starts[line - 1] + len(lines[line - 1].encode("utf-8")[:byte_column].decode("utf-8", "replace"))

    def rough_span(node: ast.AST) -> int:  # byte columns as characters: enough to prune
        end_line, end_column = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        if end_line is None or end_column is None:
            return len(text)  # the module itself
        return starts[end_line - 1] + end_column - starts[node.lineno - 1] - node.col_offset  # type: ignore[attr-defined]

    spans: list[tuple[int, int, int]] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.JoinedStr) or rough_span(node) < smallest // 2:
            continue  # nothing that large inside; f-string expressions are not worth the risk
        joined = long_strings and isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))
        if (joined or isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict))) and isinstance(node, ast.expr) and node.end_lineno is not None and node.end_col_offset is not None:
            start, end = offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)
            if end - start >= smallest and _constant_only(node):
                spans.append((start, end, node.end_lineno - node.lineno))
                continue
        stack.extend(ast.iter_child_nodes(node))
    if not spans:
        return text
    pieces, position = [], 0
    for start, end, breaks in sorted(spans):
        pieces += [text[position:start], ELIDED_NAME, "(", "\n" * breaks, ")"]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def ensure_valid_syntax(text: str) -> None:
    """Syntax check for files no rule needs to parse: CPython's C parser, LibCST as referee.

    CPython may be older than the code (3.12 `type` statements on 3.11), so a file CPython
    rejects is only reported when LibCST rejects it too.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<checked>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        if not may_referee(text):
            raise SourceError("syntax", f"invalid syntax: {exc.msg}", exc.lineno) from None
        parse_source(text)
    except (ValueError, RecursionError, MemoryError):
        parse_source(text)


_INDENT_FORM_FEED = re.compile(r"^[ \t\f]*\f", re.MULTILINE)


def _without_indent_form_feeds(text: str) -> str:
    """Drop form feeds from indentation, the way CPython counts it (a form feed resets the
    column): LibCST's tokenizer rejects a form feed before an indented line in nested blocks."""
    return _INDENT_FORM_FEED.sub("", text) if "\f" in text else text


def parse_source(text: str) -> ParsedSource:
    """Parse text into a LibCST module, or raise SourceError with a one-line reason."""
    tree = _cpython_tree(text)
    elided = text if tree is None or len(text) < ELIDE_FROM_SIZE else _elide_large_literals(text, tree)
    if tree is not None and len(elided) >= FEW_NODES_BELOW:
        _ensure_size(tree if elided is text else _cpython_tree(elided))
    try:
        module = _libcst_parse(elided)
    except cst.CSTValidationError as exc:  # e.g. str joined to bytes: CPython refuses it too
        raise (_cpython_error(text) if tree is None else SourceError("syntax", f"invalid code: {exc}")) from None
    except cst.ParserSyntaxError as exc:
        if tree is None:
            raise _explain_syntax_error(text, exc) from None
        # CPython accepted it: LibCST's own limits (a few thousand implicitly joined strings)
        try:
            module = _libcst_parse(_elide_large_literals(text, tree, long_strings=True))
        except cst.ParserSyntaxError:
            raise SourceError("too-complex", f"valid Python that LibCST cannot parse: {exc.message}", exc.raw_line) from None
    return ParsedSource(text=text, module=module, cpython_error=_cpython_error(text) if tree is None else None)


def _ensure_size(tree: ast.Module | None) -> None:
    """Refuse code too large for LibCST (`guard.MAX_NODES`), counted on what it would be given:
    the text with its data literals left out. Its native parser cannot be interrupted by the
    file budget, and past a worker's memory ceiling it aborts the process."""
    try:
        if tree is not None:
            check_size(tree)
    except TooComplex as exc:
        raise SourceError("too-complex", f"{exc}; too much to analyse (generated code is the usual reason)") from None


def _libcst_parse(text: str) -> cst.Module:
    try:
        return cst.parse_module(_without_indent_form_feeds(text))
    except RecursionError:
        raise SourceError("too-complex", "code nested or chained too deeply to analyse") from None


def _cpython_error(text: str) -> SourceError:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<checked>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as cpython:
        return SourceError("syntax", f"invalid syntax: {cpython.msg}", cpython.lineno)
    except (RecursionError, MemoryError, ValueError) as exc:
        return SourceError("syntax", f"invalid syntax: {exc}")
    return SourceError("syntax", "invalid syntax")


def _explain_syntax_error(text: str, exc: cst.ParserSyntaxError) -> SourceError:
    """Prefer CPython's wording and line (what users see when they run the file)."""
    error = _cpython_error(text)
    if error.message == "invalid syntax":  # CPython accepted it after all
        return SourceError("syntax", f"LibCST cannot parse this file: {exc.message}", exc.raw_line)
    return error
