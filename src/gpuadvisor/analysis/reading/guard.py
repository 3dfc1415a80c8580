"""What LibCST may be shown: limits measured before its native parser sees a file.

LibCST's parser crashes the process (SIGSEGV) on some thousands of chained operands and
hangs or allocates gigabytes on long multi-line chains that CPython rejects. Both are
decided here from CPython's own parse (or, for text CPython rejects, its tokenizer), with
loops rather than recursion, so that hostile text becomes a `too-complex` or `syntax` entry.
"""

from __future__ import annotations

import ast
import io
import token as token_types
import tokenize

#: Longest chain (nesting depth, or operands of one `and`/`or`/comparison/call/literal) that
#: LibCST is given; it handles this size in well under a second and crashes at some thousands.
MAX_CHAIN = 1_000
#: Most tokens of one logical line of text CPython rejected that LibCST is asked to referee
#: (files written for a newer Python): real statements stay far below this, and LibCST's time on
#: rejected text grows with the cube of it (600 chained method calls: 1.5 s; 300: 0.26 s).
MAX_REFEREE_LINE_TOKENS = 1_000
#: Deepest bracket nesting of rejected text that LibCST is asked to referee.
MAX_REFEREE_DEPTH = 100
#: Most nodes of CPython's tree (or tokens, for text CPython rejected) in what LibCST is given.
#: LibCST and the walk keep ~2 KiB and spend 15-50 us of CPU per node: 300,000 nodes are ~600 MiB
#: and well inside the file budget. The largest of ~6,000 files in 42 public repositories has
#: 34,000; a 3.9 MiB file of generated statements has 1.6 million, and LibCST's native parser ran
#: out of a worker's memory ceiling on it and aborted the process (issue 26's scale run).
MAX_NODES = 300_000
#: Text shorter than this cannot hold MAX_NODES nodes (the densest code, `~a&~a&...`, makes two
#: per character), so only larger files pay for counting.
FEW_NODES_BELOW = MAX_NODES // 4


class TooComplex(Exception):
    """The text is beyond what LibCST is shown; the message says which limit and by how much."""


def _width(node: ast.AST) -> int:
    """Operands LibCST holds side by side for this node (the shapes its parser recurses over)."""
    if isinstance(node, ast.BoolOp):
        return len(node.values)
    if isinstance(node, ast.Compare):
        return len(node.ops)
    if isinstance(node, ast.Call):
        return len(node.args) + len(node.keywords)
    if isinstance(node, ast.JoinedStr):
        return len(node.values)
    return 0


def check_structure(tree: ast.AST) -> None:
    """Raise TooComplex when CPython's tree nests or chains beyond MAX_CHAIN.

    Nesting covers left-nested chains (`a.b.c...`, `x[0][0]...`, `1 + 1 + ...`, `not not ...`,
    ternaries, `elif` ladders), as each link is one level of the tree."""
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_CHAIN:
            raise TooComplex(f"code nests {MAX_CHAIN:,}+ levels deep")
        width = _width(node)
        if width > MAX_CHAIN:
            raise TooComplex(f"an expression chains {width:,} operands")
        for child in ast.iter_child_nodes(node):
            stack.append((child, depth + 1))


def check_size(tree: ast.AST) -> None:
    """Raise TooComplex when CPython's tree has more than MAX_NODES nodes (counting stops there)."""
    for count, _ in enumerate(ast.walk(tree)):
        if count >= MAX_NODES:
            raise TooComplex(f"code of more than {MAX_NODES:,} syntax-tree nodes")


def may_referee(text: str) -> bool:
    """Whether LibCST may be asked about text CPython rejected (it may be newer syntax).

    Counted from CPython's tokenizer: a logical line of thousands of tokens, brackets nested
    a hundred deep or a file of more than MAX_NODES tokens is generated or hostile text, and
    CPython's own message is the answer."""
    tokens = depth = 0
    try:
        for total, item in enumerate(tokenize.generate_tokens(io.StringIO(text).readline)):
            if total > MAX_NODES:
                return False
            if item.type in (token_types.NEWLINE, token_types.ENDMARKER):
                tokens = 0
                continue
            tokens += 1
            if item.type == token_types.OP:
                if item.string in "([{":
                    depth += 1
                elif item.string in ")]}":
                    depth = max(0, depth - 1)
            if tokens > MAX_REFEREE_LINE_TOKENS or depth > MAX_REFEREE_DEPTH:
                return False
    except (tokenize.TokenError, SyntaxError, IndentationError, ValueError):
        pass  # the tokens seen so far were within the limits
    return True
