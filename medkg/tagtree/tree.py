"""The tag tree: chunk summaries clustered bottom-up into a few levels.

Leaves are chunks (their tag summary; the vector joins the summary's embedding
with the chunk's own). Each round looks at the current top nodes, takes the
candidate pairs among each node's nearest neighbours, keeps the most similar
``top_fraction`` of them (the threshold moves with every round: the dynamic
threshold of MedGraphRAG) and merges them, a group only when every pairwise
similarity inside it clears ``floor``. A merged node's summary counts its
children's terms; its vector is their normalised mean. Nodes left unmerged
carry up to the next round. Rounds stop at ``levels`` or when nothing merges.

New chunks join incrementally: a new leaf goes under the most similar
lowest-level group whose centroid it clears the floor with (that group and
its ancestors are re-summarised), else it becomes a top node of its own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from medkg import files
from medkg.linking.embeddings import Matrix
from medkg.model import stable_id
from medkg.retrieval.trace import TreeLevel, TreeNodeStep
from medkg.tagtree.tags import TagSummary, merge

TREE = "tagtree.json"
VECTORS = "tagtree-vectors.npz"
NEIGHBOURS = 5
MAX_GROUP = 16
# similarities computed at once: a block of a fixed number of rows grew with the
# corpus (2,048 rows x 21k chunks, with argpartition's copy and index array: about
# 1 GB at once, the writer's peak of a 10k-document build)
BLOCK_CELLS = 4_000_000


@dataclass
class TagNode:
    id: str
    level: int  # 0: a chunk
    summary: TagSummary
    children: list[str] = field(default_factory=list)
    parent: str | None = None


@dataclass(frozen=True)
class TreeSettings:
    levels: int = 4
    top_fraction: float = 0.2
    floor: float = 0.5


def _unit(v: Matrix) -> Matrix:
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    out: Matrix = (v / np.where(norms == 0, 1, norms)).astype(np.float32)
    return out


class TagTree:
    def __init__(self, settings: TreeSettings) -> None:
        self.settings = settings
        self.nodes: dict[str, TagNode] = {}
        self.vectors: dict[str, Matrix] = {}

    # -- structure ------------------------------------------------------------------

    @property
    def roots(self) -> list[str]:
        return sorted(n.id for n in self.nodes.values() if n.parent is None)

    def leaves_under(self, node_id: str) -> list[str]:
        out, stack = [], [node_id]
        while stack:
            node = self.nodes[stack.pop()]
            if node.level == 0:
                out.append(node.id)
            stack.extend(node.children)
        return out

    def ancestors(self, node_id: str) -> list[str]:
        out = []
        parent = self.nodes[node_id].parent
        while parent is not None:
            out.append(parent)
            parent = self.nodes[parent].parent
        return out

    def depth(self) -> int:
        return max((n.level for n in self.nodes.values()), default=0)

    # -- building -------------------------------------------------------------------

    def add_leaves(self, leaves: Sequence[tuple[str, TagSummary, Matrix]]) -> None:
        """Add chunks; the first call (an empty tree) clusters them all."""
        fresh = not self.nodes
        for chunk_id, summary, vector in leaves:
            self.nodes[chunk_id] = TagNode(chunk_id, 0, summary)
            self.vectors[chunk_id] = _unit(vector)
        if fresh:
            self._cluster([c for c, _, _ in leaves])
            return
        groups = [n.id for n in self.nodes.values() if n.level == 1]
        if not groups:
            return
        centroids = np.stack([self.vectors[g] for g in groups])
        for chunk_id, _summary, _vector in leaves:
            sims = centroids @ self.vectors[chunk_id]
            best = int(np.argmax(sims))
            if sims[best] >= self.settings.floor:
                self._attach(chunk_id, groups[best])

    def remove_leaves(self, chunk_ids: Sequence[str]) -> None:
        for chunk_id in chunk_ids:
            node = self.nodes.pop(chunk_id, None)
            self.vectors.pop(chunk_id, None)
            if node is None or node.parent is None:
                continue
            parent = self.nodes[node.parent]
            parent.children.remove(chunk_id)
            self._refresh(parent.id)

    def _attach(self, child: str, parent: str) -> None:
        self.nodes[child].parent = parent
        self.nodes[parent].children.append(child)
        self._refresh(parent)

    def _refresh(self, node_id: str | None) -> None:
        """Re-summarise a group and its ancestors after its children changed."""
        while node_id is not None:
            node = self.nodes[node_id]
            if node.children:
                node.summary = merge(self.nodes[c].summary for c in node.children)
                self.vectors[node_id] = _unit(
                    np.mean([self.vectors[c] for c in node.children], axis=0))
            node_id = node.parent

    def _cluster(self, frontier: list[str]) -> None:
        s = self.settings
        for level in range(1, s.levels + 1):
            if len(frontier) < 2:
                return
            matrix = np.stack([self.vectors[n] for n in frontier])
            edges = _neighbour_pairs(matrix, s.floor)
            if not edges:
                return
            edges.sort(key=lambda e: -e[2])
            keep = edges[: max(1, int(len(edges) * s.top_fraction))]
            group_of = list(range(len(frontier)))
            members: dict[int, list[int]] = {i: [i] for i in range(len(frontier))}
            for i, j, _sim in keep:
                a, b = group_of[i], group_of[j]
                if a == b or len(members[a]) + len(members[b]) > MAX_GROUP:
                    continue
                if float((matrix[members[a]] @ matrix[members[b]].T).min()) < s.floor:
                    continue  # complete linkage: every pair in a group clears the floor
                for m in members[b]:
                    group_of[m] = a
                members[a] += members.pop(b)
            groups = [sorted(m) for m in members.values()]
            merged = [g for g in groups if len(g) > 1]
            if not merged:
                return
            nxt = [frontier[g[0]] for g in groups if len(g) == 1]
            for group in merged:
                children = [frontier[i] for i in group]
                node_id = stable_id("tag", level, *sorted(children))
                self.nodes[node_id] = TagNode(node_id, level, TagSummary(), children)
                for child in children:
                    self.nodes[child].parent = node_id
                self._refresh(node_id)
                nxt.append(node_id)
            frontier = nxt

    # -- search ---------------------------------------------------------------------

    def descend(self, query: Matrix, beam: int) -> tuple[list[str], list[TreeLevel]]:
        """Top-down: the ``beam`` best top nodes, then the best of their children,
        level by level, until the chosen nodes group chunks directly. A node's
        score is the better of its own summary's similarity and its best chunk's
        (a group whose centroid is middling may still hold the one chunk that
        answers). Returns the chunks under the chosen nodes and the path taken."""
        q = _unit(query)
        scores = self._scores(q)
        chosen = self._best(self.roots, scores, beam)
        path: list[TreeLevel] = []
        while True:
            path.append(TreeLevel(level=max(self.nodes[n].level for n in chosen),
                                  nodes=[self._describe(n, q, scores) for n in chosen]))
            if all(self.nodes[n].level <= 1 for n in chosen):
                break
            pool = [c for n in chosen for c in (self.nodes[n].children
                                                if self.nodes[n].level > 1 else [n])]
            chosen = self._best(pool, scores, beam)
        leaves = [leaf for n in chosen for leaf in self.leaves_under(n)]
        return leaves, path

    def _scores(self, q: Matrix) -> dict[str, float]:
        """Every node's score for one query: max(own similarity, best child score)."""
        ids = list(self.vectors)
        sims = np.stack([self.vectors[i] for i in ids]) @ q
        scores = {i: float(s) for i, s in zip(ids, sims, strict=True)}
        for node in sorted(self.nodes.values(), key=lambda n: n.level):
            if node.children:
                scores[node.id] = max(scores[node.id], *(scores[c] for c in node.children))
        return scores

    def _best(self, ids: Sequence[str], scores: dict[str, float], k: int) -> list[str]:
        return sorted(ids, key=lambda i: -scores[i])[:k]

    def _describe(self, node_id: str, q: Matrix, scores: dict[str, float]) -> TreeNodeStep:
        node = self.nodes[node_id]
        return TreeNodeStep(id=node_id, level=node.level, chunks=len(self.leaves_under(node_id)),
                            similarity=round(float(self.vectors[node_id] @ q), 3),
                            score=round(scores[node_id], 3), summary=node.summary.text()[:300])

    # -- persistence ----------------------------------------------------------------

    def save(self, directory: Path) -> None:
        """Both files, committed as one step (:func:`medkg.files.commit_files`): a
        crash leaves the old pair or, once committed, a pair the next writable
        load puts in place; never a pair its manifest does not vouch for."""
        ids = sorted(self.nodes)
        data = {"settings": self.settings.__dict__,
                "nodes": [{"id": n.id, "level": n.level, "children": n.children,
                           "parent": n.parent, "tags": n.summary.tags}
                          for n in (self.nodes[i] for i in ids)]}
        with files.atomic_binary(directory / f"{VECTORS}.next") as f:
            np.savez(f, ids=np.array(ids),
                     vectors=np.stack([self.vectors[i] for i in ids]) if ids
                     else np.zeros((0, 1), np.float32))
        files.write_text(directory / f"{TREE}.next", json.dumps(data))
        files.commit_files(directory, [TREE, VECTORS], derived_from="tag tree")

    @classmethod
    def load(cls, directory: Path, *, finish: bool = True) -> TagTree | None:
        """The saved tree, or None when there is none or its files are not the pair
        the manifest vouches for (a file damaged): the next build makes it anew.
        ``finish``: first complete a save a crash cut short after its commit point
        (a read-only reader leaves that to the writer and reads the old pair)."""
        if finish and directory.is_dir():
            files.finish_commit(directory)
        if not (directory / TREE).exists() or not files.manifest_matches(directory):
            return None
        data = json.loads((directory / TREE).read_text(encoding="utf-8"))
        tree = cls(TreeSettings(**data["settings"]))
        for n in data["nodes"]:
            tree.nodes[n["id"]] = TagNode(n["id"], n["level"], TagSummary(tags=n["tags"]),
                                          list(n["children"]), n["parent"])
        with np.load(directory / VECTORS) as f:
            for i, v in zip(f["ids"], f["vectors"], strict=True):
                tree.vectors[str(i)] = v.astype(np.float32)
        if set(tree.vectors) != set(tree.nodes):
            return None
        return tree


def _neighbour_pairs(matrix: Matrix, floor: float) -> list[tuple[int, int, float]]:
    """(i, j, similarity) for each node's nearest neighbours above the floor."""
    n = len(matrix)
    k = min(NEIGHBOURS, n - 1)
    seen: dict[tuple[int, int], float] = {}
    rows = max(1, BLOCK_CELLS // n)
    for start in range(0, n, rows):
        distance = matrix[start: start + rows] @ matrix.T
        distance *= -1  # in place: nearest first for argpartition
        for r in range(len(distance)):
            distance[r, start + r] = 1.0
        top = np.argpartition(distance, k - 1, axis=1)[:, :k]
        for r, row in enumerate(top):
            i = start + r
            for j in row:
                s = -float(distance[r, j])
                if s >= floor:
                    seen[(min(i, int(j)), max(i, int(j)))] = s
    return [(i, j, s) for (i, j), s in seen.items()]
