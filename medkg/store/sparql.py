"""The graph in any SPARQL 1.1 server (Virtuoso, GraphDB, Fuseki, Oxigraph's
server, ...), over the SPARQL 1.1 Protocol.

:class:`SPARQLProtocolStore` is an rdflib ``Store``: :class:`~medkg.store.rdf.RDFGraphStore`
runs on it unchanged, as it runs on Oxigraph, so every query and write of the
embedded store is the one sent to the server (the contract suite proves it).

- **Scope.** A server holds other data (Virtuoso keeps its own system graphs):
  a pattern without a graph is matched only in this store's named graphs
  (``VALUES ?g { ... }``), so counts and scans see medkg's graph only.
- **Values.** Every term reaches the server through :func:`sparql_term`, which
  writes IRIs it has checked and literals with every quote, backslash and
  control character escaped; user text is never spliced in any other way.
- **Writes.** ``INSERT DATA`` / ``DELETE DATA`` requests of at most
  ``batch_size`` quads and about 256 KB, each one request (one transaction on
  Virtuoso); with ``graph_store_url`` set, inserts go as N-Triples POSTs of the
  Graph Store Protocol instead (parsed by the server's bulk loader, not its
  SPARQL compiler). A
  write larger than one batch puts every ``rdf:type`` quad in its last request
  and removes them in its last request, so a node becomes visible only when all
  of it is there, and stays visible until all of it is gone: a crash between
  requests leaves what the next (idempotent) run finishes.
- **Literals.** ``"x"`` and ``"x"^^xsd:string`` are one term in RDF 1.1 but two
  in Virtuoso: strings are always written plain and read back plain.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rdflib import RDF, XSD, BNode, Graph, Literal, URIRef, Variable
from rdflib.query import Result
from rdflib.store import Store
from rdflib.term import Node

from medkg.errors import ConfigError, StoreError

if TYPE_CHECKING:
    import httpx

_IRI_UNSAFE = frozenset('<>"{}|^`\\ \t\n\r')
_RESULTS_JSON = "application/sparql-results+json"
# Virtuoso's SPARQL compiler runs out of memory on an INSERT DATA of a few MB.
MAX_REQUEST_BYTES = 256_000


def sparql_term(term: Node) -> str:
    """``term`` in SPARQL syntax, safe whatever text it holds: an IRI is refused
    if a character could end it; a literal's every quote, backslash and control
    character is escaped (``\\uXXXX``), so its text can never leave the string."""
    if isinstance(term, URIRef):
        value = str(term)
        if not _sendable(value):
            raise StoreError(f"cannot send the IRI {value!r} to a SPARQL server")
        return f"<{value}>"
    if isinstance(term, Literal):
        text = "".join(_ESCAPES.get(c) or (f"\\u{ord(c):04X}" if ord(c) < 0x20 or c in
                                           "\x7f\u2028\u2029" else c) for c in str(term))
        if term.language:
            return f'"{text}"@{_language(term.language)}'
        if term.datatype is not None and term.datatype != XSD.string:
            return f'"{text}"^^{sparql_term(URIRef(str(term.datatype)))}'
        return f'"{text}"'
    if isinstance(term, Variable):
        if not str(term).isidentifier():
            raise StoreError(f"not a SPARQL variable name: {term!r}")
        return f"?{term}"
    if isinstance(term, BNode):
        raise StoreError("the sparql backend stores no blank nodes (medkg mints an IRI "
                         "for every node)")
    raise StoreError(f"cannot write the RDF term {term!r}")


def _sendable(iri: str) -> bool:
    return bool(iri) and not (_IRI_UNSAFE & set(iri)) and all(ord(c) >= 0x20 for c in iri)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _language(tag: str) -> str:
    if not all(part.isalnum() for part in tag.split("-")):
        raise StoreError(f"not a language tag: {tag!r}")
    return tag


def _term(value: dict[str, str]) -> Node:
    """One value of a SPARQL JSON result as an rdflib term (``xsd:string`` read plain)."""
    kind = value.get("type")
    if kind == "uri":
        return URIRef(value["value"])
    if kind in ("literal", "typed-literal"):
        datatype = value.get("datatype")
        if value.get("xml:lang"):
            return Literal(value["value"], lang=value["xml:lang"])
        if datatype and datatype != str(XSD.string):
            return Literal(value["value"], datatype=URIRef(datatype))
        return Literal(value["value"])
    if kind == "bnode":
        return BNode(value["value"])
    raise StoreError(f"the SPARQL server sent a value of unknown type {kind!r}")


@dataclass(frozen=True)
class Endpoint:
    """Where a SPARQL server answers, and how to log in (the password is read
    from the environment variable the settings name, never from a file)."""

    query_url: str
    update_url: str
    user: str = ""
    password_env: str = ""
    auth: str = "basic"  # or "digest"
    timeout: float = 300.0
    graph_store_url: str = ""  # SPARQL 1.1 Graph Store Protocol endpoint, for bulk writes

    def credentials(self) -> httpx.Auth | None:
        import httpx

        if not self.user:
            return None
        if not self.password_env:
            raise ConfigError("store.user is set but store.password_env is not",
                              hint="name the environment variable that holds the password")
        password = os.environ.get(self.password_env)
        if password is None:
            raise ConfigError(f"the environment variable {self.password_env} (store."
                              "password_env) is not set", hint="export it before running medkg")
        if self.auth == "digest":
            return httpx.DigestAuth(self.user, password)
        return httpx.BasicAuth(self.user, password)


class SPARQLProtocolStore(Store):
    """An rdflib store on a SPARQL 1.1 server, limited to the named graphs ``graphs``."""

    context_aware = True
    formula_aware = False
    transaction_aware = False
    graph_aware = True

    def __init__(self, endpoint: Endpoint, graphs: Sequence[URIRef], *,
                 batch_size: int = 2000, read_only: bool = False,
                 transport: httpx.BaseTransport | None = None) -> None:
        import httpx

        super().__init__()
        self.endpoint = endpoint
        self.graphs = list(graphs)
        self.batch_size = batch_size
        self.read_only = read_only
        self.requests = 0
        self._client = httpx.Client(auth=endpoint.credentials(), timeout=endpoint.timeout,
                                    headers={"User-Agent": "medkg"}, transport=transport)
        self._contexts: dict[URIRef, Graph] = {}
        self._namespaces: dict[str, URIRef] = {}

    # -- the protocol ---------------------------------------------------------

    def _post(self, url: str, form: dict[str, str], accept: str | None) -> httpx.Response:
        import httpx

        self.requests += 1
        headers = {"Accept": accept} if accept else {}
        try:
            response = self._client.post(url, data=form, headers=headers)
        except httpx.HTTPError as exc:
            raise StoreError(f"the SPARQL server at {url} did not answer: {exc}",
                             hint="is it running, and is store.url right?") from exc
        if response.status_code in (401, 403):
            raise StoreError(f"the SPARQL server at {url} refused medkg "
                             f"(HTTP {response.status_code})",
                             hint="check store.user, store.password_env and store.auth, "
                                  "and that this user may update")
        if response.status_code >= 400:
            raise StoreError(f"the SPARQL server at {url} answered HTTP "
                             f"{response.status_code}: {response.text[:500]}")
        return response

    def select(self, query: str) -> tuple[list[str], list[list[Node | None]]]:
        """Run a SELECT; (variable names, rows of terms, None where unbound)."""
        body = self._json(query)
        names: list[str] = body["head"].get("vars", [])
        rows = [[_term(b[n]) if n in b else None for n in names]
                for b in body["results"]["bindings"]]
        return names, rows

    def _json(self, query: str) -> dict[str, Any]:
        response = self._post(self.endpoint.query_url, {"query": query}, _RESULTS_JSON)
        # Virtuoso cuts a result at its ResultSetMaxRows and says so only in a header.
        cut = response.headers.get("X-SPARQL-MaxRows")
        if cut:
            raise StoreError(f"the SPARQL server cut a result at {cut} rows",
                             hint="raise the server's row limit (Virtuoso: "
                                  "[SPARQL] ResultSetMaxRows = 0 in virtuoso.ini)")
        try:
            data: dict[str, Any] = response.json()
        except ValueError as exc:
            raise StoreError("the SPARQL server's answer is not SPARQL JSON results: "
                             f"{response.text[:300]!r}") from exc
        return data

    def run_update(self, update: str) -> None:
        if self.read_only:
            raise StoreError("this graph store was opened read-only")
        self._post(self.endpoint.update_url, {"update": update}, None)

    # -- writing ----------------------------------------------------------------

    def _requests(self, quads: Iterable[tuple[Node, Node, Node, Node]]
                  ) -> Iterator[dict[URIRef, list[str]]]:
        """``quads`` as N-Triples lines by graph, a request's worth at a time (at
        most ``batch_size`` quads and about :data:`MAX_REQUEST_BYTES`), every
        ``rdf:type`` quad in the last ones."""
        ordered = sorted(quads, key=lambda q: q[1] == RDF.type)
        by_graph: dict[URIRef, list[str]] = {}
        count = size = 0
        for s, p, o, g in ordered:
            line = f"{sparql_term(s)} {sparql_term(p)} {sparql_term(o)} ."
            by_graph.setdefault(self._named(g), []).append(line)
            count, size = count + 1, size + len(line)
            if count >= self.batch_size or size >= MAX_REQUEST_BYTES:
                yield by_graph
                by_graph, count, size = {}, 0, 0
        if by_graph:
            yield by_graph

    def _data(self, verb: str, quads: Iterable[tuple[Node, Node, Node, Node]]) -> None:
        """``INSERT DATA`` or ``DELETE DATA`` of ``quads``, in requests of bounded size."""
        for by_graph in self._requests(quads):
            body = " ".join(f"GRAPH {sparql_term(g)} {{ {' '.join(lines)} }}"
                            for g, lines in by_graph.items())
            self.run_update(f"{verb} {{ {body} }}")

    def insert_quads(self, quads: Iterable[tuple[Node, Node, Node, Node]]) -> None:
        """Add quads: through the Graph Store Protocol where the settings name its
        endpoint (an N-Triples POST per graph: far faster for large writes than a
        parsed ``INSERT DATA``), else ``INSERT DATA`` updates."""
        if not self.endpoint.graph_store_url:
            self._data("INSERT DATA", quads)
            return
        if self.read_only:
            raise StoreError("this graph store was opened read-only")
        for by_graph in self._requests(quads):
            for graph, lines in by_graph.items():
                self.post_ntriples(graph, "\n".join(lines) + "\n")

    def post_ntriples(self, graph: URIRef, ntriples: str) -> None:
        import httpx

        url = self.endpoint.graph_store_url
        self.requests += 1
        try:
            response = self._client.post(
                url, params={"graph": str(graph)}, content=ntriples.encode("utf-8"),
                headers={"Content-Type": "application/n-triples; charset=utf-8"})
        except httpx.HTTPError as exc:
            raise StoreError(f"the graph store at {url} did not answer: {exc}",
                             hint="is store.graph_store_url right?") from exc
        if response.status_code >= 400:
            raise StoreError(f"the graph store at {url} answered HTTP "
                             f"{response.status_code}: {response.text[:500]}",
                             hint="check store.graph_store_url and that this user may write")

    def delete_quads(self, quads: Iterable[tuple[Node, Node, Node, Node]]) -> None:
        self._data("DELETE DATA", quads)

    def _named(self, graph: Node) -> URIRef:
        name = getattr(graph, "identifier", graph)
        if not isinstance(name, URIRef) or name not in self.graphs:
            raise StoreError(f"{name} is not one of this store's graphs")
        return name

    def add(self, triple: tuple[Node, Node, Node], context: Any, quoted: bool = False) -> None:
        self.insert_quads([(*triple, context)])

    def addN(self, quads: Iterable[tuple[Node, Node, Node, Any]]) -> None:
        self.insert_quads(quads)

    def remove(self, triple: tuple[Node | None, Node | None, Node | None],
               context: Any = None) -> None:
        s, p, o = triple
        if any(isinstance(t, URIRef) and not _sendable(str(t)) for t in triple):
            return  # nothing to remove: no IRI of the store holds such characters
        if context is not None and None not in triple:
            self.delete_quads([(s, p, o, context)])  # type: ignore[list-item]
            return
        pattern = self._pattern(triple)
        self.run_update(f"DELETE {{ GRAPH ?g {{ {pattern} }} }} WHERE {{ "
                        f"{self._scope(context)} GRAPH ?g {{ {pattern} }} }}")

    # -- reading ----------------------------------------------------------------

    def _scope(self, context: Any) -> str:
        """``VALUES ?g`` naming the one graph asked for, or all of this store's."""
        if context is not None and getattr(context, "identifier", None) in self.graphs:
            return f"VALUES ?g {{ {sparql_term(context.identifier)} }}"
        if context is not None:
            return "VALUES ?g { }"  # a graph that is not ours: nothing
        return "VALUES ?g { " + " ".join(sparql_term(g) for g in self.graphs) + " }"

    @staticmethod
    def _pattern(triple: tuple[Node | None, Node | None, Node | None]) -> str:
        names = ("s", "p", "o")
        return " ".join(sparql_term(t if t is not None else Variable(n))
                        for t, n in zip(triple, names, strict=True))

    def _context(self, name: URIRef) -> Graph:
        if name not in self._contexts:
            self._contexts[name] = Graph(store=self, identifier=name)
        return self._contexts[name]

    def triples(self, triple_pattern: Any, context: Any = None
                ) -> Iterator[tuple[tuple[Node, Node, Node], Iterator[Graph]]]:
        s, p, o = triple_pattern
        if any(isinstance(t, URIRef) and not _sendable(str(t)) for t in (s, p, o)):
            return  # no IRI of the store holds such characters: nothing matches
        query = (f"SELECT ?s ?p ?o ?g WHERE {{ {self._scope(context)} "
                 f"GRAPH ?g {{ {self._pattern((s, p, o))} }} }}")
        _names, rows = self.select(query)
        for rs, rp, ro, rg in rows:
            found = (rs if s is None else s, rp if p is None else p, ro if o is None else o)
            yield found, iter([self._context(URIRef(str(rg)))])  # type: ignore[misc]

    def __len__(self, context: Any = None) -> int:
        _n, rows = self.select(f"SELECT (COUNT(*) AS ?n) WHERE {{ {self._scope(context)} "
                               "GRAPH ?g { ?s ?p ?o } }")
        return int(str(rows[0][0])) if rows and rows[0][0] is not None else 0

    def contexts(self, triple: Any = None) -> Generator[Graph, None, None]:
        pattern = self._pattern(triple or (None, None, None))
        _n, rows = self.select(f"SELECT DISTINCT ?g WHERE {{ {self._scope(None)} "
                               f"GRAPH ?g {{ {pattern} }} }}")
        for (g,) in rows:
            yield self._context(URIRef(str(g)))

    def query(self, query: Any, initNs: Any = None, initBindings: Any = None,
              queryGraph: Any = None, **kwargs: Any) -> Result:
        """A query medkg wrote (every value in it through :func:`sparql_term`),
        run by the server."""
        if not isinstance(query, str):
            # rdflib's Store contract: NotImplementedError makes Graph.query evaluate a
            # prepared query itself, over this store's triples() (slower, still right).
            raise NotImplementedError("only query text goes to a SPARQL server")
        if initBindings:
            names = list(initBindings)
            query += (f"\nVALUES ( {' '.join(sparql_term(Variable(n)) for n in names)} ) "
                      f"{{ ( {' '.join(sparql_term(initBindings[n]) for n in names)} ) }}")
        body = self._json(query)
        if "boolean" in body:
            result = Result("ASK")
            result.askAnswer = bool(body["boolean"])
            return result
        result = Result("SELECT")
        names = body["head"].get("vars", [])
        result.vars = [Variable(n) for n in names]
        result.bindings = [{Variable(n): _term(b[n]) for n in names  # type: ignore[misc]
                            if n in b}
                           for b in body["results"]["bindings"]]
        return result

    def update(self, update: Any, initNs: Any = None, initBindings: Any = None,
               queryGraph: Any = None, **kwargs: Any) -> None:
        """An update medkg wrote, run by the server."""
        if not isinstance(update, str) or initBindings:
            # As in query(): rdflib then runs the update itself through add/remove.
            raise NotImplementedError("only update text goes to a SPARQL server")
        self.run_update(update)

    # -- graphs and namespaces (graphs exist on a server once they hold a quad) --

    def add_graph(self, graph: Graph) -> None:
        return None

    def remove_graph(self, graph: Graph) -> None:
        self.run_update(f"CLEAR SILENT GRAPH {sparql_term(self._named(graph))}")

    def bind(self, prefix: str, namespace: URIRef, override: bool = True) -> None:
        self._namespaces[prefix] = namespace

    def namespace(self, prefix: str) -> URIRef | None:
        return self._namespaces.get(prefix)

    def prefix(self, namespace: URIRef) -> str | None:
        return next((p for p, n in self._namespaces.items() if n == namespace), None)

    def namespaces(self) -> Iterator[tuple[str, URIRef]]:
        yield from self._namespaces.items()

    def close(self, commit_pending_transaction: bool = False) -> None:
        self._client.close()
