"""The one exception root of medkg and its specific subclasses.

Every error a user can meet derives from :class:`MedKGError`, says what was
wrong and, where there is one, how to fix it. Errors carry their data as
attributes so callers (CLI, HTTP API) can render them without parsing text.
"""

from __future__ import annotations

from pathlib import Path

from medkg.text import clean_text, path_text


class MedKGError(Exception):
    """Root of every error medkg raises on purpose."""

    hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        # A message may quote hostile input (a file name, a question): it is
        # printed, logged and sent as JSON, so it holds only text those can carry.
        message = clean_text(message)
        super().__init__(message)
        self.message = message
        if hint is not None:
            self.hint = clean_text(hint)

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class ConfigError(MedKGError):
    """The workspace configuration is missing, malformed or inconsistent."""


class WorkspaceError(MedKGError):
    """A workspace directory cannot be created or opened."""


class DocumentError(MedKGError):
    """A document cannot be ingested. Carries the offending path."""

    def __init__(self, path: Path | str, message: str, *, hint: str | None = None) -> None:
        super().__init__(f"{path_text(path)}: {message}", hint=hint)
        self.path = Path(path)


class EmptyDocumentError(DocumentError):
    """The document has no text to ingest."""


class UnreadableDocumentError(DocumentError):
    """The file is not text in a supported encoding, or not the format its name claims."""


class UnsupportedFormatError(DocumentError):
    """No reader handles this file's extension."""


class DocumentTooLargeError(DocumentError):
    """The file is larger than the configured ingest limit."""


class VocabularyError(MedKGError):
    """A vocabulary file is malformed. Carries file and line where known."""

    def __init__(
        self, path: Path | str, line: int | None, message: str, *, hint: str | None = None
    ) -> None:
        where = f"{path_text(path)}:{line}" if line is not None else path_text(path)
        super().__init__(f"{where}: {message}", hint=hint)
        self.path = Path(path)
        self.line = line


class StoreError(MedKGError):
    """The graph store failed or holds data that contradicts the model."""


class NotFoundError(StoreError):
    """A requested document, chunk, entity or concept id is not in the store."""

    def __init__(self, kind: str, identifier: str) -> None:
        super().__init__(f"no {kind} with id {identifier!r} in this workspace")
        self.kind = kind
        self.identifier = identifier


class EmbeddingError(MedKGError):
    """The embedding model cannot be loaded or fails on input."""


class RetrievalError(MedKGError):
    """A question cannot be answered from this workspace (e.g. it is empty)."""


class LLMError(MedKGError):
    """A chat model could not be reached or gave no usable answer."""


class LLMUnavailableError(LLMError):
    """The endpoint or model file cannot be reached or loaded (after retries)."""


class LLMOutputError(LLMError):
    """An answer that stayed malformed or off-schema after repair."""

    def __init__(self, message: str, *, raw: str = "", hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.raw = raw


class RequestError(MedKGError):
    """A request to the HTTP API is malformed (a bad upload name, say)."""


class ReviewError(MedKGError):
    """A curator's decision cannot be made: an unknown target, an action that
    does not fit it, an edit that changes nothing, an undo of nothing."""
