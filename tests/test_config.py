"""Settings from pyproject.toml or .idxadvisor.toml, overridden by the command line; bad ones are one error line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idxadvisor.cli import run
from idxadvisor.config import Settings, load_settings, server_version_of
from idxadvisor.errors import UsageError

DEMO_LOG = Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "shop.log"


def test_pyproject_table_with_kebab_names(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.idxadvisor]\nmin-ms = 250\n'
                                             'exclude-ns = ["shop.events"]\nfail-on = "error"\n'
                                             '[tool.idxadvisor.rules.IX001]\nmin_docs_per_returned = 40\n')
    settings = load_settings({}, directory=tmp_path)
    assert (settings.min_ms, settings.exclude_ns, settings.fail_on) == (250, ["shop.events"], "error")
    assert settings.rules == {"IX001": {"min_docs_per_returned": 40}}


def test_dot_file_wins_over_pyproject_and_the_command_line_wins_over_both(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.idxadvisor]\ntop = 3\n")
    (tmp_path / ".idxadvisor.toml").write_text("top = 5\nsort_by = 'count'\n")
    assert load_settings({}, directory=tmp_path).top == 5
    settings = load_settings({"top": 9, "sort_by": None}, directory=tmp_path)
    assert (settings.top, settings.sort_by) == (9, "count")


def test_no_config_file_gives_the_defaults(tmp_path: Path) -> None:
    assert load_settings({}, directory=tmp_path) == Settings()


@pytest.mark.parametrize(("content", "message"), [
    ("top = 0", "setting 'top' (from {path}): Input should be greater than or equal to 1"),
    ("sort-by = 'speed'", "setting 'sort-by' (from {path}): Input should be 'total', 'count', 'mean', 'p95', 'max', "
                          "'docs-examined' or 'ratio'"),
    ("colour = true", "setting 'colour' (from {path}): unknown setting"),
    ("top = [", "config file {path} is not valid TOML: "),
    ("write-cost-factor = inf", "setting 'write-cost-factor' (from {path}): Input should be a finite number"),
    # finite, but its products with write counts were not (an internal error in the index selection's reasons)
    ("write-cost-factor = 1e308", "setting 'write-cost-factor' (from {path}): Input should be less than or equal to "
                                  "1000000"),
    ("min-ms = 1e400", "setting 'min-ms' (from {path}): Input should be a finite number"),
    ("min-savings-pct = nan", "setting 'min-savings-pct' (from {path}): Input should be a finite number"),
    ("server-version = '8'", "setting 'server-version' (from {path}): Value error, must look like 8.0, 7.0.5 or"),
    ("server-version = '8.0.x'", "setting 'server-version' (from {path}): Value error, must look like 8.0, 7.0.5 or"),
])
def test_bad_settings_name_the_setting(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / ".idxadvisor.toml"
    path.write_text(content + "\n")
    with pytest.raises(UsageError) as info:
        load_settings({}, directory=tmp_path)
    assert str(info.value).startswith(message.format(path=path))


@pytest.mark.parametrize(("text", "version"), [
    ("8.0", (8, 0)), ("7.0.5", (7, 0)), ("8.0.0-rc1", (8, 0)), ("4.4.0-rc13", (4, 4)), (" 6.0.4-ent ", (6, 0)),
])
def test_server_versions_as_build_info_prints_them(text: str, version: tuple[int, int]) -> None:
    assert server_version_of(text) == version
    assert Settings(server_version=text).server_version == text


@pytest.mark.parametrize("text", ["8", "eight", "8.0-", "8.0.0.0", "8.0.0-", "v8.0", "8.0.0 rc1"])
def test_what_is_not_a_server_version(text: str) -> None:
    assert server_version_of(text) is None


def test_a_bad_setting_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "settings.toml"
    config.write_text("min-ms = -5\n")
    assert run(["analyze", str(DEMO_LOG), "--config", str(config)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"idxadvisor: error: setting 'min-ms' (from {config}): Input should be greater than or "
                            "equal to 0\n")


def test_a_bad_rule_option_in_the_config_is_a_usage_error(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    config = tmp_path / "settings.toml"
    config.write_text("[rules.IX001]\nthreshold = 5\n")
    assert run(["analyze", str(DEMO_LOG), "--config", str(config)]) == 2
    assert capsys.readouterr().err == ("idxadvisor: error: settings for IX001: unknown option(s) for IX001: "
                                       "threshold\n")


def test_settings_change_the_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "settings.toml"
    config.write_text('select = ["AG"]\nfail-on = "never"\n')
    assert run(["analyze", str(DEMO_LOG), "--config", str(config), "--format", "json"]) == 0
    assert {finding["rule"] for finding in json.loads(capsys.readouterr().out)["findings"]} == {"AG001"}


@pytest.mark.parametrize(("table", "message"), [
    ('[rules.IX001]\nmin_docs_per_returned = "abc"\n',
     "settings for IX001: option 'min_docs_per_returned' must be a finite number, not 'abc'"),
    ("[rules.IX001]\nmin-docs-per-returned = true\n",
     "settings for IX001: option 'min-docs-per-returned' must be a finite number, not true"),
    ("[rules.AG001]\nmin_runs = -5\n", "settings for AG001: option 'min_runs' must not be negative, not -5"),
    ("[rules.AG001]\nmin_runs = 2.5\n", "settings for AG001: option 'min_runs' must be a whole number, not 2.5"),
    ("[rules.QY001]\nmin-ratio = nan\n", "settings for QY001: option 'min-ratio' must be a finite number, not nan"),
    # infinity would turn the rule off without a word; a number beyond a float's range was an internal error
    ("[rules.QY001]\nmin-ratio = inf\n", "settings for QY001: option 'min-ratio' must be a finite number, not inf"),
    (f"[rules.QY001]\nmin-ratio = 1{'0' * 400}\n",
     "settings for QY001: option 'min-ratio' must be a finite number, not 1000000000000000000000000000000000000..."),
    ("[rules.QY001]\nmin-ratio = 2\nmin_ratio = 3\n",
     "settings for QY001: option 'min_ratio' is given twice, as 'min-ratio' and 'min_ratio'"),
    ("[rules.IX001]\nmin_wasted_per_execution = 1\n[rules.missing-compound-index]\nmin_docs_per_returned = 2\n",
     "settings for IX001: configured twice, as 'IX001' and 'missing-compound-index'; keep one"),
])
def test_rule_options_are_validated(capsys: pytest.CaptureFixture[str], tmp_path: Path, table: str,
                                    message: str) -> None:
    config = tmp_path / "settings.toml"
    config.write_text(table)
    assert run(["analyze", str(DEMO_LOG), "--config", str(config)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"idxadvisor: error: {message}\n"


def test_rule_options_take_kebab_names_and_whole_numbers_for_fractions(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path) -> None:
    from idxadvisor.rules import select_rules

    rules = {rule.code: rule for rule in select_rules(options={"IX001": {"min-docs-per-returned": 40},
                                                               "repeated-aggregation": {"min-runs": 0}})}
    assert rules["IX001"].options == {"min_docs_per_returned": 40.0, "min_wasted_per_execution": 500.0}
    assert rules["AG001"].options["min_runs"] == 0
    config = tmp_path / "pyproject.toml"
    config.write_text("[tool.idxadvisor]\nselect = ['AG']\n[tool.idxadvisor.rules.AG001]\nmin-runs = 1000\n")
    assert run(["analyze", str(DEMO_LOG), "--config", str(config), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []
