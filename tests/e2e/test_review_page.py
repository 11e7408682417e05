"""The review page in a real browser: headless Chromium (Debian's package)
driven by Playwright, against `medkg serve` in its own process. A curator
reviews 20 statements with the keyboard (accept, reject with a reason, edit),
renames an entity; then the store, the audit log, a rebuild and an export show
the decisions held, and markup in a note stays text. Screenshots and the time
per decision go to test-artifacts/."""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from medkg.cli import app as cli
from medkg.layout import WorkspaceLayout
from medkg.model import ReviewState
from medkg.server.access import add_token
from medkg.workspace import Workspace
from tests.conftest import REPO, copy_workspace

pytestmark = pytest.mark.slow
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "test-artifacts"
DECISIONS = 20
runner = CliRunner()


class Served:
    """`medkg serve` in its own process, on a free port."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "medkg"), "serve", "-w", str(root),
             "--port", "0"], stderr=subprocess.PIPE, text=True,
            env={**os.environ, "COLUMNS": "300"})
        self.url = ""
        deadline = time.monotonic() + 120
        assert self.proc.stderr is not None
        while not self.url and time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
            self.url = found.group(1) if found else ""
        assert self.url, "the server did not start"

    def stop(self) -> None:
        """Ctrl-C, as a curator stops it."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def server(built_workspace: Path, tmp_path: Path) -> Iterator[tuple[Served, str, Path]]:
    """`medkg serve` over a copy of the built workspace, with a curator's token."""
    root = copy_workspace(built_workspace, tmp_path / "ws")
    token = add_token(WorkspaceLayout(root), "Curator Cy")
    served = Served(root)
    try:
        yield served, token, root
    finally:
        served.stop()


