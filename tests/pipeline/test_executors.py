"""Chunking, encoding and extraction on worker processes and on a Dask cluster
give the chunks, vectors and graph that ingest and build in one process give;
bad executor settings are clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from medkg.errors import ConfigError
from medkg.model import Layer
from medkg.pipeline.executors import ExecutorSpec, parse_executor
from tests.conftest import EXAMPLES, SEED_OBO


def test_parse_executor() -> None:
    assert parse_executor("local", 10_000, 200) == ExecutorSpec("local")
    assert parse_executor("processes:3", 1, 200) == ExecutorSpec("processes", 3)
    assert parse_executor("dask://10.0.0.5:8786", 1, 200) == ExecutorSpec(
        "dask", address="tcp://10.0.0.5:8786")
    assert parse_executor("auto", 10, 200) == ExecutorSpec("local")  # too few to pay workers
    for bad in ("processes:0", "processes:two", "ray://host:1", "dask://", ""):
        with pytest.raises(ConfigError):
            parse_executor(bad, 1, 200)


Graph = tuple[set[str], set[str], set[tuple[str, str, str]], set[str]]


def _graph(root: Path, executor: str) -> Graph:
    """Entities, triples, links and chunks of the sample documents ingested and
    built with ``executor``; the chunk vectors are checked against those of the
    local build (the first one made)."""
    from medkg.workspace import Workspace

    with Workspace.create(root) as ws:
        ws.settings.extraction.executor = executor
        ws.load_vocabulary(SEED_OBO)
        ws.ingest([EXAMPLES / "literature"], Layer.LITERATURE)
        ws.ingest([EXAMPLES / "user"], Layer.USER)
        report = ws.build()
        assert report.documents > 0
        triples = {t.id for layer in (Layer.USER, Layer.LITERATURE)
                   for t in ws.store.iter_triples(layer)}
        links = {(x.source, x.kind.value, x.target) for x in ws.store.iter_links()}
        chunks = {c.id for layer in (Layer.USER, Layer.LITERATURE)
                  for doc_id in ws.store.document_ids(layer) for c in ws.store.chunks(doc_id)}
        index = ws.parts.index("chunks")
        vectors = {cid: index.vector(cid) for cid in chunks}
        assert all(v is not None for v in vectors.values())
        if executor == "local":
            _LOCAL_VECTORS.update(vectors)
        else:
            assert all(np.allclose(v, _LOCAL_VECTORS[cid], atol=1e-5)
                       for cid, v in vectors.items())
        return ws.store.entity_ids(), triples, links, chunks


_LOCAL_VECTORS: dict[str, object] = {}


@pytest.fixture(scope="module")
def local_graph(tmp_path_factory: pytest.TempPathFactory) -> Graph:
    return _graph(tmp_path_factory.mktemp("local") / "ws", "local")


def test_worker_processes_build_the_same_graph(
        tmp_path: Path, local_graph: Graph) -> None:
    entities, triples, links, chunks = _graph(tmp_path / "ws", "processes:2")
    assert entities and triples and chunks
    assert (entities, triples, links, chunks) == local_graph


def test_dask_cluster_builds_the_same_graph(
        tmp_path: Path, local_graph: Graph) -> None:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        address = cluster.scheduler_address.removeprefix("tcp://")
        assert _graph(tmp_path / "ws", f"dask://{address}") == local_graph
        with distributed.Client(cluster) as client:
            # the workers chunked and encoded: those given work loaded the encoder, once
            loaded = client.run(_encoders_loaded)
        assert len(loaded) == 2 and set(loaded.values()) <= {0, 1} and any(loaded.values())


def _encoders_loaded() -> int:
    from medkg.extraction import workers

    return len(workers._ENCODERS)


def test_unreachable_dask_scheduler_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    with pytest.raises(ConfigError, match="cannot reach the Dask scheduler"):
        _graph(tmp_path / "ws", "dask://127.0.0.1:9")


def test_cli_build_profile_and_executor(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from medkg.cli import app

    runner = CliRunner()
    ws = tmp_path / "ws"
    for args in (["init", str(ws)], ["vocab", "load", "-w", str(ws), str(SEED_OBO)],
                 ["ingest", "-w", str(ws), str(EXAMPLES / "literature" / "05-asthma.md")]):
        assert runner.invoke(app, args).exit_code == 0
    bad = runner.invoke(app, ["build", "-w", str(ws), "--executor", "processes:x"])
    assert bad.exit_code == 1 and "processes:2" in bad.output  # the hint names a valid one
    done = runner.invoke(app, ["build", "-w", str(ws), "--executor", "local", "--profile"])
    assert done.exit_code == 0, done.output
    rows = {line.split()[0] for line in done.output.splitlines() if line.strip()}
    assert {"stage", "extract", "link", "embed", "store"} <= rows
