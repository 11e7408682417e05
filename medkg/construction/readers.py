"""Document readers: plain text, Markdown, JSONL (one document a line) and PDF.

A reader returns whole :class:`Document` objects or raises a
:class:`DocumentError` subclass that says what is wrong with the file; it
never returns a half-read document.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from medkg.errors import (
    DocumentError,
    DocumentTooLargeError,
    EmptyDocumentError,
    UnreadableDocumentError,
    UnsupportedFormatError,
)
from medkg.model import Document, Layer

Reader = Callable[[Path, Layer], list[Document]]


def _decode(path: Path, data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise UnreadableDocumentError(
            path, "looks like a binary file (it contains NUL bytes), not text",
            hint="convert it to plain text, Markdown or PDF first",
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableDocumentError(
            path, f"is not valid UTF-8 text (byte {exc.start}: {exc.reason})",
            hint="re-save the file as UTF-8",
        ) from exc
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _title(path: Path, text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip().lstrip("#").strip()
        if stripped:
            return stripped[:120]
    return path.stem


def _require_text(path: Path, text: str, what: str = "the file") -> None:
    if not text.strip():
        raise EmptyDocumentError(path, f"{what} has no text to ingest")


def read_text(path: Path, layer: Layer) -> list[Document]:
    text = _decode(path, path.read_bytes())
    _require_text(path, text)
    media = "text/markdown" if path.suffix.lower() in {".md", ".markdown"} else "text/plain"
    return [
        Document.create(
            layer=layer, title=_title(path, text), source=str(path), media_type=media, text=text
        )
    ]


def read_jsonl(path: Path, layer: Layer) -> list[Document]:
    """One JSON object a line with a ``text`` field; ``title`` and ``id`` are optional."""
    documents: list[Document] = []
    content = _decode(path, path.read_bytes())
    for lineno, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DocumentError(path, f"line {lineno}: not valid JSON ({exc.msg})") from exc
        text = record.get("text") if isinstance(record, dict) else None
        if not isinstance(text, str):
            raise DocumentError(
                path, f"line {lineno}: expected an object with a string 'text' field"
            )
        _require_text(path, text, f"line {lineno}")
        source = f"{path}#{record.get('id', lineno)}"
        title = str(record.get("title") or _title(path, text))
        documents.append(
            Document.create(
                layer=layer, title=title, source=source, media_type="text/plain", text=text
            )
        )
    if not documents:
        raise EmptyDocumentError(path, "contains no JSON lines")
    return documents


def read_pdf(path: Path, layer: Layer) -> list[Document]:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(path)
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PyPdfError, ValueError, KeyError, OSError) as exc:
        raise UnreadableDocumentError(path, f"is not a readable PDF ({exc})") from exc
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text.strip():
        raise EmptyDocumentError(
            path,
            f"the PDF has {len(pages)} page(s) but no text layer (a scan?)",
            hint="run OCR first, e.g. `ocrmypdf in.pdf out.pdf`, then ingest the result",
        )
    return [
        Document.create(
            layer=layer, title=_title(path, text), source=str(path),
            media_type="application/pdf", text=text,
        )
    ]


READERS: dict[str, Reader] = {
    ".txt": read_text,
    ".text": read_text,
    ".md": read_text,
    ".markdown": read_text,
    ".jsonl": read_jsonl,
    ".pdf": read_pdf,
}


def read_documents(path: Path, layer: Layer, *, max_file_mb: float) -> list[Document]:
    """Read one file into documents, or raise a DocumentError that says why not."""
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise UnsupportedFormatError(
            path, f"unsupported file type {path.suffix or '(none)'!r}",
            hint=f"supported: {', '.join(sorted(READERS))}",
        )
    if not path.is_file():
        raise DocumentError(path, "no such file")
    size_mb = path.stat().st_size / 1_000_000
    if size_mb > max_file_mb:
        raise DocumentTooLargeError(
            path, f"is {size_mb:.1f} MB, over the {max_file_mb:g} MB ingest limit",
            hint="split it into smaller documents, or raise ingest.max_file_mb "
            "(MEDKG_INGEST__MAX_FILE_MB)",
        )
    return reader(path, layer)
