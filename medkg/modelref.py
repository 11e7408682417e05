"""Settings that name a model: ``bundled`` (shipped in ``medkg/models``),
``none``, or a path (comma-separated paths where a setting takes several).

One resolution for every such setting, and a missing bundled file is an error
that says so: a broken install must not quietly extract with less.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from medkg.errors import ConfigError


@dataclass(frozen=True)
class ModelRef:
    setting: str  # the value: bundled | none | PATH[,PATH...]
    key: str  # the setting's name, for messages: "extraction.lexicon"

    @property
    def none(self) -> bool:
        return self.setting.strip() == "none"

    def paths(self, bundled: Sequence[Path], marker: str = "") -> list[Path]:
        """The model paths this setting names; ``marker`` is a file that must be
        inside a model directory (``meta.json`` of a spaCy pipeline)."""
        if self.none:
            return []
        if self.setting.strip() == "bundled":
            for path in bundled:
                if not (path / marker if marker else path).exists():
                    raise ConfigError(
                        f"{self.key} = 'bundled', but the bundled model is missing: {path}",
                        hint=f"reinstall medkg (its models ship in medkg/models), or set "
                        f"{self.key} to 'none' or a path")
            return list(bundled)
        found = [Path(p.strip()).expanduser() for p in self.setting.split(",") if p.strip()]
        if not found:
            raise ConfigError(f"{self.key} is empty", hint="use 'bundled', 'none' or a path")
        for path in found:
            if not (path / marker if marker and path.is_dir() else path).exists():
                raise ConfigError(f"{self.key}: no model at {path}",
                                  hint="use 'bundled', 'none' or an existing path")
        return found

    def path(self, bundled: Path, marker: str = "") -> Path | None:
        """The one model path this setting names, or None for ``none``."""
        found = self.paths([bundled], marker)
        if len(found) > 1:
            raise ConfigError(f"{self.key} names {len(found)} models; it takes one")
        return found[0] if found else None
