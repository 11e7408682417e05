"""Multi-level growth: the SAC-KG loop of generator, verifier, corrector and pruner.

Level 1 expands the seeds. For each head: retrieve its best corpus sentences
and example triples, generate triples about it, verify them with the RuleHub
(too few: widen the context and generate again; a hard rule broken: correct,
re-check, at most ``max_rounds`` times; what still fails is dropped and
recorded with its reasons), store what is kept with its level, and ask the
pruner which new entities at the other end of kept triples become heads at the
next level. The loop stops at the configured depth or when nothing grows.

Progress is kept in ``construction/growth.sqlite``: every finished head is
committed with its counts and the nodes it found, after its triples are in the
graph, so an interrupted build resumes with the next head; repeating a head
stores the same triples (ids are content hashes). A changed corpus or changed
settings start the loop over.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from medkg.config import ConstructionConfig
from medkg.growth.corpus import SentenceCorpus, node_of
from medkg.growth.generator import Context, Generator, Head
from medkg.model import Entity, Triple
from medkg.rulehub.verify import Verifier, Violation
from medkg.sqlitefile import SQLiteFile

STAGE = "construction"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS nodes (
    node TEXT PRIMARY KEY, level INTEGER NOT NULL, grow INTEGER NOT NULL,
    done INTEGER NOT NULL DEFAULT 0, found_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS heads (
    node TEXT PRIMARY KEY, level INTEGER NOT NULL, generated INTEGER NOT NULL,
    rejected TEXT NOT NULL, corrected INTEGER NOT NULL, dropped INTEGER NOT NULL,
    kept INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS kept (triple_id TEXT PRIMARY KEY);
"""

Decide = Callable[[Sequence[Entity]], list[bool]]
Progress = Callable[[str, int, int], None]
Record = Callable[[str, str], None]


@dataclass
class LevelStats:
    level: int
    heads: int = 0
    generated: int = 0
    rejected: Counter[str] = field(default_factory=Counter)  # error type -> triples
    corrected: int = 0
    dropped: int = 0
    kept: int = 0
    grown: int = 0
    pruned: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"level": self.level, "heads": self.heads, "generated": self.generated,
                "rejected": dict(sorted(self.rejected.items())),
                "rejected_total": sum(self.rejected.values()), "corrected": self.corrected,
                "dropped": self.dropped, "kept": self.kept, "grown": self.grown,
                "pruned": self.pruned}


@dataclass
class _Outcome:
    generated: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    corrected: int = 0
    dropped: int = 0
    kept: list[Triple] = field(default_factory=list)


class GrowthState(SQLiteFile):
    SCHEMA = _SCHEMA

    def reset(self) -> None:
        """Forget all progress (the loop starts over with its seeds)."""
        with self._db:
            self._db.execute("DELETE FROM nodes")
            self._db.execute("DELETE FROM heads")
            self._db.execute("DELETE FROM kept")

    def add_seeds(self, nodes: Sequence[str]) -> None:
        with self._db:
            self._db.executemany("INSERT OR IGNORE INTO nodes VALUES (?, 1, 1, 0, 0)",
                                 [(n,) for n in nodes])

    def known(self, node: str) -> bool:
        return self._db.execute("SELECT 1 FROM nodes WHERE node = ?", (node,)).fetchone() \
            is not None

    def pending(self, level: int) -> list[str]:
        rows = self._db.execute("SELECT node FROM nodes WHERE level = ? AND grow = 1 AND "
                                "done = 0 ORDER BY node", (level,)).fetchall()
        return [r[0] for r in rows]

    def kept_ids(self) -> set[str]:
        """Triples this run has kept so far."""
        return {r[0] for r in self._db.execute("SELECT triple_id FROM kept")}

    def finish(self, node: str, level: int, outcome: _Outcome,
               found: Mapping[str, bool]) -> None:
        """Record a finished head, the triples it kept first and the nodes it found,
        in one transaction."""
        with self._db:
            self._db.executemany("INSERT OR IGNORE INTO kept VALUES (?)",
                                 [(t.id,) for t in outcome.kept])
            self._db.executemany(
                "INSERT OR IGNORE INTO nodes VALUES (?, ?, ?, 0, ?)",
                [(n, level + 1, int(g), level) for n, g in found.items()])
            self._db.execute("UPDATE nodes SET done = 1 WHERE node = ?", (node,))
            self._db.execute(
                "INSERT OR REPLACE INTO heads VALUES (?, ?, ?, ?, ?, ?, ?)",
                (node, level, outcome.generated, json.dumps(dict(outcome.rejected)),
                 outcome.corrected, outcome.dropped, len(outcome.kept)))

    def stats(self) -> list[LevelStats]:
        levels: dict[int, LevelStats] = {}
        for lv, gen, rej, cor, drop, kept in self._db.execute(
                "SELECT level, generated, rejected, corrected, dropped, kept FROM heads"):
            s = levels.setdefault(lv, LevelStats(lv))
            s.heads += 1
            s.generated += gen
            s.rejected.update(json.loads(rej))
            s.corrected += cor
            s.dropped += drop
            s.kept += kept
        for lv, grow, n in self._db.execute(
                "SELECT found_at, grow, COUNT(*) FROM nodes WHERE found_at > 0 "
                "GROUP BY found_at, grow"):
            s = levels.setdefault(lv, LevelStats(lv))
            if grow:
                s.grown += n
            else:
                s.pruned += n
        return [levels[k] for k in sorted(levels)]


