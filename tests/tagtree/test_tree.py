"""Tag summaries and the tag tree: categories, clustering, search, persistence."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from medkg.model import Entity, Layer, Mention, Predicate, Qualifiers, Triple
from medkg.tagtree.tags import TagSummary, merge, summarise_chunk
from medkg.tagtree.tree import TagTree, TreeSettings


def _entity(name: str, group: str, text: str, word: str, *, concept: str = "X:1",
            historical: bool = False) -> Entity:
    start = text.index(word)
    return Entity(id=f"e-{name}", layer=Layer.USER, name=name, type=group,
                  concept_ids=[concept],
                  mentions=[Mention(chunk_id="c", document_id="d", start=100 + start,
                                    end=100 + start + len(word), text=word,
                                    qualifiers=Qualifiers(historical=historical))])


def test_chunk_summary_puts_each_entity_under_its_tag() -> None:
    text = ("History of asthma. Lisinopril 10 mg daily caused a dry cough. "
            "Serum potassium level was high. Chest X-ray of the lungs was clear.")
    ents = [
        _entity("Asthma", "DISO", text, "asthma", historical=True),
        _entity("Lisinopril", "CHEM", text, "Lisinopril"),
        _entity("Cough", "DISO", text, "cough"),
        _entity("Potassium measurement", "PROC", text, "potassium"),
        _entity("Radiography, Thoracic", "PROC", text, "X-ray"),
        _entity("Lung", "ANAT", text, "lungs"),
    ]
    adverse = Triple(id="t", layer=Layer.USER, head="e-Lisinopril",
                     predicate=Predicate.HAS_ADVERSE_EFFECT, tail="e-Cough", confidence=0.7)
    s = summarise_chunk(text, 100, ents, [adverse])
    assert s.tags["patient_history"] == ["Asthma"]
    assert s.tags["medications_and_doses"] == ["Lisinopril 10 mg"]
    assert s.tags["adverse_events"] == ["Cough"]
    assert s.tags["laboratory_results"] == ["Potassium measurement"]
    assert s.tags["procedures"] == ["Radiography, Thoracic"]
    assert s.tags["anatomy_and_body_functions"] == ["Lung"]
    assert "medications and doses: Lisinopril 10 mg" in s.text()


def test_a_note_that_says_a_drug_brought_a_disorder_on_tags_an_adverse_event() -> None:
    text = ("He took ibuprofen for back pain and developed bronchospasm within an hour. "
            "Mild hyperkalemia, probably due to lisinopril. No rash after lisinopril. "
            "Asthma is well controlled.")
    ents = [
        _entity("Ibuprofen", "CHEM", text, "ibuprofen"),
        _entity("Back Pain", "DISO", text, "back pain"),
        _entity("Bronchospasm", "DISO", text, "bronchospasm"),
        _entity("Hyperkalemia", "DISO", text, "hyperkalemia"),
        _entity("Lisinopril", "CHEM", text, "lisinopril"),
        _entity("Asthma", "DISO", text, "Asthma"),
    ]
    rash = _entity("Exanthema", "DISO", text, "rash")
    rash = rash.model_copy(update={"mentions": [rash.mentions[0].model_copy(
        update={"qualifiers": Qualifiers(negated=True)})]})
    s = summarise_chunk(text, 100, [*ents, rash], [])
    assert s.tags["adverse_events"] == ["Bronchospasm", "Hyperkalemia"]
    # what it was taken for, a negated finding and a plain diagnosis are not
    assert "Back Pain" in s.tags["diagnoses_and_conditions"]
    assert "Asthma" in s.tags["diagnoses_and_conditions"]
    assert "Exanthema" not in s.tags["adverse_events"]
    # the literature is left to its statements
    literature = [e.model_copy(update={"layer": Layer.LITERATURE}) for e in ents]
    assert "adverse_events" not in summarise_chunk(text, 100, literature, []).tags


def test_merge_keeps_the_shared_terms_first() -> None:
    a = TagSummary(tags={"diagnoses_and_conditions": ["Asthma", "Rhinitis"]})
    b = TagSummary(tags={"diagnoses_and_conditions": ["Asthma"], "procedures": ["Spirometry"]})
    m = merge([a, b])
    assert m.tags["diagnoses_and_conditions"][0] == "Asthma"
    assert m.tags["procedures"] == ["Spirometry"]


def _leaves(n_per: int, centres: list[np.ndarray], seed: int = 0
            ) -> list[tuple[str, TagSummary, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for c, centre in enumerate(centres):
        for i in range(n_per):
            v = centre + 0.05 * rng.standard_normal(len(centre))
            out.append((f"chunk-{c}-{i}", TagSummary(tags={"procedures": [f"topic {c}"]}),
                        v.astype(np.float32)))
    return out


def _centres(k: int, dim: int = 32) -> list[np.ndarray]:
    rng = np.random.default_rng(42)
    return [rng.standard_normal(dim).astype(np.float32) for _ in range(k)]


def test_tree_groups_similar_chunks_and_search_finds_them(tmp_path: Path) -> None:
    centres = _centres(4)
    tree = TagTree(TreeSettings(levels=4, top_fraction=0.5, floor=0.6))
    tree.add_leaves(_leaves(8, centres))
    assert tree.depth() >= 2
    # No group mixes topics: every pair in a group clears the floor.
    for node in tree.nodes.values():
        if node.level >= 1:
            topics = {leaf.split("-")[1] for leaf in tree.leaves_under(node.id)}
            assert len(topics) == 1, node
            assert node.summary.tags["procedures"] == [f"topic {topics.pop()}"]
    leaves, path = tree.descend(centres[2], beam=1)
    assert leaves and all(leaf.startswith("chunk-2-") for leaf in leaves)
    assert path[0].nodes and path[-1].level <= 1
    tree.save(tmp_path)
    again = TagTree.load(tmp_path)
    assert again is not None and again.roots == tree.roots
    assert again.descend(centres[2], beam=1)[0] == leaves


def test_new_chunks_join_their_group_and_removed_ones_leave() -> None:
    centres = _centres(3)
    tree = TagTree(TreeSettings(levels=3, top_fraction=0.5, floor=0.6))
    tree.add_leaves(_leaves(6, centres))
    extra = _leaves(1, [centres[1]], seed=7)[0]
    extra = ("chunk-new", TagSummary(tags={"procedures": ["late"]}), extra[2])
    tree.add_leaves([extra])
    parent = tree.nodes["chunk-new"].parent
    assert parent is not None
    assert all(leaf.startswith(("chunk-1-", "chunk-new")) for leaf in tree.leaves_under(parent))
    assert "late" in tree.nodes[parent].summary.tags["procedures"]
    tree.remove_leaves(["chunk-new"])
    assert "chunk-new" not in tree.nodes
    assert "late" not in tree.nodes[parent].summary.tags["procedures"]


def test_defect_16_a_group_summary_is_the_same_in_every_run() -> None:
    """Terms tied in count keep the order they came in (not a set's, which
    changes with the process's hash seed), so the cut at the limit is stable."""
    import subprocess
    import sys

    script = ("from medkg.tagtree.tags import TagSummary, merge\n"
              "terms = [f't{i}' for i in range(30)]\n"
              "print(merge([TagSummary(tags={'procedures': terms})], limit=5).tags)\n")
    runs = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True, env={"PYTHONHASHSEED": str(seed)}).stdout
            for seed in (1, 2, 3)}
    assert runs == {"{'procedures': ['t0', 't1', 't2', 't3', 't4']}\n"}
