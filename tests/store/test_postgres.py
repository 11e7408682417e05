"""The postgres backend as a shared store: one writer per workspace (the second is
told who holds it), readers beside it, credentials never from medkg.toml. The
store contract itself runs over postgres in test_contract.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from medkg.config import StoreConfig
from medkg.errors import ConfigError, StoreError
from medkg.model import Layer
from medkg.store.registry import open_store
from medkg.store.tables import TableStore
from tests.store.test_projection import _fill


@pytest.fixture
def config(request: pytest.FixtureRequest) -> StoreConfig:
    from tests.conftest import store_config

    return store_config("postgres", request)  # type: ignore[return-value]


def test_one_writer_per_workspace_and_readers_beside_it(config: StoreConfig,
                                                         tmp_path: Path) -> None:
    writer = open_store(config, tmp_path)
    assert isinstance(writer, TableStore)
    _fill(writer)
    with pytest.raises(StoreError, match=rf"being written by medkg pid {os.getpid()} on "):
        open_store(config, tmp_path)
    reader = open_store(config, tmp_path, read_only=True)
    assert reader.counts() == writer.counts()
    with pytest.raises(StoreError, match="read-only"):
        reader.set_review_state("tri-x", writer.triples()[0].review)
    # another workspace in the same database is another schema, and writable
    other = open_store(config.model_copy(update={"schema_name": config.schema_name + "_b"}),
                       tmp_path)
    assert other.document_ids() == []
    other.close()
    reader.close()
    written = writer.counts()
    writer.close()  # the lock goes with the connection
    again = open_store(config, tmp_path)
    assert again.counts() == written and again.document_ids(Layer.LITERATURE)
    again.close()


def test_a_reader_before_any_writer_is_told_so(config: StoreConfig, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no medkg tables in schema"):
        open_store(config, tmp_path, read_only=True)


def test_a_password_is_never_taken_from_the_settings(config: StoreConfig) -> None:
    with pytest.raises(ValidationError, match="must not hold a password"):
        StoreConfig(backend="postgres", url=config.url.replace("medkg@", "medkg:secret@"))
    with pytest.raises(ValidationError, match="must not hold a password"):
        StoreConfig(backend="postgres", url=config.url + "?password=secret")


def test_the_password_comes_from_a_private_file_or_the_environment(
        config: StoreConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "pgpass"
    secret.write_text(os.environ["MEDKG_TEST_PG_PASSWORD"] + "\n")
    secret.chmod(0o644)
    by_file = config.model_copy(update={"password_env": "", "password_file": str(secret)})
    with pytest.raises(ConfigError, match="can be read by others"):
        open_store(by_file, tmp_path)
    secret.chmod(0o600)
    store = open_store(by_file, tmp_path)
    assert store.document_ids() == []
    store.close()
    monkeypatch.delenv("MEDKG_TEST_PG_PASSWORD")
    with pytest.raises(ConfigError, match="MEDKG_TEST_PG_PASSWORD, which is not set"):
        open_store(config, tmp_path)
    monkeypatch.setenv("MEDKG_TEST_PG_PASSWORD", "wrong")
    with pytest.raises(StoreError, match="cannot open the graph tables at postgresql://"):
        open_store(config, tmp_path)
