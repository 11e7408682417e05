"""`medkg eval qa` on a small BioASQ-format file we wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medkg.cli import app
from medkg.workspace import Workspace
from tests.conftest import SEED_OBO

pytestmark = pytest.mark.slow
runner = CliRunner()

SNIPPETS = {
    "met": "Metformin is the first-line drug treatment for type 2 diabetes.",
    "lac": "Lactic acidosis is a rare but serious adverse effect of metformin.",
    "cough": "Lisinopril can cause a dry cough in up to one in ten patients.",
    "afib": "Apixaban prevents stroke in patients with atrial fibrillation.",
    "asthma": "Inhaled corticosteroids reduce exacerbations of asthma.",
    "hf": "Furosemide relieves fluid overload in heart failure.",
}
QUESTIONS = [
    ("Which drug is first-line for type 2 diabetes?", "factoid", ["met"], None),
    ("Can lisinopril cause a cough?", "yesno", ["cough"], "yes"),
    ("What prevents stroke in atrial fibrillation?", "factoid", ["afib"], None),
]


def test_eval_qa_json_for_each_mode(tmp_path: Path) -> None:
    data = {"questions": [
        {"id": f"q{i}", "body": body, "type": kind, "exact_answer": yn,
         "snippets": [{"text": SNIPPETS[k], "document": f"http://x/pubmed/{k}"} for k in gold]}
        for i, (body, kind, gold, yn) in enumerate(QUESTIONS)]}
    # The other snippets are distractors: they belong to no question here.
    data["questions"].append({"id": "pad", "body": "Distractors", "type": "summary",
                              "snippets": [{"text": SNIPPETS[k], "document": k}
                                           for k in ("lac", "asthma", "hf")]})
    dataset = tmp_path / "mini.json"
    dataset.write_text(json.dumps(data))
    root = tmp_path / "ws"
    with Workspace.create(root) as ws:  # a small vocabulary instead of the default one
        ws.load_vocabulary(SEED_OBO)
    for mode in ("vector", "bm25", "hybrid", "local", "u-retrieval"):
        result = runner.invoke(app, ["eval", "qa", "--dataset", str(dataset), "--format",
                                     "bioasq", "--mode", mode, "-w", str(root), "--json"])
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout.strip().splitlines()[-1])
        assert report["questions"] == 4 and report["documents"] == 6
        assert set(report["retrieval"]) == {"recall@10", "mrr", "ndcg@10", "citation_precision"}
        assert report["retrieval"]["recall@10"] >= 0.75  # six documents: little to miss
        assert report["answers"]["yesno_accuracy"] is None  # the builtin engine says no yes/no
        assert report["latency_ms"]["p50"] > 0
    bad = runner.invoke(app, ["eval", "qa", "--dataset", str(dataset), "--format", "csv",
                              "-w", str(root)])
    assert bad.exit_code == 2 and "unknown format" in bad.output
