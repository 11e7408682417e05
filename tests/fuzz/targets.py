"""Every reader of user input, as a fuzz target: bytes in, and either the input
loads or a :class:`medkg.errors.MedKGError` that names the file comes out.
Anything else escaping is a defect. Used by the property tests (hypothesis)
and the coverage-guided fuzzer (atheris, ``fuzz_readers.py``).

The seeds are small valid inputs we wrote for each format."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path

from pydantic import BaseModel

from medkg.config import Settings
from medkg.errors import MedKGError
from medkg.model import Layer
from medkg.text import clean_text


@dataclass(frozen=True)
class Target:
    name: str
    file: str  # the name the input is written under
    read: Callable[[Path], object]  # reads the file (or its directory)
    seeds: tuple[bytes, ...]
    directory: bool = False  # the reader takes the directory that holds the file


def _documents(path: Path) -> object:
    from medkg.reading.readers import read_documents

    return read_documents(path, Layer.USER, max_file_mb=5, max_document_chars=200_000)


def _vocabulary(path: Path) -> object:
    from medkg.ontology.loaders import load_file

    return load_file(path)


def _kgx(path: Path) -> object:
    from medkg.export.kgx_reader import read_kgx

    edges = path.with_name("graph_edges.tsv")
    if not edges.exists():
        edges.write_text(KGX_EDGES, encoding="utf-8")
    return read_kgx([path.parent])


def _kgx_edges(path: Path) -> object:
    from medkg.export.kgx_reader import read_kgx

    path.with_name("graph_nodes.tsv").write_text(KGX_NODES, encoding="utf-8")
    return read_kgx([path.parent])


def _settings(path: Path) -> object:
    from medkg.config import Settings

    return Settings.load(path)


OBO = b"""format-version: 1.2
ontology: fuzz-seed

[Term]
id: FUZZ:0000001
name: dry cough
def: "A cough that brings up no mucus." []
synonym: "non-productive cough" EXACT []
is_a: FUZZ:0000002 ! cough
xref: MESH:D003371
property_value: semantic_group "DISO" xsd:string

[Term]
id: FUZZ:0000002
name: cough
is_obsolete: false
"""
TABLE = (b"id\tname\tsynonyms\tdefinition\tsemantic_group\n"
         b"FUZZ:1\tmetformin\tglucophage|dimethylbiguanide\tA biguanide.\tCHEM\n"
         b"FUZZ:2\ttype 2 diabetes\tT2DM\t\tDISO\n")
MESH_LIST = (b"id,scheme,subject\n"
             b"https://id.nlm.nih.gov/mesh/D008687,MeSH,Metformin\n")
RRF = (b"C0000001|ENG|P|L0000001|PF|S0000001|Y|A0000001||M0000001|D000001|MSH|MH|D000001|"
       b"Metformin|0|N|256|\n"
       b"C0000001|ENG|S|L0000002|PF|S0000002|N|A0000002||M0000001|D000001|MSH|EN|D000001|"
       b"Glucophage|0|N|256|\n")
KGX_NODES = ("id\tcategory\tname\n"
             "MESH:D008687\tbiolink:ChemicalEntity\tMetformin\n"
             "MESH:D003924\tbiolink:Disease\tType 2 diabetes\n")
KGX_EDGES = ("subject\tpredicate\tobject\tid\n"
             "MESH:D008687\tbiolink:treats\tMESH:D003924\te1\n")
TOML = b"""[extraction]
engine = "builtin"
context_chars = 240

[retrieval]
mode = "hybrid"

[llm]
backend = "none"
"""


def _pdf_seed() -> bytes:
    """A one-page PDF with a line of text (reportlab, a test dependency)."""
    from io import BytesIO

    from reportlab.pdfgen import canvas

    out = BytesIO()
    page = canvas.Canvas(out, pagesize=(300, 200), invariant=1)
    page.drawString(20, 100, "Metformin treats type 2 diabetes.")
    page.save()
    return out.getvalue()


PDF_SEED = _pdf_seed()

TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("text", "note.txt", _documents, (
        b"Clinic note.\nMetformin treats type 2 diabetes.\n", "Caf\u00e9 \u202eRTL\u202c".encode(),
        b"\xef\xbb\xbfBOM first\r\nCRLF line\r\n")),
    Target("markdown", "paper.md", _documents, (
        b"# Title\n\nMetformin *treats* [type 2 diabetes](x).\n\n- a\n- b\n",
        b"---\ntitle: front matter\n---\n# H\n```\ncode\n```\n")),
    Target("jsonl", "corpus.jsonl", _documents, (
        b'{"id": "1", "title": "T", "text": "Metformin treats diabetes."}\n'
        b'{"id": "2", "text": "Lisinopril causes cough."}\n',)),
    Target("pdf", "paper.pdf", _documents, (PDF_SEED,)),
    Target("obo", "vocab.obo", _vocabulary, (OBO,)),
    Target("tsv", "vocab.tsv", _vocabulary, (TABLE,)),
    Target("csv", "vocab.csv", _vocabulary, (TABLE.replace(b"\t", b","), MESH_LIST)),
    Target("rrf", "MRCONSO.RRF", _vocabulary, (RRF,), directory=True),
    Target("kgx-nodes", "graph_nodes.tsv", _kgx, (KGX_NODES.encode(),)),
    Target("kgx-edges", "graph_edges.tsv", _kgx_edges, (KGX_EDGES.encode(),)),
    Target("toml", "medkg.toml", _settings, (TOML, b"")),
)}


class Escaped(AssertionError):
    """An input made a reader raise something other than a MedKGError naming its file."""


def run(target: Target, data: bytes) -> bool:
    """Feed ``data`` to ``target`` in a fresh directory; True when it loaded,
    False when it was refused with a proper error; :class:`Escaped` otherwise."""
    with tempfile.TemporaryDirectory(prefix="medkg-fuzz-") as tmp:
        path = Path(tmp) / target.file
        path.write_bytes(data)
        given = path.parent if target.directory else path
        try:
            loaded = target.read(given)
        except MedKGError as exc:
            text = str(exc)
            # a graph of several files (KGX) may name the one beside it
            if str(given) not in text and str(path.parent) not in text:
                raise Escaped(f"{target.name}: the error does not name the file: {text!r}") \
                    from exc
            return False
        except Exception as exc:  # the defect this exists to find
            raise Escaped(f"{target.name}: {type(exc).__name__}: {exc}") from exc
        for text in _texts(loaded):
            if clean_text(text) != text:
                raise Escaped(f"{target.name}: loaded text no output format can carry: "
                              f"{text!r}")
        return True


def _texts(value: object) -> Iterator[str]:
    """Every string inside what a reader returned (documents, concepts)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, BaseModel) and not isinstance(value, Settings):
        yield from _texts(value.model_dump())
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _texts(k)
            yield from _texts(v)
    elif isinstance(value, list | tuple | set | frozenset):
        for v in value:
            yield from _texts(v)
    elif is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            yield from _texts(getattr(value, f.name))
