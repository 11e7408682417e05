"""SSSOM mapping set (TSV with its YAML metadata block): how entities map to concepts.

Two kinds of rows:

- ``definition_of`` links, entity -> vocabulary concept: ``skos:exactMatch``
  when the link rests on normalisation (the entity's name or synonym resolved to
  the concept, then checked by embedding), ``skos:closeMatch`` when it rests on
  embedding similarity alone; justification ``semapv:LexicalMatching`` or
  ``semapv:SemanticSimilarityThresholdMatching``; ``confidence`` is the link's score.
- ``same_as`` merges from entity resolution, entity -> entity, ``skos:exactMatch``
  with ``semapv:SemanticSimilarityThresholdMatching`` (``different_from``, a curator's
  split, is written with ``predicate_modifier: Not``).

Entities are CURIEs ``MEDKGENT:<id>`` (``<base>entity/``); every prefix used is
in the ``curie_map``, with the Bioregistry's IRI. Rows stream to a temporary
file, and the metadata block, which names the prefixes, is written before them.
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

from medkg import identifiers
from medkg.export.files import atomic_file
from medkg.export.view import ConceptInfo, ExportReport, GraphView
from medkg.model import LinkKind

ENTITY_PREFIX = "MEDKGENT"
COLUMNS = ("subject_id", "subject_label", "subject_category", "predicate_id",
           "predicate_modifier", "object_id", "object_label", "object_category",
           "mapping_justification", "confidence", "mapping_tool", "comment")
_STANDARD = {"skos": "http://www.w3.org/2004/02/skos/core#",
             "semapv": "https://w3id.org/semapv/vocab/",
             "owl": "http://www.w3.org/2002/07/owl#",
             "biolink": "https://w3id.org/biolink/vocab/"}


def write_sssom(view: GraphView, path: Path, *, overwrite: bool = False) -> ExportReport:
    report = ExportReport(str(path), "sssom")
    entities = {e.id: (e.name, view.entity_category(e)) for e in view.entities()}
    info = view.concept_info()
    prefixes: dict[str, str] = {}
    rows_path = path.with_name(path.name + ".rows")
    try:
        with rows_path.open("w", encoding="utf-8", newline="") as rows_file:
            rows = csv.writer(rows_file, delimiter="\t", lineterminator="\n")
            for link in view.links():
                source = entities.get(link.source)
                if source is None:
                    continue
                row = _row(view, link.kind, *source, link.target, link.score, link.method,
                           entities, info, prefixes)
                if row is None:
                    continue
                rows.writerow([f"{ENTITY_PREFIX}:{link.source}", *row])
                report.mappings += 1
        prefixes[ENTITY_PREFIX] = str(view.iris.node("entity", ""))
        with atomic_file(path, overwrite=overwrite) as tmp, \
                tmp.open("w", encoding="utf-8", newline="") as out:
            out.write(f"# mapping_set_id: {view.iris.base}mappings/sssom.tsv\n"
                      "# mapping_set_description: medkg entities mapped to vocabulary "
                      "concepts (definition_of) and to each other (entity resolution)\n"
                      "# license: https://creativecommons.org/publicdomain/zero/1.0/\n"
                      "# mapping_tool: medkg\n"
                      "# curie_map:\n")
            for prefix, iri in sorted({**_STANDARD, **prefixes}.items()):
                out.write(f"#   {prefix}: {iri}\n")
            out.write("\t".join(COLUMNS) + "\n")
            with rows_path.open(encoding="utf-8") as rows_in:
                shutil.copyfileobj(rows_in, out)
    finally:
        rows_path.unlink(missing_ok=True)
    return report


def _row(view: GraphView, kind: LinkKind, label: str, category: str, target: str,
         score: float, method: str, entities: dict[str, tuple[str, str]],
         info: dict[str, ConceptInfo], prefixes: dict[str, str]) -> list[str] | None:
    """The columns after ``subject_id`` for one link, or None for a kind not mapped."""
    modifier = ""
    if kind is LinkKind.DEFINITION_OF:
        concept = info.get(target)
        prefix = target.split(":", 1)[0]
        iri = identifiers.uri_prefix(prefix) if prefix != "MEDKG" else None
        prefixes[prefix] = iri or str(view.iris.concept(f"{prefix}:"))
        lexical = method.startswith(("normalisation", "concept"))
        predicate = "skos:exactMatch" if lexical else "skos:closeMatch"
        justification = ("semapv:LexicalMatching" if lexical
                         else "semapv:SemanticSimilarityThresholdMatching")
        object_id = target
        object_label = concept.name if concept else ""
        object_category = concept.category if concept else ""
    elif kind in (LinkKind.SAME_AS, LinkKind.DIFFERENT_FROM):
        other = entities.get(target)
        if other is None:
            return None
        predicate, justification = "skos:exactMatch", "semapv:SemanticSimilarityThresholdMatching"
        modifier = "Not" if kind is LinkKind.DIFFERENT_FROM else ""
        if kind is LinkKind.DIFFERENT_FROM:
            justification = "semapv:ManualMappingCuration"
        object_id, (object_label, object_category) = f"{ENTITY_PREFIX}:{target}", other
    else:
        return None
    return [label, category, predicate, modifier, object_id, object_label, object_category,
            justification, f"{min(max(score, 0.0), 1.0):.4f}", "medkg", f"{kind.value} ({method})"]
