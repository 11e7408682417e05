"""What a question and a curator's decision cost the store: round trips and time.

    python benchmarks/bench_readmodel.py                       # the demo workspace
    python benchmarks/bench_readmodel.py --workspace WS --questions q.txt --decisions 20

Seconds drift on a shared two-core machine; round trips do not. For each mode
(hybrid, u-retrieval, traverse) every question is asked once on one open
workspace and one retriever, through a store wrapped to count its calls: p50 and
p95 milliseconds, store calls per question (mean and max) and the methods most
called; then hybrid again with a new retriever a question, as ``medkg ask`` does. Then, on a
copy of the workspace, ``--decisions`` curator decisions (accept, on proposed
statements) are recorded one by one: p50 / p95 milliseconds and store calls per
decision. Last, a cold ``medkg ask`` (a new process, as a user types it): its
wall time.

This is the "before" of the store issue (typed tables as the source of truth):
the same script on the commit before and after that work, same data, same
machine, gives its comparison. Without ``--workspace`` the demo (``examples/``,
seed vocabulary) is built once under ``--root``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
DEMO_QUESTIONS = [
    "What is the first-line treatment for type 2 diabetes, and what are its risks?",
    "What can cause a dry cough?",
    "How is atrial fibrillation confirmed and how is stroke prevented?",
    "What are the symptoms of heart failure?",
    "Which drug is used to treat community-acquired pneumonia?",
    "What are the side effects of lisinopril?",
    "Can I give metformin in chronic kidney disease?",
    "Which drugs treat the conditions that furosemide can cause?",
]
MODES = ("hybrid", "u-retrieval", "traverse")


class CountingStore:
    """A store that counts the calls made to it (by method name), else the store."""

    def __init__(self, store: Any) -> None:
        self._inner = store
        self.calls: Counter[str] = Counter()

    def engine_trips(self) -> int | None:
        """Statements sent to the database engine (the table store counts them;
        an RDF store's calls are quad-pattern lookups it does not count)."""
        return getattr(self._inner, "round_trips", None)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if not callable(value):
            return value
        calls = self.calls

        def counted(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return value(*args, **kwargs)

        return counted


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


ENGINE: list[int] = []  # engine statements of each measured call, where counted


def _measure(run: Callable[[], object], counter: CountingStore) -> tuple[float, int]:
    before, engine = sum(counter.calls.values()), counter.engine_trips()
    t0 = time.perf_counter()
    run()
    ms = (time.perf_counter() - t0) * 1000
    if engine is not None:
        ENGINE.append((counter.engine_trips() or 0) - engine)
    return ms, sum(counter.calls.values()) - before


def demo_workspace(root: Path) -> Path:
    from medkg.model import Layer
    from medkg.workspace import Workspace

    if (root / "medkg.toml").exists():
        return root
    with Workspace.create(root) as ws:
        ws.load_vocabulary(REPO / "examples" / "vocabulary" / "medkg-seed.obo")
        ws.ingest([REPO / "examples" / "literature"], Layer.LITERATURE)
        ws.ingest([REPO / "examples" / "user"], Layer.USER)
        ws.build()
    return root


def questions_and_modes(ws_root: Path, questions: list[str]) -> None:
    from medkg.workspace import Workspace

    print("mode | questions | p50 ms | p95 ms | store calls: mean | max | SQL statements: "
          "mean | max | most called")
    print("---|---|---|---|---|---|---|---|---")
    with Workspace.open(ws_root, access="read") as ws:
        counter = CountingStore(ws.store)
        ws.parts._store = counter  # type: ignore[assignment]  # the retriever reads through it
        retriever = ws.retriever()
        ws.ask(questions[0], mode="hybrid", retriever=retriever)  # models loaded once
        for mode in MODES:
            counter.calls.clear()
            ENGINE.clear()
            times, trips = [], []
            for q in questions:
                ms, n = _measure(lambda q=q, m=mode: ws.ask(q, mode=m, retriever=retriever),
                                 counter)
                times.append(ms)
                trips.append(n)
            _row(mode, times, trips, counter)
        # as `medkg ask` and `Workspace.ask` without a retriever do: a new one a question
        counter.calls.clear()
        ENGINE.clear()
        times, trips = [], []
        for q in questions:
            ms, n = _measure(lambda q=q: ws.ask(q, mode="hybrid"), counter)
            times.append(ms)
            trips.append(n)
        _row("hybrid, a new retriever a question", times, trips, counter)


def _row(label: str, times: list[float], trips: list[int], counter: CountingStore) -> None:
    top = ", ".join(f"{k} {v}" for k, v in counter.calls.most_common(4))
    engine = (f"{statistics.mean(ENGINE):.0f} | {max(ENGINE)}" if ENGINE else "- | -")
    print(f"{label} | {len(times)} | {statistics.median(times):.0f} | "
          f"{_percentile(times, 0.95):.0f} | {statistics.mean(trips):.0f} | {max(trips)} | "
          f"{engine} | {top}")


def decisions(ws_root: Path, n: int, scratch: Path) -> None:
    from medkg.model import Layer, ReviewAction, ReviewState
    from medkg.pipeline.review import Request
    from medkg.workspace import Workspace

    copy = scratch / "decisions-ws"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(ws_root, copy)
    with Workspace.open(copy) as ws:
        counter = CountingStore(ws.store)
        ws.parts._store = counter  # type: ignore[assignment]
        targets = [t.id for layer in (Layer.USER, Layer.LITERATURE)
                   for t in ws.store.triples(layer) if t.review is ReviewState.PROPOSED][:n]
        counter.calls.clear()
        ENGINE.clear()
        times, trips = [], []
        for tid in targets:
            ms, calls = _measure(lambda tid=tid: ws.review(
                Request(ReviewAction.ACCEPT, tid, "benchmark"), "bench"), counter)
            times.append(ms)
            trips.append(calls)
    shutil.rmtree(copy, ignore_errors=True)
    if not times:
        print("\nno proposed statement to decide on")
        return
    top = ", ".join(f"{k} {v}" for k, v in counter.calls.most_common(4))
    engine = f"SQL statements mean {statistics.mean(ENGINE):.0f} | " if ENGINE else ""
    print(f"\ncurator decisions (accept) | {len(times)} | p50 {statistics.median(times):.0f} ms"
          f" | p95 {_percentile(times, 0.95):.0f} ms | store calls mean "
          f"{statistics.mean(trips):.0f}, max {max(trips)} | {engine}{top}")


def cold_ask(ws_root: Path, question: str) -> None:
    medkg = Path(sys.executable).with_name("medkg")
    t0 = time.perf_counter()
    done = subprocess.run([str(medkg), "ask", question, "-w", str(ws_root), "--mode", "hybrid"],
                          capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    state = "ok" if done.returncode == 0 else f"exit {done.returncode}: {done.stderr[-300:]}"
    print(f"cold `medkg ask` (a new process, hybrid) | {seconds:.1f} s | {state}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", type=Path, help="a built workspace (default: the demo)")
    parser.add_argument("--root", type=Path, default=Path("/tmp/medkg-readmodel"),
                        help="where the demo workspace and scratch copies go")
    parser.add_argument("--questions", type=Path, help="a file of questions, one a line")
    parser.add_argument("--decisions", type=int, default=20)
    args = parser.parse_args()
    args.root.mkdir(parents=True, exist_ok=True)
    ws_root = args.workspace or demo_workspace(args.root / "demo")
    questions = ([line.strip() for line in args.questions.read_text().splitlines()
                  if line.strip()] if args.questions else DEMO_QUESTIONS)
    print(f"workspace {ws_root}\n")
    questions_and_modes(ws_root, questions)
    decisions(ws_root, args.decisions, args.root)
    cold_ask(ws_root, questions[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