class Growth:
    def __init__(
        self, corpus: SentenceCorpus, entities: Mapping[str, Entity], generator: Generator,
        verifier: Verifier | None, decide: Decide | None, config: ConstructionConfig,
        store_triples: Callable[[list[Triple]], None], existing: Sequence[Triple],
        record: Record, examples: Callable[[Head], list[str]],
    ) -> None:
        self._corpus = corpus
        self._entities = entities
        self._generator = generator
        self._verifier = verifier
        self._decide = decide
        self._cfg = config
        self._store = store_triples
        self._record = record
        self._examples = examples
        self._stored = {t.id for t in existing}
        self._by_entity: dict[str, list[Triple]] = {}
        for t in existing:
            self._index(t)
        self._nodes: dict[str, list[Entity]] = {}
        for e in entities.values():
            self._nodes.setdefault(node_of(e), []).append(e)

    def _index(self, t: Triple) -> None:
        self._by_entity.setdefault(t.head, []).append(t)
        self._by_entity.setdefault(t.tail, []).append(t)

    def head(self, node: str) -> Head | None:
        members = self._nodes.get(node)
        if not members:
            return None
        first = members[0]
        return Head(node=node, name=first.name, type=first.type,
                    entity_ids=frozenset(e.id for e in members),
                    concept_id=first.concept_ids[0] if first.concept_ids else None)

    def run(self, state: GrowthState, seeds: Sequence[str], progress: Progress
            ) -> list[LevelStats]:
        state.add_seeds([s for s in seeds if s in self._nodes])
        kept_before = state.kept_ids()
        for level in range(1, self._cfg.levels + 1):
            pending = state.pending(level)
            if self._cfg.max_heads_per_level:
                pending = pending[: self._cfg.max_heads_per_level]
            for i, node in enumerate(pending):
                progress(f"level {level}", i, len(pending))
                head = self.head(node)
                outcome = self.expand(head, level) if head is not None else _Outcome()
                found = self._found(head, outcome.kept) if head is not None else {}
                # A triple counts as kept once, by the first head that kept it.
                outcome.kept = [t for t in outcome.kept if t.id not in kept_before]
                kept_before.update(t.id for t in outcome.kept)
                state.finish(node, level, outcome, {n: g for n, g in found.items()
                                                     if not state.known(n)})
            progress(f"level {level}", len(pending), len(pending))
            if not state.pending(level + 1):
                break
        return state.stats()

    def expand(self, head: Head, level: int) -> _Outcome:
        out = _Outcome()
        chars = self._cfg.context_chars
        ctx = Context(head, self._corpus.sentences_for(head.node, chars), self._examples(head))
        proposed = self._generator.generate(ctx)
        if self._verifier is not None and len(proposed) < self._cfg.min_triples:
            out.rejected["quantity_insufficient"] += 1  # counted per head, not per triple
            for _ in range(self._cfg.max_rounds):
                chars *= 2
                ctx.sentences = self._corpus.sentences_for(head.node, chars)
                proposed = self._generator.generate(ctx)
                if len(proposed) >= self._cfg.min_triples:
                    break
        out.generated = len(proposed)
        kept = proposed if self._verifier is None else self._verify(ctx, proposed, out)
        new = []
        for t in kept:
            if t.id in self._stored:  # already in the graph, from an earlier level or run
                continue
            t = t.model_copy(update={"level": level})
            self._stored.add(t.id)
            self._index(t)
            new.append(t)
        if new:
            self._store(new)
        out.kept = kept
        return out

    def _verify(self, ctx: Context, proposed: list[Triple], out: _Outcome) -> list[Triple]:
        """The proposed triples that pass, directly or after correction; the rest are
        dropped and recorded with the rules they broke last."""
        assert self._verifier is not None
        existing = [t for eid in ctx.head.entity_ids for t in self._by_entity.get(eid, [])]
        rejected = self._rejected(ctx, proposed, existing)
        for violations in rejected.values():
            out.rejected[violations[0].error] += 1
        kept = [t for t in proposed if t.id not in rejected]
        kept_ids = {t.id for t in kept}
        by_id = {t.id: t for t in proposed}
        origin = {tid: tid for tid in rejected}  # a correction's id -> the rejected original
        last = dict(rejected)  # original -> the violations of its latest version
        resolved: set[str] = set()
        pending = rejected
        for _ in range(self._cfg.max_rounds):
            if not pending:
                break
            pairs = [(src, t) for src, t in self._generator.correct(ctx, pending, by_id)
                     if src in pending]
            still = self._rejected(ctx, [t for _, t in pairs if t.id not in kept_ids],
                                   [*existing, *kept])
            retry: dict[str, list[Violation]] = {}
            for src, t in pairs:
                first = origin[src]
                if t.id in still:
                    retry[t.id] = still[t.id]
                    origin[t.id] = first
                    last[first] = still[t.id]
                    by_id[t.id] = t
                    continue
                resolved.add(first)
                if t.id not in kept_ids:  # a correction may restate a kept triple
                    kept.append(t)
                    kept_ids.add(t.id)
                    out.corrected += 1
            pending = retry
        for first in rejected:
            if first in resolved:
                continue
            t = by_id[first]
            self._record(first, f"head {ctx.head.name!r}: ({self._name(t.head)}, "
                         f"{t.predicate.value}, {self._name(t.tail)}): "
                         + "; ".join(f"{v.rule} {v.message}" for v in last[first]))
            out.dropped += 1
        return kept

    def _rejected(self, ctx: Context, triples: list[Triple], existing: list[Triple]
                  ) -> dict[str, list[Violation]]:
        assert self._verifier is not None
        found: dict[str, list[Violation]] = {}
        for v in self._verifier.check(triples, self._entities, requested_head=ctx.head.name,
                                      either_end=True, existing=existing):
            if v.hard and v.triple_id is not None and v.error != "quantity_insufficient":
                found.setdefault(v.triple_id, []).append(v)
        return found

    def _name(self, entity_id: str) -> str:
        e = self._entities.get(entity_id)
        return e.name if e is not None else entity_id

    def _found(self, head: Head, kept: list[Triple]) -> dict[str, bool]:
        """The other ends of the kept triples, each with the pruner's decision."""
        others: dict[str, Entity] = {}
        for t in kept:
            other = t.tail if t.head in head.entity_ids else t.head
            if (e := self._entities.get(other)) is not None and node_of(e) != head.node:
                others.setdefault(node_of(e), e)
        if not others:
            return {}
        grow = (self._decide(list(others.values())) if self._decide is not None
                else [True] * len(others))
        return dict(zip(others, grow, strict=True))
