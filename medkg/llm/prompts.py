"""Versioned prompt templates, one TOML file per stage in ``medkg/llm/prompts/``.

Each file has ``version``, a ``system`` text, a ``user`` template
(``string.Template``: ``$text``, ``$entity`` ...) and few-shot ``examples``
(user/assistant pairs we wrote). The rendered messages include the version
through the text itself, so a changed prompt never hits an old cache entry.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template

from medkg.errors import ConfigError
from medkg.llm.port import Message

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
STAGES = ("extract_entities", "understand_context", "expand_conditions", "refine_triples",
          "normalise_entities", "generate_triples", "correct_triples", "tag_summary", "answer",
          "prune_triples", "clue_entities")


@dataclass(frozen=True)
class Prompt:
    name: str
    version: int
    system: str
    user: Template
    examples: tuple[tuple[str, str], ...]

    def render(self, **values: str) -> list[Message]:
        try:
            user = self.user.substitute(values)
        except KeyError as exc:
            raise ConfigError(f"prompt {self.name} v{self.version} needs ${exc.args[0]}") from exc
        messages = [Message(role="system", content=self.system)]
        for example_user, example_answer in self.examples:
            messages += [Message(role="user", content=example_user),
                         Message(role="assistant", content=example_answer)]
        return [*messages, Message(role="user", content=user)]


@cache
def load_prompt(name: str) -> Prompt:
    path = PROMPT_DIR / f"{name}.toml"
    if not path.exists():
        raise ConfigError(f"no prompt named {name!r}", hint=f"one of: {', '.join(STAGES)}")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return Prompt(name=name, version=int(data["version"]), system=data["system"].strip(),
                  user=Template(data["user"].strip()),
                  examples=tuple((e["user"].strip(), e["assistant"].strip())
                                 for e in data.get("examples", [])))
