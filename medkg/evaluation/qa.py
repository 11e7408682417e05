"""Question answering benchmarks: BioASQ task B and PubMedQA.

A dataset file becomes a workspace of its own texts: for BioASQ the gold
snippets of every question in the file (or directory of files), pooled and
deduplicated, one document each, so a question's evidence is hidden among
all the others'; for PubMedQA each question's abstract (its contexts joined).
Every question is then asked; the mode's full candidate ranking (the trace's
``ranking``, ``retrieval.candidates`` chunks) is mapped to documents and judged
against the question's gold documents (recall@10, MRR, nDCG@10), and the
chunks the answer cites are judged on their own (citation precision: the share
of cited documents that are gold).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from medkg.errors import MedKGError
from medkg.retrieval.answer import Answer

if TYPE_CHECKING:
    from medkg.workspace import Workspace

K = 10


class QAFormatError(MedKGError):
    pass


@dataclass(frozen=True)
class QADocument:
    key: str
    title: str
    text: str


@dataclass(frozen=True)
class QAItem:
    id: str
    question: str
    type: str  # yesno, factoid, list, summary
    gold: frozenset[str]  # document keys
    yesno: str | None = None  # yes / no (/ maybe for PubMedQA)
    ideal: tuple[str, ...] = ()  # BioASQ ideal answers (reference summaries)
    exact: tuple[tuple[str, ...], ...] = ()  # factoid/list: answers, each with synonyms


@dataclass
class QADataset:
    documents: list[QADocument]
    items: list[QAItem]


def _key(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).encode()).hexdigest()[:16]


def _files(path: Path) -> list[Path]:
    files = sorted(path.rglob("*.json")) if path.is_dir() else [path]
    if not files:
        raise QAFormatError(f"{path}: no .json files")
    return files


def read_bioasq(path: Path) -> QADataset:
    docs: dict[str, QADocument] = {}
    items: list[QAItem] = []
    for file in _files(path):
        try:
            questions = json.loads(file.read_text(encoding="utf-8"))["questions"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise QAFormatError(f"{file}: not a BioASQ file ({exc})",
                                hint="expected {\"questions\": [...]}") from exc
        for q in questions:
            gold = set()
            for snippet in q.get("snippets") or []:
                text = " ".join(str(snippet.get("text", "")).split())
                if not text:
                    continue
                key = _key(text)
                gold.add(key)
                pmid = str(snippet.get("document", "")).rsplit("/", 1)[-1]
                docs.setdefault(key, QADocument(key, f"PubMed {pmid} snippet", text))
            if not gold or not q.get("body"):
                continue
            exact = q.get("exact_answer")
            yesno = exact.strip().lower() if q.get("type") == "yesno" and isinstance(
                exact, str) else None
            ideal = q.get("ideal_answer") or []
            ideal = [ideal] if isinstance(ideal, str) else ideal
            items.append(QAItem(str(q.get("id", len(items))), str(q["body"]),
                                str(q.get("type", "")), frozenset(gold), yesno,
                                tuple(str(x) for x in ideal if str(x).strip()),
                                _exact_answers(q.get("type"), exact)))
    return QADataset(sorted(docs.values(), key=lambda d: d.key), items)


def _exact_answers(kind: object, exact: object) -> tuple[tuple[str, ...], ...]:
    """Factoid: one answer with its synonyms (``["a", "b"]`` or ``[["a", "b"]]``);
    list: several answers, each a list of synonyms."""
    if kind not in ("factoid", "list") or not isinstance(exact, list):
        return ()
    if kind == "factoid":
        flat = [x for e in exact for x in (e if isinstance(e, list) else [e])]
        return (tuple(str(x) for x in flat if str(x).strip()),) if flat else ()
    return tuple(tuple(str(x) for x in (e if isinstance(e, list) else [e]) if str(x).strip())
                 for e in exact)


def read_pubmedqa(path: Path) -> QADataset:
    docs: list[QADocument] = []
    items: list[QAItem] = []
    for file in _files(path):
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            records = sorted(data.items())
        except (OSError, ValueError, AttributeError) as exc:
            raise QAFormatError(f"{file}: not a PubMedQA file ({exc})",
                                hint="expected {PMID: {QUESTION, CONTEXTS, ...}}") from exc
        for pmid, r in records:
            try:
                text = "\n".join(str(c) for c in r["CONTEXTS"])
                question = str(r["QUESTION"])
            except (KeyError, TypeError) as exc:
                raise QAFormatError(f"{file}: record {pmid} lacks QUESTION/CONTEXTS") from exc
            docs.append(QADocument(str(pmid), f"PubMed {pmid}", text))
            items.append(QAItem(str(pmid), question, "yesno", frozenset({str(pmid)}),
                                r.get("final_decision")))
    return QADataset(docs, items)


READERS: dict[str, Callable[[Path], QADataset]] = {"bioasq": read_bioasq,
                                                   "pubmedqa": read_pubmedqa}



class FailedQuestion(BaseModel):
    question: str
    error: str


class QAReport(BaseModel):
    questions: int
    mode: str
    documents: int
    chunks: int
    retrieval: dict[str, float]
    answers: dict[str, float | int | None]
    latency_ms: dict[str, float]
    failed: list[FailedQuestion] = []  # asked, but medkg raised an error: not scored



def score_ranking(ranked: Sequence[str], gold: frozenset[str]) -> tuple[float, float, float]:
    """recall@10, reciprocal rank and nDCG@10 of one ranked list of document keys."""
    top = list(dict.fromkeys(ranked))[:K]
    hits = [1.0 if key in gold else 0.0 for key in top]
    recall = sum(hits) / len(gold)
    rr = next((1.0 / (i + 1) for i, h in enumerate(hits) if h), 0.0)
    dcg = sum(h / math.log2(i + 2) for i, h in enumerate(hits))
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), K)))
    return recall, rr, dcg / ideal


_MARK = re.compile(r"\s*\[\d+\]")


def answer_text(answer: Answer) -> str:
    """The answer's prose without its citation marks."""
    return _MARK.sub("", answer.text).strip()


