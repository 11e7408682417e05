"""The rules, read from versioned data (``rules.toml`` beside this module)."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from medkg.errors import ConfigError
from medkg.model import Predicate

RULES_FILE = Path(__file__).resolve().parent / "rules.toml"
ErrorType = Literal["quantity_insufficient", "format_error", "head_entity_error",
                    "head_tail_contradiction", "rule_conflict"]


class Rule(BaseModel):
    id: str
    kind: Literal["structural", "type", "numeric", "temporal", "conflict", "evidence"]
    severity: Literal["hard", "soft"]
    error: ErrorType
    message: str
    hint: str
    shacl: bool = False
    # type rules: the predicate and the semantic groups allowed on each side
    # ("*" any, "=" the same group as the other side, "!X" anything but X)
    predicate: Predicate | None = None
    head: list[str] = []
    tail: list[str] = []

    def allows(self, head_group: str, tail_group: str) -> bool:
        return _side(self.head, head_group, tail_group) and _side(self.tail, tail_group,
                                                                  head_group)


def _side(allowed: list[str], group: str, other: str) -> bool:
    for entry in allowed:
        if entry == "*" or entry == group or (entry == "=" and group == other):
            return True
        if entry.startswith("!") and group != entry[1:]:
            return True
    return False


class RuleSet(BaseModel):
    version: int
    rules: list[Rule]

    def get(self, rule_id: str) -> Rule:
        return next(r for r in self.rules if r.id == rule_id)

    def type_rule(self, predicate: Predicate) -> Rule | None:
        return next((r for r in self.rules if r.kind == "type" and r.predicate is predicate),
                    None)


@cache
def load_rules(path: Path = RULES_FILE) -> RuleSet:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        rules = RuleSet(version=data["version"], rules=data["rule"])
    except (OSError, tomllib.TOMLDecodeError, KeyError, ValidationError) as exc:
        raise ConfigError(f"cannot read the rules in {path}: {exc}") from exc
    ids = [r.id for r in rules.rules]
    if len(ids) != len(set(ids)):
        raise ConfigError(f"{path}: rule ids repeat")
    return rules
