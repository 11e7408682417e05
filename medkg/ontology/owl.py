"""A reader for OWL ontologies (RDF/XML, OWL/XML, N-Triples) through owlready2.

Each named class becomes a concept: ``rdfs:label`` (English first) as name,
IAO:0000115 (or ``skos:definition``) as definition, oboInOwl exact/related
synonyms and ``skos:altLabel`` as synonyms, oboInOwl:hasDbXref as
cross-references, named superclasses as parents, ``owl:deprecated`` as
obsolete. Ids are CURIEs when the IRI follows the OBO pattern
(``.../obo/HP_0001250`` -> ``HP:0001250``), else the IRI's last segment
under the ontology's name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from medkg.errors import VocabularyError
from medkg.model import Concept

_OBO = re.compile(r"/obo/([A-Za-z][A-Za-z0-9]*)_([A-Za-z0-9_]+)$")
_ANNOTATIONS = {
    "definition": ("IAO_0000115", "definition"),
    "synonyms": ("hasExactSynonym", "hasRelatedSynonym", "hasNarrowSynonym", "altLabel"),
    "xrefs": ("hasDbXref",),
}


def _curie(iri: str, prefix: str) -> str:
    match = _OBO.search(iri)
    if match:
        return f"{match.group(1)}:{match.group(2)}"
    return f"{prefix}:{re.split(r'[/#]', iri)[-1]}"


def _values(entity: Any, names: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for name in names:
        try:
            values = getattr(entity, name)
        except AttributeError:
            continue
        out.extend(str(v) for v in values)
    return list(dict.fromkeys(out))


def _label(entity: Any) -> str | None:
    labels = list(entity.label)
    english = [v for v in labels if getattr(v, "lang", "") in ("en", "")]
    return str((english or labels)[0]) if labels else None


OWL_IMPORTS = "http://www.w3.org/2002/07/owl#imports"
_OWX_IMPORT = "{http://www.w3.org/2002/07/owl#}Import"


def imports_of(path: Path) -> list[str]:
    """The IRIs ``path`` imports (``owl:imports``), read without loading them."""
    head = path.read_bytes()[:4096]
    if b"<Ontology" in head and b"www.w3.org/2002/07/owl#" in head and b"<rdf:RDF" not in head:
        from xml.etree import ElementTree

        try:  # OWL/XML
            return [(el.text or "").strip() for _, el in ElementTree.iterparse(path)
                    if el.tag == _OWX_IMPORT]
        except ElementTree.ParseError as exc:
            raise VocabularyError(path, None, f"not a readable OWL/XML file ({exc})") from exc
    import rdflib

    for fmt in ("xml", "turtle", "nt"):
        graph = rdflib.Graph()
        try:
            graph.parse(path, format=fmt)
        except Exception:
            continue
        return [str(o) for o in graph.objects(None, rdflib.URIRef(OWL_IMPORTS))]
    return []


def _local_imports(path: Path, seen: set[Path]) -> dict[str, Path]:
    """Every ontology ``path`` imports, directly or not, mapped to a file beside
    the importing one (named as the IRI's last segment, with or without .owl);
    an import with no such file is refused: a vocabulary never makes medkg fetch
    anything."""
    import owlready2 as ow

    seen.add(path.resolve())
    found: dict[str, Path] = {}
    for iri in imports_of(path):
        base = iri.rstrip("/#")
        if base in ow.namespace.PREDEFINED_ONTOLOGIES or iri in ow.namespace.PREDEFINED_ONTOLOGIES:
            continue  # OWL's and RDF's own, which owlready2 ships
        name = re.split(r"[/#]", base)[-1]
        candidates = [path.parent / name, path.parent / f"{name}.owl"]
        local = next((c for c in candidates if name and c.is_file()), None)
        if local is None:
            raise VocabularyError(
                path, None, f"imports {iri}, and medkg does not fetch anything a "
                "vocabulary names",
                hint=f"save that ontology beside it as {candidates[-1].name} (it is read "
                "from there), or remove the owl:imports line")
        found[iri] = local
        if local.resolve() not in seen:
            found.update(_local_imports(local, seen))
    return found


def read_owl(path: Path) -> list[Concept]:
    import owlready2 as ow

    world = ow.World()
    try:
        # Imports are loaded first, from local files: owlready2 then finds them
        # loaded and never reaches for their IRIs.
        for iri, local in reversed(_local_imports(path, set()).items()):
            with local.open("rb") as f:
                world.get_ontology(iri).load(fileobj=f, only_local=True)
        onto = world.get_ontology(path.resolve().as_uri()).load(only_local=True)
    except VocabularyError:
        raise
    except Exception as exc:  # owlready2 raises bare Exceptions for parse errors
        raise VocabularyError(path, None, f"not a readable OWL file ({exc})") from exc
    prefix = (onto.name or path.stem).upper()
    version = next(iter(onto.metadata.versionInfo), None) or "unversioned"
    source = f"{onto.name or path.stem}@{version}"
    concepts = []
    for cls in world.classes():
        iri = cls.iri
        name = _label(cls)
        if not name or iri.startswith("http://www.w3.org/"):
            continue  # anonymous or imported vocabulary machinery
        parents = [_curie(p.iri, prefix) for p in cls.is_a
                   if isinstance(p, ow.ThingClass) and p is not ow.Thing]
        definition = _values(cls, _ANNOTATIONS["definition"])
        deprecated = [str(v).lower() for v in getattr(cls, "deprecated", [])]
        concepts.append(Concept(
            id=_curie(iri, prefix), name=name,
            synonyms=[s for s in _values(cls, _ANNOTATIONS["synonyms"]) if s != name],
            definition=definition[0] if definition else None,
            parents=parents, xrefs=_values(cls, _ANNOTATIONS["xrefs"]),
            source=source, obsolete="true" in deprecated,
        ))
    if not concepts:
        raise VocabularyError(path, None, "no labelled classes found")
    return concepts