def rouge(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, float]:
    """Mean ROUGE-2 and ROUGE-SU4 F1 (skip gap 4, as BioASQ scores ideal answers),
    each hypothesis against all its references (``rouge-metric``'s Python port of
    ROUGE-1.5.5)."""
    from rouge_metric import PyRouge

    pairs = [(h, list(r)) for h, r in zip(hypotheses, references, strict=True) if r]
    if not pairs:
        return {"rouge2_f": 0.0, "rougesu4_f": 0.0}
    scorer = PyRouge(rouge_n=(2,), rouge_l=False, rouge_su=True, skip_gap=4)
    r2 = su4 = 0.0
    for hypothesis, refs in pairs:
        scores = scorer.evaluate([hypothesis or "-"], [refs])
        r2 += scores["rouge-2"]["f"]
        su4 += scores["rouge-su4"]["f"]
    return {"rouge2_f": round(r2 / len(pairs), 4), "rougesu4_f": round(su4 / len(pairs), 4)}


def exact_hit(item: QAItem, answer: Answer) -> bool:
    """Whether any gold exact answer (any synonym) is in a sentence the answer cites."""
    quoted = " ".join(c.quote for c in answer.citations).lower()
    return any(syn.lower() in quoted for group in item.exact for syn in group if len(syn) > 1)


def yes_or_no(answer: Answer) -> str | None:
    """The yes/no an answer gives, when its *generated* text starts with one; an
    extractive answer quotes its sources and says neither (a quote that happens
    to begin with "No" is not an answer)."""
    if not answer.mode.endswith("+llm"):
        return None
    first = answer.text.strip().lower().split(maxsplit=1)
    if first and first[0].strip(".,;:!") in ("yes", "no"):
        return first[0].strip(".,;:!")
    return None


def run_questions(items: Sequence[QAItem], ask: Callable[[str], Answer],
                  document_key: Callable[[str], str | None], mode: str, documents: int,
                  chunks: int, progress: Callable[[int, int], None]) -> QAReport:
    """Ask every question, timing each, and score the answers. A question medkg
    fails on is recorded with its error and left out of the scores; the others
    are still asked (one bad question never loses a whole run's results)."""
    answers, latencies, answered = [], [], []
    failed: list[FailedQuestion] = []
    for i, item in enumerate(items):
        progress(i, len(items))
        start = time.perf_counter()
        try:
            answers.append(ask(item.question))
        except MedKGError as exc:
            failed.append(FailedQuestion(question=item.question, error=exc.message))
            continue
        answered.append(item)
        latencies.append((time.perf_counter() - start) * 1000)
    progress(len(items), len(items))
    report = score_answers(answered, answers, latencies, document_key, mode, documents,
                           chunks)
    return report.model_copy(update={"failed": failed})


def question_terms(answer: Answer, names_of: Callable[[str], Sequence[str]]) -> frozenset[str]:
    """What an on-topic sentence names: the question's concepts (every name the
    vocabulary gives them, ``names_of``) and their direct neighbours in the facts
    the answer lists (the other end of a fact that touches a question concept)."""
    own = {n.lower() for cid in answer.trace.question_concepts for n in names_of(cid)}
    out = set(own)
    for f in answer.facts:
        ends = (f.head.lower(), f.tail.lower())
        if ends[0] in own or ends[1] in own:
            out.update(ends)
    return frozenset(t for t in out if len(t) > 2)


def on_topic_share(answer: Answer, terms: frozenset[str]) -> float | None:
    """The share of the answer's sentences that name one of ``terms`` (whole words,
    any case); ``None`` for a question without terms or an answer without sentences."""
    if not terms or not answer.sentences:
        return None
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(t) for t in sorted(terms))
                         + r")(?!\w)", re.IGNORECASE)
    return sum(1 for s in answer.sentences if pattern.search(s.text)) / len(answer.sentences)


