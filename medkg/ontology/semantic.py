"""Semantic groups: every concept gets one of the 15 UMLS semantic groups.

UMLS concepts carry semantic types with a tree number (STN) in MRSTY; the group
follows from the tree number by the prefix rules below (longest prefix wins).
The rules are our compression of the Semantic Network's type hierarchy and
agree with NLM's SemGroups table (checked in the tests when it is at hand).
Open ontologies without semantic types get a group from their id prefix and,
for HPO, from the branch a term sits in.
"""

from __future__ import annotations

from collections.abc import Iterable

from medkg.model import Concept

GROUPS: dict[str, str] = {
    "ACTI": "Activities & Behaviors",
    "ANAT": "Anatomy",
    "CHEM": "Chemicals & Drugs",
    "CONC": "Concepts & Ideas",
    "DEVI": "Devices",
    "DISO": "Disorders",
    "GENE": "Genes & Molecular Sequences",
    "GEOG": "Geographic Areas",
    "LIVB": "Living Beings",
    "OBJC": "Objects",
    "OCCU": "Occupations",
    "ORGA": "Organizations",
    "PHEN": "Phenomena",
    "PHYS": "Physiology",
    "PROC": "Procedures",
    # medkg's own subdivision of GENE: sequence variants, recognised by rules
    # (medkg.extraction.variants), never named by a vocabulary.
    "VARI": "Sequence Variants",
}

# Semantic Network tree number prefix -> group; the longest matching prefix wins.
STN_RULES: dict[str, str] = {
    "A": "OBJC", "A1.1": "LIVB", "A1.2": "ANAT", "A1.2.2": "DISO", "A1.2.3.5": "GENE",
    "A1.3.1": "DEVI", "A1.3.2": "DEVI", "A1.3.3": "CHEM", "A1.4.1": "CHEM", "A1.4.2": "ANAT",
    "A2": "CONC", "A2.1.4.1": "ANAT", "A2.1.5.1": "ANAT", "A2.1.5.2": "ANAT",
    "A2.1.5.3": "GENE", "A2.1.5.4": "GEOG", "A2.2": "DISO", "A2.2.1": "PHEN", "A2.3": "PHYS",
    "A2.6": "OCCU", "A2.7": "ORGA", "A2.9": "LIVB",
    "B": "ACTI", "B1.3.1": "PROC", "B1.3.2": "PROC", "B1.3.4": "PROC", "B2": "PHEN",
    "B2.2.1.1": "PHYS", "B2.2.1.2": "DISO", "B2.3": "DISO",
}

# Whole ontologies whose terms share one group.
PREFIX_GROUPS: dict[str, str] = {
    "DOID": "DISO", "MONDO": "DISO", "ICD10CM": "DISO", "ORDO": "DISO", "CHEBI": "CHEM",
    "DRUGBANK": "CHEM", "UBERON": "ANAT", "FMA": "ANAT",
}
# HPO: the phenotypic abnormality branch is disorders; the rest (inheritance,
# onset, frequency, modifiers) are concepts.
HPO_PHENOTYPE_ROOT = "HP:0000118"


def group_of_tree_number(stn: str) -> str | None:
    """The semantic group of a semantic type tree number such as ``B2.2.1.2.1``."""
    # "A" is the root of "A1", "A1" of "A1.2": the root letters take no dot.
    matches = [p for p in STN_RULES
               if stn == p or stn.startswith(p + ".") or (len(p) == 1 and stn.startswith(p))]
    return STN_RULES[max(matches, key=len)] if matches else None


# MeSH tree number category (letter, or letter + two digits for F) -> group.
MESH_TREE_GROUPS: dict[str, str] = {
    "A": "ANAT", "B": "LIVB", "C": "DISO", "D": "CHEM", "E": "PROC", "F01": "ACTI",
    "F02": "PHYS", "F03": "DISO", "F04": "PROC", "G": "PHYS", "H": "CONC", "I": "CONC",
    "J": "OBJC", "K": "CONC", "L": "CONC", "M": "LIVB", "N": "ORGA", "V": "CONC", "Z": "GEOG",
}


def group_of_mesh_trees(tree_numbers: Iterable[str]) -> str | None:
    """The semantic group of a MeSH descriptor from its tree numbers
    (``C14.280.067`` -> DISO); a disorder branch wins over any other."""
    groups = [MESH_TREE_GROUPS.get(t[:3]) or MESH_TREE_GROUPS.get(t[:1]) for t in tree_numbers]
    found = [g for g in groups if g]
    return "DISO" if "DISO" in found else (found[0] if found else None)


def _ancestors(concept_id: str, parents: dict[str, list[str]]) -> set[str]:
    seen: set[str] = set()
    stack = list(parents.get(concept_id, []))
    while stack:
        current = stack.pop()
        if current not in seen:
            seen.add(current)
            stack.extend(parents.get(current, []))
    return seen


def assign_groups(concepts: Iterable[Concept]) -> list[Concept]:
    """Fill in missing semantic groups from the id prefix (and HPO branch)."""
    concepts = list(concepts)
    parents = {c.id: c.parents for c in concepts}
    out = []
    for concept in concepts:
        if concept.semantic_group:
            out.append(concept)
            continue
        prefix = concept.id.split(":", 1)[0].upper()
        group = PREFIX_GROUPS.get(prefix)
        if prefix == "HP":
            in_branch = (concept.id == HPO_PHENOTYPE_ROOT
                         or HPO_PHENOTYPE_ROOT in _ancestors(concept.id, parents))
            group = "DISO" if in_branch else "CONC"
        out.append(concept.model_copy(update={"semantic_group": group}) if group else concept)
    return out
