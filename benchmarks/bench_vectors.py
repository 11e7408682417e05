"""Embedding, index and linking at scale: exact search vs HNSW side by side.

    python benchmarks/bench_vectors.py [--entities 100000] [--queries 500]

Entities are made from the default vocabulary's terms (each name and synonym,
``name; group; definition``, as medkg embeds entities), so the text is real
medical vocabulary; no ../shared data is needed. One run embeds them with the
bundled sentence-transformers model (cold cache, batch 64), builds both
indexes over the same vectors, and measures:

- embedding throughput (entities per second);
- index build time and size on disk (``.npz`` vectors; ``.usearch`` graph);
- query latency p50 / p95 for top-10, and the HNSW's recall@10 against exact;
- linking throughput: ``definition_of`` candidates (top-10 concepts) for
  every entity against an index of all concepts, exact vs HNSW.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entities", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=500)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from medkg.config import EmbeddingConfig
    from medkg.linking.embeddings import SentenceTransformerEmbedder
    from medkg.linking.vectors import VectorIndex
    from medkg.ontology.loaders import load_default

    concepts = load_default().concepts
    texts: list[str] = []
    for c in concepts:
        for term in c.terms():
            texts.append(f"{term}; {c.semantic_group or ''}; {(c.definition or '')[:160]}")
            if len(texts) == args.entities:
                break
        if len(texts) == args.entities:
            break
    concept_texts = [f"{c.name}; {c.semantic_group or ''}; {(c.definition or '')[:160]}"
                     for c in concepts]
    embedder = SentenceTransformerEmbedder(EmbeddingConfig(batch_size=64))
    embedder.embed(["warm up"])
    t0 = time.perf_counter()
    vectors = embedder.embed(texts)
    t_embed = time.perf_counter() - t0
    concept_vectors = embedder.embed(concept_texts)
    ids = [f"e{i}" for i in range(len(texts))]
    rng = np.random.default_rng(0)
    queries = vectors[rng.choice(len(texts), size=args.queries, replace=False)]

    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        exact_results = []
        for name, threshold in (("exact", 10**9), ("hnsw", 1)):
            index = VectorIndex(vectors.shape[1], Path(tmp) / f"{name}.npz",
                                ann_threshold=threshold)
            t0 = time.perf_counter()
            index.upsert(ids, vectors)
            if index.uses_ann:
                index.search(queries[0], 1)  # builds the graph
            index.save()
            t_build = time.perf_counter() - t0
            size = sum(p.stat().st_size for p in Path(tmp).glob(f"{name}.*"))
            latencies, results = [], []
            for q in queries:
                t = time.perf_counter()
                results.append({k for k, _ in index.search(q, 10)})
                latencies.append((time.perf_counter() - t) * 1000)
            if name == "exact":
                exact_results = results
            recall = np.mean([len(r & e) / 10 for r, e in zip(results, exact_results,
                                                               strict=True)])
            cindex = VectorIndex(vectors.shape[1], ann_threshold=threshold)
            cindex.upsert([c.id for c in concepts], concept_vectors)
            sample = vectors[: min(len(texts), 5_000)]
            cindex.search(sample[0], 1)
            t0 = time.perf_counter()
            for v in sample:
                cindex.search(v, 10)
            per_s = len(sample) / (time.perf_counter() - t0)
            rows[name] = (t_build, size / 1e6, _pct(latencies, 50), _pct(latencies, 95),
                          recall, per_s)

    print(f"{len(texts)} entities from the default vocabulary ({len(concepts)} concepts), "
          f"dimension {vectors.shape[1]}")
    print(f"embedding: {len(texts) / t_embed:.0f} entities/s ({t_embed:.0f} s, cold cache)")
    print(f"{'index':<8}{'build s':>9}{'size MB':>9}{'p50 ms':>9}{'p95 ms':>9}"
          f"{'recall@10':>11}{'links/s':>10}")
    for name, (build, size, p50, p95, recall, per_s) in rows.items():
        print(f"{name:<8}{build:>9.1f}{size:>9.1f}{p50:>9.2f}{p95:>9.2f}{recall:>11.3f}"
              f"{per_s:>10.0f}")


if __name__ == "__main__":
    main()