def score_answers(items: Sequence[QAItem], answers: Sequence[Answer],
                  latencies_ms: Sequence[float], document_key: Callable[[str], str | None],
                  mode: str, documents: int, chunks: int,
                  terms: Sequence[frozenset[str]] | None = None) -> QAReport:
    """Retrieval (the full ranking), citation precision, yes/no accuracy, ROUGE
    against the ideal answers, exact-answer hits, latency and, given each
    question's ``terms`` (:func:`question_terms`), the on-topic share."""
    recalls, rrs, ndcgs, precisions = [], [], [], []
    yn_total = yn_right = yn_answered = 0
    for item, answer in zip(items, answers, strict=True):
        ranked = [k for c in (answer.trace.ranking or answer.trace.retrieved_chunks)
                  if (k := document_key(c)) is not None]
        r, rr, nd = score_ranking(ranked, item.gold)
        recalls.append(r)
        rrs.append(rr)
        ndcgs.append(nd)
        cited = {k for c in answer.citations if (k := document_key(c.chunk_id)) is not None}
        if cited:
            precisions.append(len(cited & item.gold) / len(cited))
        if item.yesno in ("yes", "no"):
            yn_total += 1
            said = yes_or_no(answer)
            if said is not None:
                yn_answered += 1
                yn_right += int(said == item.yesno)
    n = max(1, len(items))
    lat = sorted(latencies_ms) or [0.0]
    texts = [answer_text(a) for a in answers]
    by_type: dict[str, float | int | None] = {}
    for kind in ("summary", "list", "factoid", "yesno"):
        chosen = [i for i, item in enumerate(items) if item.type == kind and item.ideal]
        if chosen:
            scores = rouge([texts[i] for i in chosen], [items[i].ideal for i in chosen])
            by_type[f"{kind}_rouge2_f"] = scores["rouge2_f"]
            by_type[f"{kind}_rougesu4_f"] = scores["rougesu4_f"]
    exact_items = [(item, a) for item, a in zip(items, answers, strict=True) if item.exact]
    if exact_items:
        by_type["exact_hit_rate"] = round(
            sum(exact_hit(i, a) for i, a in exact_items) / len(exact_items), 4)
    if terms is not None:
        shares = [x for a, t in zip(answers, terms, strict=True)
                  if (x := on_topic_share(a, t)) is not None]
        by_type["on_topic_share"] = round(sum(shares) / len(shares), 4) if shares else None
        by_type["on_topic_questions"] = len(shares)
    return QAReport(
        questions=len(items), mode=mode, documents=documents, chunks=chunks,
        retrieval={"recall@10": round(sum(recalls) / n, 4), "mrr": round(sum(rrs) / n, 4),
                   "ndcg@10": round(sum(ndcgs) / n, 4),
                   "citation_precision": round(sum(precisions) / max(1, len(precisions)), 4)},
        answers={"yesno_accuracy": round(yn_right / yn_total, 4) if yn_answered else None,
                 "yesno_questions": yn_total, "yesno_answered": yn_answered, **by_type},
        latency_ms={"p50": round(statistics.median(lat), 1),
                    "p95": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 1)},
    )


def qa_workspace(root: Path, data: QADataset, say: Callable[[str], None]) -> Workspace:
    """The workspace of a dataset's texts at ``root``: created with the default
    vocabulary the first time, then every document ingested and built (both
    skip what is already done, so a second mode reuses the first one's work)."""
    from medkg.layout import WorkspaceLayout
    from medkg.model import Layer
    from medkg.workspace import Workspace

    layout = WorkspaceLayout(root)
    fresh = not layout.config.exists()
    ws = Workspace.create(root, exist_ok=True)
    try:
        if fresh or len(ws.concept_index()) == 0:
            say("loading the default vocabulary ...")
            ws.load_vocabulary(None)
        source = layout.dataset
        source.write_text("".join(json.dumps({"id": d.key, "title": d.title, "text": d.text})
                                  + "\n" for d in data.documents), encoding="utf-8")
        say(f"{len(data.documents)} documents, {len(data.items)} questions")
        ws.ingest([source], Layer.LITERATURE)
        ws.build()
    except BaseException:
        ws.close()
        raise
    return ws


def chunk_keys(ws: Workspace) -> dict[str, str]:
    """Chunk id -> the dataset key of its document (the ``id`` the document had)."""
    from medkg.model import Layer

    out: dict[str, str] = {}
    for doc_id in ws.store.document_ids(Layer.LITERATURE):
        key = ws.store.document(doc_id).source.rsplit("#", 1)[-1]
        for chunk in ws.store.chunks(doc_id):
            out[chunk.id] = key
    return out
