"""The documentation site: the reference pages are what docs/generate.py makes from the code as it
is (the Settings model, the argparse parser), and the site builds with `mkdocs build --strict`, so a
broken link or anchor, a page missing from the navigation or an API name mkdocstrings cannot find
fails the suite. The README stays short, its links lead somewhere, its commands parse and its
examples run."""
import dataclasses
import os
import re
import shlex
import subprocess
import sys

import pytest

from support.docs import docs_tool
from support.paths import ROOT


def read(page: str) -> str:
    with open(os.path.join(ROOT, "docs", page)) as f:
        return f.read()


def test_the_reference_pages_are_what_the_code_gives_now():
    result = subprocess.run([sys.executable, os.path.join("docs", "generate.py"), "--check"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_a_key_added_to_the_settings_model_makes_the_keys_page_stale(monkeypatch):
    tool = docs_tool()
    from neatpar.config import settings_model as settings
    grown = dataclasses.make_dataclass(
        "Settings", [("opponents", int, settings.setting(3, settings.integer(1), "opponents per genome"))],
        bases=(settings.Settings,), frozen=True)
    monkeypatch.setattr(tool.settings, "Settings", grown)
    assert tool.stale() == [os.path.join("docs", "reference", "config.md")]
    assert "## `opponents` {#opponents}" in tool.settings_page()


def test_a_flag_added_to_the_parser_makes_the_command_page_stale(monkeypatch):
    tool = docs_tool()
    build = tool.cli.build_parser

    def grown():
        parser = build()
        parser.add_argument("--color", help="colour the output")
        return parser

    monkeypatch.setattr(tool.cli, "build_parser", grown)
    assert tool.stale() == [os.path.join("docs", "reference", "cli.md")]


def test_every_key_and_every_option_has_its_entry():
    from neatpar import cli
    from neatpar.config import settings_model as settings
    keys, commands = read(os.path.join("reference", "config.md")), read(os.path.join("reference", "cli.md"))
    for f in dataclasses.fields(settings.Settings):
        assert f"## `{f.name}` {{#{f.name}}}" in keys, f.name
        assert f"- accepts: {f.metadata['reader'].accepts}" in keys, f.name
    parsers = [cli.build_parser()]
    parsers += [sub for action in parsers[0]._actions if hasattr(action, "choices") and isinstance(action.choices, dict)
                for sub in action.choices.values()]
    options = {option for parser in parsers for action in parser._actions for option in action.option_strings}
    assert {"--resume", "--envs", "--genome", "--behavior", "--version"} <= options
    for option in options:
        assert f"`{option}`" in commands, option


@pytest.mark.slow
def test_the_site_builds_strict(tmp_path):
    site = tmp_path / "site"
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    pages = {path: (site / path / "index.html").read_text() for path in (
        "getting-started", "guides/unity", "guides/neat-python-session", "reference/config", "reference/cli",
        "reference/api", "benchmarks", "architecture")}
    # mkdocstrings rendered the public names from their docstrings
    assert "Evaluate genomes on a spawn-context pool" in pages["reference/api"]
    assert 'id="neatpar.nn.CTRNNPopulation"' in pages["reference/api"]
    # the notebook is rendered with the plots saved in it
    assert len(re.findall(r"<img[^>]+src=\"data:image/png;base64,", pages["guides/neat-python-session"])) == 3
    assert 'id="max_steps"' in pages["reference/config"] and 'id="neatpar-evolve"' in pages["reference/cli"]
    assert not (tmp_path / "site" / "generate.py").exists()  # the generator is not published


# ---------------------------------------------------------------- the README

def readme() -> str:
    with open(os.path.join(ROOT, "README.md")) as f:
        return f.read()


def test_the_readme_fits_in_200_lines():
    assert len(readme().splitlines()) < 200


def test_the_readme_links_name_files_that_exist():
    targets = [t for t in re.findall(r"\]\(([^)#\s]+)[^)]*\)", readme()) if "://" not in t]
    assert len(targets) > 10
    assert [t for t in targets if not os.path.exists(os.path.join(ROOT, t))] == []


def neatpar_commands(text: str) -> list[str]:
    """The `neatpar` commands a page tells you to type: lines of its sh blocks and inline commands."""
    blocks = "\n".join(re.findall(r"```sh\n(.*?)```", text, re.S))
    commands = [line for line in blocks.splitlines() if re.match(r"(\.venv/bin/)?neatpar ", line)]
    return commands + re.findall(r"`(\.venv/bin/neatpar (?:evolve|play|export) [^`]+)`", text)


def check_command(command: str) -> None:
    """The command parses with the real parser (a bad flag ends the test with argparse's error) and a
    shipped config it names exists; `[--flag N]` marks an optional part and is left out."""
    from neatpar import cli
    words = shlex.split(re.sub(r"\[[^]]*\]", "", command.split("#")[0]))
    args = cli.build_parser().parse_args(words[1:])
    config = getattr(args, "config", None)
    assert config is None or not config.startswith("configs/") or os.path.isfile(os.path.join(ROOT, config)), command


def test_the_readme_neatpar_commands_parse_and_name_files_that_exist():
    commands = neatpar_commands(readme())
    assert len(commands) >= 3
    for command in commands:
        check_command(command)


def test_every_neatpar_command_in_the_docs_parses():
    pages = [os.path.relpath(os.path.join(folder, name), os.path.join(ROOT, "docs"))
             for folder, _, names in os.walk(os.path.join(ROOT, "docs")) for name in names if name.endswith(".md")]
    commands = [(page, command) for page in pages for command in neatpar_commands(read(page))]
    assert len(commands) > 20
    for page, command in commands:
        try:
            check_command(command)
        except SystemExit:
            pytest.fail(f"{page}: {command}")


@pytest.mark.slow
def test_the_readme_python_examples_run_from_the_repository_folder(tmp_path):
    examples = re.findall(r"```python\n(.*?)```", readme(), re.S)
    assert len(examples) == 2
    printed = []
    for number, code in enumerate(examples):
        script = tmp_path / f"readme_example_{number}.py"
        script.write_text(code)
        result = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
        printed.append(result.stdout)
    assert float(re.search(r"winner: genome \d+, fitness ([\d.]+)", printed[0]).group(1)) >= 3.9  # XOR solved
    assert re.search(r"winner: fitness 500\.0; 3 more episodes: \[500\.0, 500\.0, 500\.0\]", printed[1]), printed[1]
