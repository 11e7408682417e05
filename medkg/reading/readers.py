"""Document readers: plain text, Markdown, JSONL (one document a line) and PDF.

A reader returns whole :class:`Document` objects or raises a
:class:`DocumentError` subclass that says what is wrong with the file; it
never returns a half-read document.
"""

from __future__ import annotations

import contextlib
import json
import logging
import stat
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from medkg.errors import (
    DocumentError,
    DocumentTooLargeError,
    EmptyDocumentError,
    UnreadableDocumentError,
    UnsupportedFormatError,
)
from medkg.model import Document, Layer, stable_id
from medkg.text import clean_text, parse_json, path_text

Reader = Callable[[Path, Layer], list[Document]]
log = logging.getLogger(__name__)


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _decode(path: Path, data: bytes) -> str:
    """UTF-8 text (a UTF-16 file with its byte-order mark is decoded too); NUL
    bytes anywhere in it mean a binary file."""
    if data.startswith(_UTF16_BOMS):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise UnreadableDocumentError(
                path, f"starts as UTF-16 text but is not valid UTF-16 (byte {exc.start})",
                hint="re-save the file as UTF-8") from exc
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            if b"\x00" in data:
                raise _binary(path, data.index(b"\x00")) from exc
            raise UnreadableDocumentError(
                path, f"is not valid UTF-8 text (byte {exc.start}: {exc.reason})",
                hint="re-save the file as UTF-8",
            ) from exc
    if "\x00" in text:
        raise _binary(path, text.index("\x00"))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _binary(path: Path, at: int) -> UnreadableDocumentError:
    return UnreadableDocumentError(
        path, f"contains a NUL character (at offset {at}): a binary file, not text",
        hint="convert it to plain text, Markdown or PDF first")


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
            layer=layer, title=_title(path, text), source=path_text(path), media_type=media,
            text=text
        )
    ]


def read_jsonl(path: Path, layer: Layer) -> list[Document]:
    """One JSON object a line with a ``text`` field; ``title`` and ``id`` are optional.

    A record's identity is its file and its ``id``; a record without one is known
    by its text (``#text-`` and a digest), never by its line, so a record added
    above it does not make it another document. The whole file is checked before
    any record is returned: a repeated ``id`` is an error naming both lines.
    """
    documents: list[Document] = []
    content = _decode(path, path.read_bytes())
    ids: dict[str, int] = {}
    for lineno, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = parse_json(line)
        except json.JSONDecodeError as exc:
            raise DocumentError(path, f"line {lineno}: not valid JSON ({exc.msg})") from exc
        except ValueError as exc:
            raise DocumentError(path, f"line {lineno}: not valid JSON ({exc})") from exc
        text = record.get("text") if isinstance(record, dict) else None
        if not isinstance(record, dict) or not isinstance(text, str):
            raise DocumentError(
                path, f"line {lineno}: expected an object with a string 'text' field"
            )
        _require_text(path, text, f"line {lineno}")
        text = clean_text(text)
        key = _record_key(path, lineno, record.get("id"), text)
        if key in ids:
            what = (f"the id {record['id']!r}" if record.get("id") is not None
                    else "the same text without an id")
            raise DocumentError(
                path, f"line {lineno}: {what} repeats line {ids[key]}",
                hint="give each record its own id (a record's id is its identity: a "
                "second one would replace the first)")
        ids[key] = lineno
        title = clean_text(str(record.get("title") or _title(path, text)))
        documents.append(
            Document.create(
                layer=layer, title=title, source=f"{path_text(path)}#{key}",
                media_type="text/plain", text=text,
            )
        )
    if not documents:
        raise EmptyDocumentError(path, "contains no JSON lines")
    return documents


def _record_key(path: Path, lineno: int, record_id: object, text: str) -> str:
    """What names a JSONL record within its file: its ``id``, else its text."""
    if record_id is None:
        return "text-" + stable_id("r", text)[2:]
    if isinstance(record_id, bool) or not isinstance(record_id, str | int):
        raise DocumentError(path, f"line {lineno}: the id must be a string or an integer, "
                            f"not {type(record_id).__name__}")
    key = clean_text(str(record_id)).strip()
    if not key or len(key) > 200:
        raise DocumentError(path, f"line {lineno}: the id must have 1 to 200 characters")
    return key


