import json
from pathlib import Path

import pytest

from medkg.errors import (
    DocumentError,
    DocumentTooLargeError,
    EmptyDocumentError,
    UnreadableDocumentError,
    UnsupportedFormatError,
)
from medkg.model import Layer
from medkg.reading.readers import read_documents


def read(path: Path, max_mb: float = 25.0) -> list:
    return read_documents(path, Layer.USER, max_file_mb=max_mb)


def make_pdf(path: Path, lines: list[str]) -> Path:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4)
    y = 800
    for line in lines:
        c.drawString(72, y, line)
        y -= 20
    c.showPage()
    c.save()
    return path


def test_text_keeps_content_and_normalises_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "note.txt"
    path.write_bytes(b"Title line\r\nFever and cough.\r\n")
    [doc] = read(path)
    assert doc.text == "Title line\nFever and cough.\n"
    assert doc.title == "Title line"
    assert doc.media_type == "text/plain"


def test_markdown_title_drops_the_hashes(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("# Asthma care\n\nText.")
    [doc] = read(path)
    assert doc.title == "Asthma care" and doc.media_type == "text/markdown"


def test_jsonl_gives_one_document_per_line(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    rows = [{"id": "a", "title": "A", "text": "Fever."}, {"text": "Cough."}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    docs = read(path)
    assert [d.text for d in docs] == ["Fever.", "Cough."]
    assert docs[0].title == "A" and docs[0].source.endswith("#a")


def test_jsonl_bad_line_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text('{"text": "ok"}\n{"text": 5}\n')
    with pytest.raises(DocumentError, match="line 2"):
        read(path)


def test_pdf_with_text(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "paper.pdf", ["Metformin treats type 2 diabetes.", "Second line."])
    [doc] = read(path)
    assert "Metformin treats type 2 diabetes." in doc.text
    assert doc.media_type == "application/pdf"


def test_pdf_without_text_layer_says_so(tmp_path: Path) -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    path = tmp_path / "scan.pdf"
    with path.open("wb") as f:
        writer.write(f)
    with pytest.raises(EmptyDocumentError, match="no text layer") as err:
        read(path)
    assert err.value.hint and "OCR" in err.value.hint


def test_broken_pdf_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\nnot really a pdf")
    with pytest.raises(UnreadableDocumentError):
        read(path)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_text("  \n\t\n")
    with pytest.raises(EmptyDocumentError, match="no text"):
        read(path)


def test_binary_file_renamed_txt(tmp_path: Path) -> None:
    path = tmp_path / "image.txt"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(UnreadableDocumentError, match="binary"):
        read(path)


def test_latin1_text_is_refused_with_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "latin.txt"
    path.write_bytes("Fièvre".encode("latin-1"))
    with pytest.raises(UnreadableDocumentError, match="UTF-8") as err:
        read(path)
    assert err.value.hint == "re-save the file as UTF-8"


def test_too_large_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_text("word " * 300_000)  # 1.5 MB
    with pytest.raises(DocumentTooLargeError, match="over the 1 MB ingest limit"):
        read(path, max_mb=1)


def test_unsupported_extension(tmp_path: Path) -> None:
    path = tmp_path / "a.docx"
    path.write_text("x")
    with pytest.raises(UnsupportedFormatError, match="unsupported file type"):
        read(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match="no such file"):
        read(tmp_path / "missing.txt")
