from pathlib import Path

import pytest

from medkg.config import Settings
from medkg.errors import ConfigError


def test_defaults_round_trip_through_toml(tmp_path: Path) -> None:
    path = tmp_path / "medkg.toml"
    Settings.load(path).save(path)
    assert Settings.load(path) == Settings()


def test_file_values_apply(tmp_path: Path) -> None:
    path = tmp_path / "medkg.toml"
    path.write_text("[retrieval]\ntop_chunks = 3\n")
    assert Settings.load(path).retrieval.top_chunks == 3


def test_environment_overrides_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "medkg.toml"
    path.write_text("[retrieval]\ntop_chunks = 3\n")
    monkeypatch.setenv("MEDKG_RETRIEVAL__TOP_CHUNKS", "9")
    assert Settings.load(path).retrieval.top_chunks == 9


def test_bad_toml_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "medkg.toml"
    path.write_text("[retrieval\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Settings.load(path)


def test_invalid_value_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "medkg.toml"
    path.write_text("[ingest]\nchunker = 'magic'\n")
    with pytest.raises(ConfigError, match="invalid configuration"):
        Settings.load(path)


def test_unknown_section_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "medkg.toml"
    path.write_text("[retreival]\ntop_chunks = 3\n")
    with pytest.raises(ConfigError):
        Settings.load(path)


def test_defect_13_config_typos_are_errors_not_ignored(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "medkg.toml"
    path.write_text("[retrieval]\ntop_chunk = 3\n")  # a key the section does not have
    with pytest.raises(ConfigError, match=r"medkg.toml: retrieval.top_chunk: Extra inputs"):
        Settings.load(path)
    path.write_text("")
    monkeypatch.setenv("MEDKG_RETRIEVAL__TOP_CHUNK", "3")
    with pytest.raises(ConfigError, match="unknown setting in the environment: "
                       "MEDKG_RETRIEVAL__TOP_CHUNK") as err:
        Settings.load(path)
    assert "top_chunks" in str(err.value)  # the hint lists the section's keys
    monkeypatch.delenv("MEDKG_RETRIEVAL__TOP_CHUNK")
    monkeypatch.setenv("MEDKG_INGEST", "notadict")
    with pytest.raises(ConfigError, match="MEDKG_INGEST"):
        Settings.load(path)


def test_defect_13_bad_environment_values_name_the_variable(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "medkg.toml"
    path.write_text("[retrieval]\ntop_chunks = 3\n")
    monkeypatch.setenv("MEDKG_RETRIEVAL__TOP_CHUNKS", "many")
    with pytest.raises(ConfigError) as err:
        Settings.load(path)
    message = str(err.value)
    assert "the environment variable MEDKG_RETRIEVAL__TOP_CHUNKS" in message
    assert "medkg.toml" not in message  # the file is fine; it is not blamed
