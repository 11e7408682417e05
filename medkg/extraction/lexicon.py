"""A learned normalisation lexicon: mention text -> concept id.

Annotated corpora name concepts the way their curators agreed to ("toxicity"
-> Drug-Related Side Effects and Adverse Reactions, "dyskinesia" in a drug
context -> Dyskinesia, Drug-Induced), which no vocabulary lists as synonyms.
``training/train_lexicon.py`` learns these from training splits: for each
normalised mention text, the id its annotators chose, kept only when they
chose it consistently. The vocabulary matcher consults the lexicon before its
own lookup; an entry whose id the loaded vocabulary cannot resolve is ignored.

The file is JSON: ``{"about": ..., "entries": {text: id}}``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from medkg.errors import ConfigError
from medkg.modelref import ModelRef
from medkg.ontology.index import is_acronym, normalize_term

BUNDLED_LEXICON = Path(__file__).resolve().parents[1] / "models" / "lexicon" / "mentions.json"


def lexicon_key(text: str) -> str:
    """Acronyms keep their case ("PAN", "pan" differ); other text is normalised."""
    stripped = text.strip()
    return stripped if is_acronym(stripped) else normalize_term(stripped)


class Lexicon:
    def __init__(self, entries: dict[str, str], about: str = "") -> None:
        self.entries = entries
        self.about = about

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, text: str) -> str | None:
        return self.entries.get(lexicon_key(text))

    @classmethod
    def learn(cls, mentions: Iterable[tuple[str, str]], min_share: float = 0.8,
              min_acronym_count: int = 2, about: str = "") -> Lexicon:
        """From (mention text, concept id) pairs: each text's majority id, kept when
        at least ``min_share`` of its mentions agree; acronyms, being ambiguous
        across documents, also need ``min_acronym_count`` mentions."""
        votes: dict[str, Counter[str]] = {}
        for text, concept_id in mentions:
            votes.setdefault(lexicon_key(text), Counter())[concept_id] += 1
        entries = {}
        for key, counter in votes.items():
            (best, n), total = counter.most_common(1)[0], sum(counter.values())
            if n / total >= min_share and (not is_acronym(key) or n >= min_acronym_count):
                entries[key] = best
        return cls(dict(sorted(entries.items())), about)

    @classmethod
    def load(cls, path: Path) -> Lexicon:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(dict(data["entries"]), str(data.get("about", "")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"cannot read the normalisation lexicon {path}: {exc}",
                              hint="set extraction.lexicon to 'bundled', 'none' or a "
                              "file written by training/train_lexicon.py") from exc

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"about": self.about, "entries": self.entries}, indent=0,
                                   ensure_ascii=False) + "\n", encoding="utf-8")


def resolve_lexicon(setting: str) -> Lexicon | None:
    """``bundled`` -> the shipped lexicon; ``none`` -> none; else a path."""
    path = ModelRef(setting, "extraction.lexicon").path(BUNDLED_LEXICON)
    return None if path is None else Lexicon.load(path)
