"""Run configs: TOML in, typos and wrong types out with one clear line."""

from __future__ import annotations

import pytest

from kgb_core.config import RunConfig, apply_overrides, config_from_mapping, load_config
from kgb_core.errors import UserError

GOOD = """
[run]
sources = ["aten"]
backend = "cpu"
db = "x.db"

[method]
name = "reference"

[evaluation]
seeds = [3, 4, 5]
timeout_s = 30
worker_reuse = false

[timing]
rep_ms = 50
"""


def test_a_full_config_is_read(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text(GOOD)
    config = load_config(path)
    assert config.sources == ["aten"] and config.backend == "cpu" and config.db == "x.db"
    assert config.seeds == [3, 4, 5] and config.timeout_s == 30 and not config.worker_reuse
    assert config.timing_settings == {"rep_ms": 50}


def test_cli_flags_override_the_file_and_unset_flags_do_not():
    config = config_from_mapping({"run": {"backend": "cpu", "sources": ["aten"]}})
    apply_overrides(config, backend="nvidia", sources=None, ops=[])
    assert config.backend == "nvidia" and config.sources == ["aten"]


@pytest.mark.parametrize("data,message", [
    ({"runn": {}}, "unknown section \\[runn\\] \\(did you mean 'run'\\?\\)"),
    ({"run": {"backnd": "cpu"}}, "unknown key 'backnd' in \\[run\\] \\(did you mean 'backend'\\?\\)"),
    ({"evaluation": {"timeout_s": "long"}}, "timeout_s must be int or float, got str"),
    ({"evaluation": {"worker_reuse": 1}}, "worker_reuse must be bool"),
    ({"evaluation": {"seeds": []}}, "at least one seed"),
    ({"evaluation": {"seeds": ["a"]}}, "seeds must be a list of int"),
    ({"run": "aten"}, "must be a table"),
])
def test_bad_configs_are_one_line_user_errors(data, message):
    with pytest.raises(UserError, match=message):
        config_from_mapping(data)


def test_malformed_toml_and_missing_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[run\nsources = ")
    with pytest.raises(UserError, match="not valid TOML"):
        load_config(bad)
    with pytest.raises(UserError, match="does not exist"):
        load_config(tmp_path / "missing.toml")


def test_method_options_are_passed_through():
    config = config_from_mapping({"method": {"name": "llm", "model": "m", "samples": 4}})
    assert config.method == "llm" and config.method_options == {"model": "m", "samples": 4}
    assert RunConfig().method == ""  # the default method, as the plugins declare it
