"""A vocabulary file's lines, decoded one by one, so that a byte that is not
UTF-8 (a Latin-1 file) is reported at its own line and column rather than at
whatever line a block decoder had reached."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medkg.errors import VocabularyError


def utf8_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of every line, a leading byte-order mark dropped."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise VocabularyError(path, None, f"cannot open: {exc.strerror}") from exc
    with handle:
        for lineno, raw in enumerate(handle, start=1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                yield lineno, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise VocabularyError(
                    path, lineno, f"not valid UTF-8 at column {exc.start + 1} "
                    f"(byte 0x{raw[exc.start]:02x}: {exc.reason})",
                    hint="re-save the file as UTF-8 (it may be Latin-1: "
                    "`iconv -f latin1 -t utf-8`)") from exc
