"""`gpuadvisor server` driven by a real LSP client over stdio (pytest-lsp)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

CODE = (
    "import torch\n"
    "\n"
    "for step in range(100):\n"
    "    buf = torch.zeros(4096, 4096).cuda()  # scratch\n"
    "    print(buf.sum().item())\n"
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "gpuadvisor", "server"]))
async def client(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("workspace")
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=root.as_uri())
    )
    lsp_client.root = root  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def open_document(client: LanguageClient, text: str, name: str = "train.py") -> str:
    uri = (client.root / name).as_uri()  # type: ignore[attr-defined]
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return uri


def apply(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.splitlines(True)
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        assert edit.range.start.character == 0 and edit.range.end.character == 0
        lines[edit.range.start.line : edit.range.end.line] = edit.new_text.splitlines(True)
    return "".join(lines)


@pytest.mark.asyncio
async def test_diagnostics_code_action_and_hover_and_a_file_that_does_not_parse(client: LanguageClient) -> None:
    """One server session (each start costs a Python process and the analysis's imports)."""
    uri = await open_document(client, CODE)
    diagnostics = client.diagnostics[uri]
    by_code = {d.code: d for d in diagnostics}
    assert set(by_code) >= {"GPU102", "GPU201"}
    transfer = by_code["GPU102"]
    assert (transfer.range.start.line, transfer.range.start.character) == (3, 10)
    # A scratch buffer filled on the host and copied on every step: a warning.
    assert transfer.source == "gpuadvisor" and transfer.severity == types.DiagnosticSeverity.Warning
    assert transfer.code_description is not None and transfer.code_description.href.endswith("GPU102.md")
    assert Path(transfer.code_description.href.removeprefix("file://")).is_file()

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=transfer.range,
            context=types.CodeActionContext(diagnostics=[transfer], only=[types.CodeActionKind.QuickFix]),
        )
    )
    assert actions is not None and [a.title for a in actions] == ["Fix GPU102"]
    action = actions[0]
    assert isinstance(action, types.CodeAction) and action.edit is not None and action.edit.changes is not None
    fixed = apply(CODE, action.edit.changes[uri])
    assert fixed == CODE.replace("torch.zeros(4096, 4096).cuda()", 'torch.zeros(4096, 4096, device="cuda")')

    # The editor applies the edit and sends the change: the fixed finding is gone.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert "GPU102" not in {d.code for d in client.diagnostics[uri]}

    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri=uri), types.Position(line=4, character=12))
    )
    assert hover is not None and "GPU201" in hover.contents.value  # type: ignore[union-attr]

    # Code that does not parse gets one notice, not a crash, and the server goes on.
    broken = await open_document(client, "def broken(:\n", "broken.py")
    assert [d.severity for d in client.diagnostics[broken]] == [types.DiagnosticSeverity.Information]


def test_hover_shows_the_predicted_times_of_a_speedup_finding() -> None:
    from gpuadvisor import check_source
    from gpuadvisor.interfaces.server import hover_text

    code = "import numpy as np\na = np.random.rand(16384, 16384).astype(np.float32)\nc = a @ a\n"
    found = [f for f in check_source(code, "m.py") if f.prediction]
    assert found, "a large matmul is a gpu-candidate"
    text = hover_text(found[0])
    assert "Predicted: CPU" in text and "GPU" in text and "speedup" in text and "documentation](file://" in text
