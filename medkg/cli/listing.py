"""``medkg status``, ``stats`` and ``documents``: what a workspace holds and what
its next build will do, as tables or (``--json``) the HTTP API's JSON."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from medkg.cli._common import JsonOpt, WorkspaceOpt, out, read_listing


def status(workspace: WorkspaceOpt = Path("."), as_json: JsonOpt = False) -> None:
    """What the next build will do: documents never extracted, and those whose
    extraction is stale (settings or models changed; a vocabulary load touched them)."""
    from medkg.pipeline import listing

    st = read_listing(workspace, listing.status, as_json)
    if st is None:
        return
    table = Table("documents", "count", "next build")
    for what, ids, then in (
            ("extracted, current", st.current, "kept"),
            ("never extracted (or unfinished)", st.new, "extracts"),
            ("stale: extraction settings or models changed", st.stale_settings, "re-extracts"),
            ("stale: a vocabulary load touched them", st.stale_vocabulary, "re-extracts")):
        table.add_row(what, str(len(ids)), then if ids else "-")
    out.print(table)
    if st.pending_deletes:
        out.print(f"{st.pending_deletes} delete(s) cut short: the next command that writes "
                  "finishes them")
    if not st.links_current:
        out.print("cross-layer links: made again by the next build (new entities, a "
                  "vocabulary load or changed linking settings)")
    out.print(f"run `medkg build` to extract {st.to_extract} document(s)" if st.to_extract
              else "every document's extraction is current")


def stats(workspace: WorkspaceOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Counts of documents, chunks, entities, triples, concepts and links."""
    from medkg.pipeline import listing

    st = read_listing(workspace, listing.stats, as_json)
    if st is None:
        return
    table = Table("what", "count")
    table.add_row("quads", str(st.quads))
    for name, layer in (("user", st.user), ("literature", st.literature)):
        for key, value in layer.model_dump().items():
            table.add_row(f"{name}.{key}", str(value))
    for key, value in (("vocabulary.concepts", st.concepts), ("links", st.links),
                       ("review.decisions", st.decisions),
                       *((f"rulehub.{k}", n) for k, n in sorted(st.rule_outcomes.items()))):
        table.add_row(key, str(value))
    out.print(table)
    if st.llm:
        calls = Table("LLM stage", "calls", "cache hits", "tokens in", "tokens out",
                      "parsed first", "repaired", "failed", "cost USD", title="LLM ledger")
        for s in st.llm:
            calls.add_row(s.stage, str(s.calls), str(s.cache_hits), str(s.prompt_tokens),
                          str(s.completion_tokens), str(s.first_parsed), str(s.repaired),
                          str(s.failed), f"{s.cost_usd:.4f}")
        out.print(calls)
    for failure in st.llm_failures:
        out.print(f"failed {failure.stage} {failure.item}: {failure.reason}", soft_wrap=True)


def documents(workspace: WorkspaceOpt = Path("."), as_json: JsonOpt = False) -> None:
    """List the documents: id, layer, title, source and the stages done."""
    from medkg.pipeline import listing

    rows = read_listing(workspace, listing.documents, as_json)
    if rows is None:
        return
    table = Table("id", "layer", "title", "source", "stages", "replaces")
    for d in rows:
        table.add_row(d.id, d.layer.value, d.title, d.source, ", ".join(d.stages),
                      str(len(d.revision_of)) if d.revision_of else "")
    out.print(table)
