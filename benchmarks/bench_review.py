"""A curator's time per decision on the review page, and what it costs the API.

    python benchmarks/bench_review.py --workspace .medkg-demo --decisions 20

Copies the workspace (``--in-place`` uses it as it is), starts ``medkg serve`` on
it, and reviews ``--decisions`` statements in headless Chromium (Debian's
``/usr/bin/chromium``, driven by Playwright) with the keyboard only: ``a``
accepts, every fifth is ``r`` rejected with a typed reason, the third is ``e``
edited (another predicate). Each decision is timed from the key press to the
next item shown. In the same run, the API calls one decision makes are timed
alone (record the decision; reload the queue; open the next statement), as the
baseline the page's own cost is read against. Then the server is stopped,
``medkg build`` runs, ``medkg export --reviewed accepted`` writes the graph, and
every decision is checked to have held.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _start(medkg: Path, root: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([str(medkg), "serve", "-w", str(root), "--port", "0"],
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "300"})
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
        if found:
            return proc, found.group(1)
    proc.kill()
    sys.exit("the server did not start")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--decisions", type=int, default=20)
    parser.add_argument("--in-place", action="store_true")
    parser.add_argument("--screenshots", type=Path, default=None,
                        help="directory for screenshots of the queue and an entity page")
    args = parser.parse_args()
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        sys.exit("skip: /usr/bin/chromium is not installed (apt-get install chromium)")
    import httpx
    from playwright.sync_api import sync_playwright

    from medkg.layout import WorkspaceLayout
    from medkg.server.access import add_token

    medkg = Path(sys.executable).parent / "medkg"
    tmp = Path(tempfile.mkdtemp(prefix="bench-review-"))
    root = args.workspace if args.in_place else Path(shutil.copytree(args.workspace,
                                                                     tmp / "ws"))
    token = add_token(WorkspaceLayout(root), "bench curator")
    proc, url = _start(medkg, root)
    api = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120)
    page_times: list[float] = []
    decided: dict[str, str] = {}
    try:
        queue_total = api.get("/api/queue", params={"limit": 1}).json()["total"]
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 900}, bypass_csp=True)
            page.goto(url + "#token=" + token)
            page.wait_for_selector("#detail h2")
            page.select_option("#f-kind", "statement")  # merges are not timed here
            page.wait_for_function("[...document.querySelectorAll('.item')]"
                                   ".every((li) => li.dataset.id.startsWith('tri-'))")
            if args.screenshots:
                args.screenshots.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(args.screenshots / "queue.png"))
            for i in range(args.decisions):
                target = page.get_attribute(".item.current", "data-id") or ""
                if not target:
                    break
                started = time.perf_counter()
                if i == 2:
                    view = api.get(f"/api/statements/{target}").json()
                    other = "causes" if view["triple"]["predicate"] != "causes" else "treats"
                    page.keyboard.press("e")
                    page.select_option("#e-predicate", other)
                    for _ in range(4):
                        page.keyboard.press("Tab")
                    page.keyboard.type("the verb is causal")
                    page.keyboard.press("Enter")
                    decided[target] = "edited"
                elif i % 5 == 4:
                    page.keyboard.press("r")
                    page.keyboard.type("not what the sentence says")
                    page.keyboard.press("Enter")
                    decided[target] = "rejected"
                else:
                    page.keyboard.press("a")
                    decided[target] = "accepted"
                page.wait_for_function(f"document.body.dataset.decisions === '{i + 1}'")
                page_times.append(time.perf_counter() - started)
            if args.screenshots and decided:
                head = api.get(f"/api/statements/{next(iter(decided))}").json()["head"]["id"]
                page.goto(url + f"#/entity/{head}")
                page.wait_for_selector("#view-entity h2")
                page.screenshot(path=str(args.screenshots / "entity.png"), full_page=True)
            browser.close()
        # The baseline, same server, same run: the API calls behind one decision.
        api_times: dict[str, list[float]] = {"POST /api/review": [], "GET /api/queue": [],
                                             "GET /api/statements/{id}": []}
        items = api.get("/api/queue", params={"limit": args.decisions,
                                              "kind": "statement"}).json()["items"]
        for item in [i for i in items if i["kind"] == "statement"]:
            for name, call in (
                    ("POST /api/review", lambda i=item: api.post("/api/review", json={
                        "action": "accept", "target": i["id"]})),
                    ("GET /api/queue", lambda: api.get("/api/queue", params={
                        "limit": 500, "kind": "statement"})),
                    ("GET /api/statements/{id}", lambda i=item: api.get(
                        f"/api/statements/{i['id']}"))):
                t0 = time.perf_counter()
                call().raise_for_status()
                api_times[name].append(time.perf_counter() - t0)
            decided[item["id"]] = "accepted"
    finally:
        api.close()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    t0 = time.perf_counter()
    built = subprocess.run([str(medkg), "build", "-w", str(root)], capture_output=True, text=True)
    build_s = time.perf_counter() - t0
    if built.returncode != 0:
        sys.exit(f"medkg build failed: {built.stderr}")
    out = tmp / "accepted.nq"
    subprocess.run([str(medkg), "export", str(out), "-f", "nq", "--reviewed", "accepted",
                    "-w", str(root)], check=True, capture_output=True)
    text = out.read_text()
    from medkg.model import ReviewState
    from medkg.workspace import Workspace

    with Workspace.open(root) as ws:
        held = sum(ws.store.triple(t).review is ReviewState(s) for t, s in decided.items())
    typed = "> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
    exported = sum((f"/statement/{t}{typed}" in text) == (s == "accepted")
                   for t, s in decided.items())

    print(f"workspace {args.workspace} ({queue_total} items in the queue), "
          f"{len(page_times)} decisions on the page by keyboard")
    print("| what | n | p50 ms | p95 ms | max ms |")
    print("|---|---|---|---|---|")
    rows = [("page: key press to the next item shown", page_times)]
    rows += [(f"API alone: {name}", values) for name, values in api_times.items()]
    for label, values in rows:
        if values:
            print(f"| {label} | {len(values)} | {statistics.median(values) * 1000:.0f} | "
                  f"{_pct(values, 0.95) * 1000:.0f} | {max(values) * 1000:.0f} |")
    print(f"after the server stopped: medkg build {build_s:.1f} s; decisions held in the store "
          f"{held}/{len(decided)}; in the accepted-only export as decided "
          f"{exported}/{len(decided)}")
    if held != len(decided) or exported != len(decided):
        sys.exit(1)


if __name__ == "__main__":
    main()
