"""What changed between two releases of a vocabulary.

A vocabulary update must never silently break links: ``diff`` lists the ids
that were added, removed (gone without a trace), renamed (same id, new
preferred name) and obsoleted (marked obsolete, with the replacement when the
release names one), so a user can see which links need attention.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from medkg.model import Concept


class Renamed(BaseModel):
    id: str
    old: str
    new: str


class Obsoleted(BaseModel):
    id: str
    name: str
    replaced_by: str | None


class VocabularyDiff(BaseModel):
    old_source: str
    new_source: str
    added: list[str]
    removed: list[str]
    renamed: list[Renamed]
    obsoleted: list[Obsoleted]

    def summary(self) -> str:
        return (f"{self.old_source} -> {self.new_source}: {len(self.added)} added, "
                f"{len(self.removed)} removed, {len(self.renamed)} renamed, "
                f"{len(self.obsoleted)} obsoleted")


def diff(old: Iterable[Concept], new: Iterable[Concept]) -> VocabularyDiff:
    before = {c.id: c for c in old}
    after = {c.id: c for c in new}
    return VocabularyDiff(
        old_source=next(iter(before.values())).source if before else "",
        new_source=next(iter(after.values())).source if after else "",
        added=sorted(i for i in after if i not in before),
        removed=sorted(i for i in before if i not in after),
        renamed=[Renamed(id=i, old=before[i].name, new=after[i].name)
                 for i in sorted(before.keys() & after.keys())
                 if before[i].name != after[i].name],
        obsoleted=[Obsoleted(id=i, name=after[i].name, replaced_by=after[i].replaced_by)
                   for i in sorted(before.keys() & after.keys())
                   if after[i].obsolete and not before[i].obsolete],
    )
