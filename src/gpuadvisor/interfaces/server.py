"""`gpuadvisor server`: a Language Server over stdio (pygls).

Diagnostics on open, change and save (rule code, a link to the rule's document), code actions
for the automatic fixes (safe ones preferred, unsafe ones labelled), and a hover that shows
the predicted CPU and GPU times of a finding that rests on a prediction.
"""

from __future__ import annotations


from lsprotocol import types
from pygls.lsp.server import LanguageServer

from gpuadvisor._version import __version__
from gpuadvisor.analysis.findings.records import Finding, Severity
from gpuadvisor.interfaces.config import Config, ConfigError, discover_config
from gpuadvisor.interfaces.ruledocs import docs_folder
from gpuadvisor.prediction.formatting import duration, factor

SOURCE = "gpuadvisor"
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


class AdvisorServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("gpuadvisor", __version__)
        #: The findings last published per document, for hover and code actions.
        self.findings: dict[str, list[Finding]] = {}


server = AdvisorServer()


def rule_link(code: str) -> str:
    """Where the rule's document is: the shipped Markdown file (editors open it)."""
    return (docs_folder() / f"{code}.md").resolve().as_uri()


def _config(path: str) -> Config:
    try:
        return discover_config([path])
    except ConfigError:
        return Config()  # a broken pyproject.toml is reported by `check`; the editor keeps working


def analyse(text: str, path: str) -> tuple[list[Finding], str | None]:
    """Findings for the document (configuration applied), or the reason it cannot be read."""
    from gpuadvisor.interfaces.api import check_source

    config = _config(path)
    try:
        found = check_source(text, path, select=list(config.select) or None, ignore=list(config.ignore), gpu=config.gpu, cpu=config.cpu)
    except ValueError as exc:
        return [], str(exc)
    return [f for f in found if config.keeps(f)], None


def _range(finding: Finding) -> types.Range:
    return types.Range(
        types.Position(finding.line - 1, finding.column), types.Position(finding.end_line - 1, finding.end_column)
    )


def diagnostic(finding: Finding) -> types.Diagnostic:
    return types.Diagnostic(
        range=_range(finding),
        message=f"{finding.message}\nFix: {finding.suggestion}",
        severity=_SEVERITY[finding.severity],
        code=finding.rule,
        code_description=types.CodeDescription(href=rule_link(finding.rule)),
        source=SOURCE,
        data={"rule": finding.rule, "line": finding.line, "column": finding.column},
    )


def _publish(ls: AdvisorServer, uri: str) -> None:
    document = ls.workspace.get_text_document(uri)
    findings, problem = analyse(document.source, document.path)
    ls.findings[uri] = findings
    diagnostics = [diagnostic(f) for f in findings]
    if problem is not None:
        diagnostics.append(
            types.Diagnostic(range=types.Range(types.Position(0, 0), types.Position(0, 0)), message=problem, source=SOURCE, severity=types.DiagnosticSeverity.Information)
        )
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=document.version))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: AdvisorServer, params: types.DidOpenTextDocumentParams) -> None:
    _publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: AdvisorServer, params: types.DidChangeTextDocumentParams) -> None:
    _publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: AdvisorServer, params: types.DidSaveTextDocumentParams) -> None:
    _publish(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: AdvisorServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.findings.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


def _edit(uri: str, before: str, after: str) -> types.WorkspaceEdit:
    """One text edit covering the lines that differ (the rest of the document is untouched)."""
    old, new = before.splitlines(True), after.splitlines(True)
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old, end_new = end_old - 1, end_new - 1
    replaced = types.Range(types.Position(start, 0), types.Position(end_old, 0))
    return types.WorkspaceEdit(changes={uri: [types.TextEdit(range=replaced, new_text="".join(new[start:end_new]))]})


def _fix_one(text: str, path: str, finding: Finding, unsafe: bool) -> str | None:
    from gpuadvisor.fixes import fix_text

    def this_one(seen: Finding) -> bool:
        return (seen.rule, seen.line, seen.column) == (finding.rule, finding.line, finding.column)

    try:
        outcome = fix_text(text, path, unsafe=unsafe, select=[finding.rule], keep=this_one)
    except ValueError:
        return None
    return outcome.text if outcome.changed else None


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll]),
)
def code_action(ls: AdvisorServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    from gpuadvisor.fixes import FIX_KINDS, fix_text

    uri = params.text_document.uri
    document = ls.workspace.get_text_document(uri)
    text, path = document.source, document.path
    actions: list[types.CodeAction] = []
    wanted = {(d.code, d.range.start.line + 1, d.range.start.character) for d in params.context.diagnostics if d.source == SOURCE}
    for finding in ls.findings.get(uri, []):
        if finding.rule not in FIX_KINDS or (finding.rule, finding.line, finding.column) not in wanted:
            continue
        fixed, unsafe = _fix_one(text, path, finding, unsafe=False), False
        if fixed is None:
            fixed, unsafe = _fix_one(text, path, finding, unsafe=True), True
        if fixed is None:
            continue
        title = f"Fix {finding.rule}" + (" (unsafe: may change behaviour)" if unsafe else "")
        actions.append(
            types.CodeAction(
                title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic(finding)],
                is_preferred=not unsafe, edit=_edit(uri, text, fixed),
            )
        )
    only = params.context.only or []
    if not only or any(kind.startswith(types.CodeActionKind.SourceFixAll) for kind in only):
        try:
            outcome = fix_text(text, path)
        except ValueError:
            outcome = None
        if outcome is not None and outcome.changed:
            actions.append(
                types.CodeAction(title="Fix all safe gpuadvisor findings", kind=types.CodeActionKind.SourceFixAll, edit=_edit(uri, text, outcome.text))
            )
    return actions


def hover_text(finding: Finding) -> str:
    lines = [f"**{finding.rule}** ({finding.category}): {finding.message}"]
    prediction = finding.prediction
    if prediction is not None:
        lines.append(
            f"Predicted: CPU {duration(prediction.cpu_seconds)}, GPU {duration(prediction.gpu_seconds)}"
            f" + copies {duration(prediction.transfer_seconds)}; speedup {factor(prediction.speedup)}"
            f" on {prediction.gpu_name or prediction.gpu} vs {prediction.cpu_name or prediction.cpu}"
        )
    lines.append(f"[{finding.rule} documentation]({rule_link(finding.rule)})")
    return "\n\n".join(lines)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: AdvisorServer, params: types.HoverParams) -> types.Hover | None:
    line, column = params.position.line + 1, params.position.character
    here = [
        f for f in ls.findings.get(params.text_document.uri, [])
        if (f.line, f.column) <= (line, column) <= (f.end_line, f.end_column)
    ]
    if not here:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(map(hover_text, here))))


def serve() -> None:
    server.start_io()


__all__ = ["serve", "server", "analyse", "diagnostic", "hover_text", "rule_link"]
