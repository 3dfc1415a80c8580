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
#: Lines this long, or this many `elif`, send a file through CPython's parser first.
_LONG_LINE = 1_000
_MANY_ELIFS = 300
#: Files this large are parsed by CPython first, to find data literals worth leaving out.
ELIDE_FROM_SIZE = 256 * 1024
#: A literal of constants this long (in characters) is left out of the analysis.
ELIDE_LITERAL_SIZE = 10_000
#: What stands in for a literal left out: an unknown function, so its value is unknown.
ELIDED_NAME = "__gpuadvisor_elided_literal__"
#: Longest chain (nesting depth or `and`/`or` width) analysed; LibCST handles this size in
#: well under a second, and crashes at some thousands.
MAX_CHAIN = 1_000


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


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def code_lines(text: str) -> list[str]:
    """Lines as Python counts them: only \\n, \\r\\n and \\r end a line.

    `str.splitlines` also breaks at form feeds, U+2028 and other separators, which would shift
    every line shown after one of them.
    """
    lines = _LINE_BREAK.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def _naive_bracket_depth(text: str) -> int:
    """Upper-bound-ish nesting depth, ignoring strings; cheap because it runs in C loops."""
    brackets = _NON_BRACKETS.sub("", text)
    if not brackets:
        return 0
    return max(itertools.accumulate(map(_BRACKET_DEPTH_STEP.__getitem__, brackets)))


def _looks_generated(text: str) -> bool:
    """Cheap signs of machine-written shapes (very long lines, huge elif ladders)."""
    longest_line = max(map(len, code_lines(text)), default=0)
    return longest_line > _LONG_LINE or text.count("elif") > _MANY_ELIFS


def _longest_chain(tree: ast.AST) -> tuple[int, int]:
    """(deepest nesting, widest `and`/`or`/comparison chain) of a CPython syntax tree."""
    deepest = widest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, ast.BoolOp):
            widest = max(widest, len(node.values))
        elif isinstance(node, ast.Compare):
            widest = max(widest, len(node.ops))
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest, widest


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
    """CPython's tree, for files where LibCST needs a look ahead: suspected deep nesting or long
    chains (LibCST slows down more than linearly on `1 + 1 + ...`, `a.b.c...`, `elif` ladders,
    and crashes the process beyond some thousands of links), and large files (data literals).
    None for ordinary files, which go to LibCST directly."""
    suspicious = _naive_bracket_depth(text) >= _SUSPICIOUS_NESTING or _looks_generated(text)
    if not suspicious and len(text) < ELIDE_FROM_SIZE:
        return None
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise SourceError("syntax", f"invalid syntax: {exc.msg}", exc.lineno) from None
    except (RecursionError, MemoryError):
        raise SourceError("too-complex", "code nested or chained too deeply to analyse") from None
    if suspicious:
        longest = max(*_longest_chain(tree), _longest_string_run(text))
        if longest > MAX_CHAIN:
            raise SourceError(
                "too-complex",
                f"an expression chains {longest:,} operations; too long to analyse "
                f"(the limit is {MAX_CHAIN:,}, generated code is the usual reason)",
            )
    return tree


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


def _elide_large_literals(text: str, tree: ast.Module) -> str:
    """The text with each data literal of ELIDE_LITERAL_SIZE characters or more replaced by a call
    of an unknown function spanning the same lines: a table of constants holds no GPU pattern,
    yet costs LibCST ~20x CPython's time and ~700 bytes of memory per byte. Line numbers and the
    columns before each literal stay as they were; the analysis sees an unknown value there."""
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
        if isinstance(node, ast.JoinedStr) or rough_span(node) < ELIDE_LITERAL_SIZE // 2:
            continue  # nothing that large inside; f-string expressions are not worth the risk
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)) and node.end_lineno is not None and node.end_col_offset is not None:
            start, end = offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)
            if end - start >= ELIDE_LITERAL_SIZE and _constant_only(node):
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
        compile(text, "<checked>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        parse_source(text)


_INDENT_FORM_FEED = re.compile(r"^[ \t\f]*\f", re.MULTILINE)


def _without_indent_form_feeds(text: str) -> str:
    """Drop form feeds from indentation, the way CPython counts it (a form feed resets the
    column): LibCST's tokenizer rejects a form feed before an indented line in nested blocks."""
    return _INDENT_FORM_FEED.sub("", text) if "\f" in text else text


def parse_source(text: str) -> ParsedSource:
    """Parse text into a LibCST module, or raise SourceError with a one-line reason."""
    tree = _cpython_tree(text)
    parsed = _without_indent_form_feeds(text if tree is None else _elide_large_literals(text, tree))
    try:
        module = cst.parse_module(parsed)
    except cst.ParserSyntaxError as exc:
        raise _explain_syntax_error(text, exc) from None
    except RecursionError:
        raise SourceError("too-complex", "code nested or chained too deeply to analyse") from None
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
