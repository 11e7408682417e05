"""Biolink categories and edge properties, from versioned data (``data/biolink.toml``).

A concept's category comes from (first match wins) its UMLS semantic type, its
CURIE prefix (a vocabulary of one kind of thing), then its semantic group; an
entity's from its concepts, else its own group. ``tests/export/test_biolink.py``
checks every category, predicate and enum value of the data file against the
Biolink model release it names.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from importlib import resources

from medkg.errors import ConfigError
from medkg.model import Predicate, Qualifiers, ReviewState, Triple

NAMED_THING = "biolink:NamedThing"
INFORES = "infores:medkg"  # the knowledge source every exported statement names


@dataclass(frozen=True)
class BiolinkMap:
    version: int
    biolink_model: str
    groups: dict[str, str]
    semantic_types: dict[str, str]
    prefixes: dict[str, str]
    agent_types: dict[str, str]
    import_predicates: dict[str, str]

    def category(self, group: str | None, semantic_type: str | None = None,
                 curie: str | None = None) -> str:
        if semantic_type and semantic_type in self.semantic_types:
            return self.semantic_types[semantic_type]
        prefix = curie.split(":", 1)[0] if curie and ":" in curie else None
        if prefix and prefix in self.prefixes:
            return self.prefixes[prefix]
        return self.groups.get(group or "", NAMED_THING)

    def group_of(self, category: str) -> str | None:
        """The semantic group a Biolink category reads back as (import)."""
        for key, value in self.groups.items():
            if value == category:
                return key
        return _GROUP_OF_SPECIFIC.get(category)

    def predicate(self, biolink: str) -> Predicate | None:
        """medkg's predicate for a Biolink predicate CURIE (``biolink:treats``)."""
        local = biolink.removeprefix("biolink:")
        for p in Predicate:
            if p.biolink == local:
                return p
        name = self.import_predicates.get(f"biolink:{local}")
        return Predicate(name) if name else None

    def agent_type(self, triple: Triple) -> str:
        if triple.review is ReviewState.ACCEPTED:
            return self.agent_types["accepted"]
        method = triple.method.split(":", 1)[0]
        if triple.level > 0 and method != "curator":
            return self.agent_types["growth"]
        return self.agent_types.get(method, "not_provided")


# The group of each specific category of the data file (for `group_of` on import).
_GROUP_OF_SPECIFIC = {
    "biolink:Disease": "DISO", "biolink:PhenotypicFeature": "DISO",
    "biolink:PathologicalProcess": "DISO", "biolink:Drug": "CHEM",
    "biolink:SmallMolecule": "CHEM", "biolink:Protein": "CHEM", "biolink:Gene": "GENE",
    "biolink:GrossAnatomicalStructure": "ANAT", "biolink:Cell": "ANAT",
    "biolink:Procedure": "PROC", "biolink:OrganismTaxon": "LIVB",
    "biolink:ChemicalEntity": "CHEM", "biolink:AnatomicalEntity": "ANAT",
    "biolink:SequenceVariant": "VARI",
}


def knowledge_level(triple: Triple) -> str:
    """Biolink's knowledge_level: a statement the SAC-KG loop grew is a prediction;
    a hedged or hypothetical one is not a plain assertion."""
    q = triple.qualifiers
    if triple.level > 0:
        return "prediction"
    if q.uncertain or q.hypothetical:
        return "not_provided"
    return "knowledge_assertion"


def is_factual(q: Qualifiers) -> bool:
    """Whether a statement may stand as a plain Biolink edge: the one fact rule,
    :attr:`medkg.model.Qualifiers.is_factual`."""
    return q.is_factual


@functools.cache
def biolink_map() -> BiolinkMap:
    text = resources.files("medkg.export").joinpath("data/biolink.toml").read_text("utf-8")
    try:
        data = tomllib.loads(text)
        return BiolinkMap(
            version=int(data["version"]), biolink_model=str(data["biolink_model"]),
            groups=dict(data["groups"]), semantic_types=dict(data["semantic_types"]),
            prefixes=dict(data["prefixes"]), agent_types=dict(data["agent_types"]),
            import_predicates=dict(data["import_predicates"]))
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"medkg/export/data/biolink.toml is damaged: {exc}",
                          hint="reinstall medkg") from exc
