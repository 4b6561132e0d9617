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


@pytest.mark.parametrize("method, options, says", [
    ("llm", {"model": "m", "temperature": "hot"}, "option temperature takes a number, got 'hot'"),
    ("llm", {"model": "m", "samples": True}, "option samples takes a whole number, got True"),
    ("llm", {"model": 7}, "option model takes a string, got 7"),
    ("command", {"command": ["true"], "keep_workdirs": 1},
     "option keep_workdirs takes true or false or a string, got 1"),
    ("files", {"path": "x", "samples": 1.5}, "option samples takes a whole number, got 1.5"),
])
def test_method_options_of_the_wrong_type_are_refused_by_the_core(method, options, says):
    from kgb_core.config import validate_method_options
    from kgb_core.plugins import load_registry

    config = config_from_mapping({"method": {"name": method, **options}})
    with pytest.raises(UserError) as caught:
        validate_method_options(config, load_registry().method(method))
    assert str(caught.value) == f"method {method}: {says}"


def test_right_types_unset_values_and_ints_for_floats_pass():
    from kgb_core.config import validate_method_options
    from kgb_core.plugins import load_registry

    for method, options in (("llm", {"model": "m", "temperature": 1, "base_url": None}),
                            ("command", {"command": "agent --go", "keep_workdirs": "failed",
                                         "price_input_per_mtok": 3}),
                            ("files", {"path": "x"})):
        config = config_from_mapping({"method": {"name": method, **options}})
        validate_method_options(config, load_registry().method(method))
