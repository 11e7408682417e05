"""Curator review: decisions about statements, entities and merges, kept as
PROV-O activities in the ``review`` graph, and their effects on what the build
wrote.

- :mod:`medkg.review.decisions`: making decisions (typed, validated) and which
  of them are in force;
- :mod:`medkg.review.apply`: bringing the graph in line with the decisions in
  force, after every decision and at the end of every build, so a rebuild, a
  re-extraction or a re-ingest never undoes a curator;
- :mod:`medkg.review.queue`: what to review first, and why;
- :mod:`medkg.review.exchange`: decisions as TSV or JSONL, out and in.
"""
