"""A reader for PubTator files (BC5CDR, BioRED): title/abstract, mentions, relations.

    PMID|t|title
    PMID|a|abstract
    PMID<TAB>start<TAB>end<TAB>text<TAB>type<TAB>id[<TAB>...]
    PMID<TAB>relation type<TAB>id1<TAB>id2[<TAB>...]

Concept ids may be composite ("D001|D002"); "-1" means no id. Offsets are
into ``title + " " + abstract``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from medkg.errors import DocumentError


@dataclass(frozen=True)
class GoldMention:
    start: int
    end: int
    text: str
    type: str
    ids: tuple[str, ...]  # empty when the corpus gives none


@dataclass(frozen=True)
class GoldRelation:
    type: str
    first: str
    second: str


@dataclass
class PubTatorDocument:
    pmid: str
    title: str = ""
    abstract: str = ""
    mentions: list[GoldMention] = field(default_factory=list)
    relations: list[GoldRelation] = field(default_factory=list)

    @property
    def text(self) -> str:
        return f"{self.title} {self.abstract}" if self.abstract else self.title


def _ids(raw: str) -> tuple[str, ...]:
    return tuple(i for i in (x.strip() for x in raw.replace(";", "|").split("|"))
                 if i and i != "-1" and i != "-")


def read_pubtator(path: Path) -> Iterator[PubTatorDocument]:
    """Documents of a PubTator file, in order. Malformed lines name the line."""
    current: PubTatorDocument | None = None
    with path.open(encoding="utf-8") as handle:
        for lineno, raw in enumerate(handle, start=1):
            line = raw.rstrip("\n")
            if not line.strip():
                continue
            if "|t|" in line[:20] or "|a|" in line[:20]:
                pmid, kind, text = line.split("|", 2)
                if current is None or current.pmid != pmid:
                    if current is not None:
                        yield current
                    current = PubTatorDocument(pmid)
                if kind == "t":
                    current.title = text
                else:
                    current.abstract = text
                continue
            cells = line.split("\t")
            if current is None or cells[0] != current.pmid:
                raise DocumentError(path, f"line {lineno}: annotation for an unknown document")
            if len(cells) >= 6 and cells[1].isdigit():
                current.mentions.append(GoldMention(
                    int(cells[1]), int(cells[2]), cells[3], cells[4], _ids(cells[5])))
            elif len(cells) >= 4:
                current.relations.append(GoldRelation(cells[1], cells[2], cells[3]))
            else:
                raise DocumentError(path, f"line {lineno}: not a PubTator annotation")
    if current is not None:
        yield current