def test_a_curator_reviews_with_the_keyboard(server: tuple[Served, str, Path]) -> None:
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (.ci/run installs Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    served, token, root = server
    url = served.url
    api = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
    ARTIFACTS.mkdir(exist_ok=True)
    errors: list[str] = []
    times: list[float] = []
    decided: dict[str, str] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        # Without the page's Content-Security-Policy: escaping alone must keep the
        # markup in a note inert (and the test may evaluate its own expressions).
        page = browser.new_page(viewport={"width": 1400, "height": 900}, bypass_csp=True)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("dialog", lambda d: (errors.append("alert: " + d.message), d.dismiss()))
        page.goto(url + "#token=" + token)
        page.wait_for_selector("#detail h2")
        assert "token=" not in page.url  # taken out of the address at once
        assert page.inner_text("#who").startswith("Curator Cy")
        page.screenshot(path=str(ARTIFACTS / "review-queue.png"))

        def current_id() -> str:
            return page.get_attribute(".item.current", "data-id") or ""

        def decide(keys: list[str], expect: str) -> None:
            target = current_id()
            n = len(decided) + 1
            started = time.perf_counter()
            for key in keys:
                if key.startswith("type:"):
                    page.keyboard.type(key[5:])
                elif key.startswith("select:"):
                    page.select_option("#e-predicate", key[7:])
                else:
                    page.keyboard.press(key)
            page.wait_for_function(f"document.body.dataset.decisions === '{n}'")
            times.append(time.perf_counter() - started)
            decided[target] = expect

        decide(["a"], "accepted")
        decide(["r", "type:not what the sentence says", "Enter"], "rejected")
        view = api.get(f"/api/statements/{current_id()}").json()
        other = "causes" if view["triple"]["predicate"] != "causes" else "treats"
        decide(["e", f"select:{other}", "Tab", "Tab", "Tab", "Tab", "type:the verb is causal",
                "Enter"], "edited")
        for i in range(DECISIONS - 3):  # the rest: mostly accept, every fifth rejected
            if i % 5 == 4:
                decide(["r", "type:too vague", "Enter"], "rejected")
            else:
                decide(["a"], "accepted")
        assert errors == []
        states = {t: api.get(f"/api/statements/{t}").json()["triple"]["review"]
                  for t in decided}
        assert states == decided
        log = api.get("/api/audit").json()
        assert len(log) == DECISIONS and {d["reviewer"] for d in log} == {"Curator Cy"}
        assert "not what the sentence says" in {d["reason"] for d in log}

        # Undo the last decision with the keyboard.
        last = log[-1]
        page.keyboard.press("u")
        page.wait_for_function("document.getElementById('status').textContent.startsWith('undone')")
        assert api.get(f"/api/statements/{last['target']}").json()["triple"]["review"] == \
            "proposed"
        decided.pop(last["target"])

        # The entity page: rename the head of the accepted statement.
        first = next(t for t, s in decided.items() if s == "accepted")
        head = api.get(f"/api/statements/{first}").json()["head"]
        page.goto(url + f"#/entity/{head['id']}")
        page.wait_for_selector("#view-entity h2")
        page.fill("#ent-name", head["name"] + " (reviewed)")
        page.fill("#ent-reason", "house style")
        page.click("#ent-rename")
        page.wait_for_function("(document.querySelector('#view-entity h2')?.textContent ?? '')"
                               ".includes('(reviewed)')")
        page.screenshot(path=str(ARTIFACTS / "review-entity.png"), full_page=True)

        # Markup in a note is shown as text, in the queue's evidence and the document.
        docs = api.get("/api/documents").json()
        hostile = next(d for d in docs if d["source"].endswith("note-hostile.txt"))
        page.goto(url + f"#/doc/{hostile['id']}/0-10")
        page.wait_for_selector("#view-doc pre")
        assert "<script>window.__pwned = 1</script>" in page.inner_text("#view-doc pre")
        line = api.get("/api/statements", params={"document": hostile["id"]}).json()["items"]
        assert line, "the note with markup yields a statement"
        tid = line[0]["triple"]["id"]
        page.goto(url + f"#/statement/{tid}")
        page.wait_for_function(f"document.getElementById('detail').textContent.includes('{tid}')")
        assert "<img src=x onerror=" in page.inner_text("#detail .quote")
        assert page.evaluate("window.__pwned === undefined")
        assert page.locator("#view-doc script, #detail img").count() == 0
        # An answer on the page: its conditions, each cited, drawn as text.
        page.goto(url + "#/ask")
        page.fill("#ask-input", "What is lisinopril used to treat, and when should it be avoided?")
        page.press("#ask-input", "Enter")
        page.wait_for_selector("#answer ol.citations")
        assert page.locator("#answer ul.conditions li").count() >= 1
        assert "[" in page.inner_text("#answer ul.conditions")
        page.goto(url + "#/audit")
        page.wait_for_selector("table.audit")
        # A header row, the 20 decisions, the undo and the rename.
        assert page.locator("table.audit tr").count() == 1 + DECISIONS + 2
        browser.close()
    api.close()
    (ARTIFACTS / "review-timing.json").write_text(json.dumps({
        "decisions": len(times), "mean_s": statistics.mean(times),
        "median_s": statistics.median(times), "max_s": max(times)}, indent=2) + "\n")
    print(f"\nreview page: {len(times)} decisions by keyboard, median "
          f"{statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms per "
          "decision (key press to the next item shown)")
    assert errors == []
    served.stop()
    assert served.proc.returncode == 0
    _after_the_server(root, decided)


def _after_the_server(root: Path, decided: dict[str, str]) -> None:
    """Once the server is stopped: a rebuild keeps every decision; the export of
    accepted statements holds exactly what was accepted (and the edit's version)."""
    assert not WorkspaceLayout(root).server.exists()  # the server removed it on the way out
    built = runner.invoke(cli, ["build", "-w", str(root)])
    assert built.exit_code == 0, built.output
    with Workspace.open(root) as ws:
        for triple_id, state in decided.items():
            assert ws.store.triple(triple_id).review is ReviewState(state)
    out = root.parent / "accepted.nq"
    exported = runner.invoke(cli, ["export", str(out), "-f", "nq", "--reviewed", "accepted",
                                   "-w", str(root)])
    assert exported.exit_code == 0, exported.output
    text = out.read_text()
    for triple_id, state in decided.items():
        node = f"/statement/{triple_id}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
        assert (node in text) == (state == "accepted"), (triple_id, state)