def read_pdf(path: Path, layer: Layer) -> list[Document]:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        # pypdf reports damaged objects as warnings: say which file they are about.
        with warnings.catch_warnings(record=True) as caught, _pypdf_log(path):
            warnings.simplefilter("always")
            reader = PdfReader(path)
            pages = [page.extract_text() or "" for page in reader.pages]
        for warning in caught:
            log.warning("%s: %s", path_text(path), warning.message)
    except (PyPdfError, ValueError, KeyError, OSError) as exc:
        raise UnreadableDocumentError(path, f"is not a readable PDF ({exc})") from exc
    except Exception as exc:
        # pypdf parses untrusted bytes and, on a damaged file, can fail anywhere
        # inside (fuzzing found NotImplementedError for an unknown stream filter):
        # whatever it raises, this file cannot be read, and the error says which.
        raise UnreadableDocumentError(
            path, f"is not a readable PDF ({type(exc).__name__}: {exc})") from exc
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text.strip():
        raise EmptyDocumentError(
            path,
            f"the PDF has {len(pages)} page(s) but no text layer (a scan?)",
            hint="run OCR first, e.g. `ocrmypdf in.pdf out.pdf`, then ingest the result",
        )
    return [
        Document.create(
            layer=layer, title=_title(path, text), source=path_text(path),
            media_type="application/pdf", text=text,
        )
    ]


@contextlib.contextmanager
def _pypdf_log(path: Path) -> Iterator[None]:
    """pypdf's own log lines, said again by medkg with the file they are about.

    pypdf logs through child loggers (``pypdf._reader``, ...), whose records a
    filter on ``pypdf`` never sees: a handler on ``pypdf`` does, so the lines are
    collected there while this file is read, and not passed on unnamed."""
    logger = logging.getLogger("pypdf")
    lines: list[str] = []

    class _Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    collect, propagate = _Collect(logging.WARNING), logger.propagate
    logger.addHandler(collect)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(collect)
        logger.propagate = propagate
        for line in lines:
            log.warning("%s: %s", path_text(path), line)


READERS: dict[str, Reader] = {
    ".txt": read_text,
    ".text": read_text,
    ".md": read_text,
    ".markdown": read_text,
    ".jsonl": read_jsonl,
    ".pdf": read_pdf,
}


def _check_is_file(path: Path) -> None:
    """A regular file, or an error that says what the path is instead."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError as exc:
        if path.is_symlink():
            raise DocumentError(path, "is a symbolic link to a missing file") from exc
        raise DocumentError(path, "no such file") from exc
    except OSError as exc:  # ELOOP, EACCES, ...
        raise DocumentError(path, f"cannot be read: {exc.strerror}") from exc
    if stat.S_ISREG(mode):
        return
    what = ("a directory" if stat.S_ISDIR(mode) else "a named pipe (FIFO)"
            if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
    raise DocumentError(path, f"is {what}, not a file", hint="ingest regular files")


def read_documents(path: Path, layer: Layer, *, max_file_mb: float,
                   max_document_chars: int = 1_000_000) -> list[Document]:
    """Read one file into documents, or raise a DocumentError that says why not."""
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise UnsupportedFormatError(
            path, f"unsupported file type {path.suffix or '(none)'!r}",
            hint=f"supported: {', '.join(sorted(READERS))}",
        )
    _check_is_file(path)
    size_mb = path.stat().st_size / 1_000_000
    if size_mb > max_file_mb:
        raise DocumentTooLargeError(
            path, f"is {size_mb:.1f} MB, over the {max_file_mb:g} MB ingest limit",
            hint="split it into smaller documents, or raise ingest.max_file_mb "
            "(MEDKG_INGEST__MAX_FILE_MB)",
        )
    documents = reader(path, layer)
    for doc in documents:
        if len(doc.text) > max_document_chars:
            raise DocumentTooLargeError(
                path, f"{doc.source}: {len(doc.text):,} characters, over the "
                f"{max_document_chars:,} a document may have",
                hint="split it into smaller documents, or raise ingest.max_document_chars "
                "(MEDKG_INGEST__MAX_DOCUMENT_CHARS)")
    return documents
