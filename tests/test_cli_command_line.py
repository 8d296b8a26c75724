"""Tests of cli/command_line.py: the `neatpar` command's line (its options, help and version), its
exit statuses and one-line messages, and the command itself (entered through _neatpar_command.py,
which holds Ctrl+C back while Python imports neatpar)."""
import logging
import os
import signal
import time

import pytest

import neatpar
from neatpar.cli.command_line import build_parser, main
from neatpar.config.settings_model import flags
from support.configs import ball_cfg
from support.processes import process_maps, wait_until
from support.runs import NEATPAR_COMMAND, Run, neatpar_cli


@pytest.fixture
def neatpar_logger():
    """The `neatpar` logger as it was, put back after the test (main adds its warning handler)."""
    logger = logging.getLogger("neatpar")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield logger
    logger.handlers[:], logger.level, logger.propagate = saved


def test_python_m_neatpar_is_the_command():
    result = neatpar_cli("--version", module="neatpar")
    assert result.returncode == 0 and result.stdout.strip() == f"neatpar {neatpar.__version__}", result.stderr


def test_bare_neatpar_prints_the_usage_and_succeeds(capsys, neatpar_logger):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: neatpar") and all(command in out for command in ("evolve", "play", "export"))


def test_every_setting_is_an_evolve_flag_whose_help_names_its_config_key():
    evolve = build_parser()._subparsers._group_actions[0].choices["evolve"]
    options = {action.dest: action for action in evolve._actions}
    for f in flags():
        assert f.name in options and options[f.name].option_strings == ["--" + f.name.replace("_", "-")]
        assert f"(default: [neatpar] {f.name}" in options[f.name].help


@pytest.mark.parametrize("episodes, message", [("0", "0 must be at least 1"), ("two", "'two' is not an integer")])
def test_play_episodes_must_be_a_positive_integer(capsys, episodes, message):
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(["play", "--config", "c.cfg", "--genome", "g.json", "--episodes", episodes])
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_bad_input_is_exit_status_2_with_one_line(tmp_path, capsys, neatpar_logger):
    missing = tmp_path / "missing.cfg"
    assert main(["evolve", "--config", str(missing), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("neatpar: error: ") and str(missing) in err[0]
    assert not (tmp_path / "run").exists()


def test_warnings_show_once_each_however_often_main_runs(capsys, neatpar_logger):
    """A notebook calls main again and again: each warning is still one line."""
    for _ in range(3):
        main([])
    capsys.readouterr()
    neatpar_logger.warning("the simulator was relaunched")
    assert capsys.readouterr().err == "neatpar: warning: the simulator was relaunched\n"


def test_version_and_bare_neatpar_print_what_they_should():
    version = neatpar_cli("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"neatpar {neatpar.__version__}"
    bare = neatpar_cli()
    assert bare.returncode == 0 and "usage: neatpar" in bare.stdout and "evolve" in bare.stdout


def test_help_says_which_files_are_unpickled():
    for command in (["--help"], ["evolve", "--help"], ["play", "--help"]):
        text = " ".join(neatpar_cli(*command).stdout.split())
        assert "loading a pickle runs code" in text and "winner.json" in text


def test_play_help_documents_every_option_and_its_default():
    text = " ".join(neatpar_cli("play", "--help").stdout.split())
    for option in ("--config", "--genome", "--episodes"):
        assert option in text
    assert "(default: 5)" in text


def test_evolve_help_shows_each_default_once_and_the_choices():
    text = " ".join(neatpar_cli("evolve", "--help").stdout.split())
    assert "copies of a Gymnasium environment played at once per process (default: [neatpar] agents, else 64)" in text
    assert text.count("(default") == text.count("(default:")  # no second, differently written default
    assert "--inference {inprocess,pool,auto}" in text and "--backend {local,ray}" in text


@pytest.mark.slow
def test_ctrl_c_in_the_first_half_second_ends_quietly(tmp_path):
    """SIGINT at moments from neatpar's first imports to the first generation: exit status 130, one
    line, no traceback, no process left, and no run folder unless it holds the checkpoint it names."""
    command = NEATPAR_COMMAND
    config = ball_cfg(tmp_path, generations=50)
    for trial, delay in enumerate((0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5)):
        out = tmp_path / f"run{trial}"
        run = Run(config, out, command=[command])
        # Python itself is running neatpar's code once numpy (imported by neatpar) is mapped; the
        # first delays land in numpy's own initialization.
        wait_until(lambda: "_multiarray_umath" in process_maps(run.proc.pid), 30, "neatpar's imports")
        time.sleep(delay)
        run.proc.send_signal(signal.SIGINT)
        code, err = run.finish(timeout=60)
        lines = err.strip().splitlines()
        assert code == 130 and len(lines) == 1 and lines[0].startswith("interrupted"), (delay, err)
        run.assert_clean()
        if out.exists():
            checkpoint = lines[0].split("--resume ")[-1]
            assert lines[0].startswith("interrupted: checkpoint") and os.path.isfile(checkpoint), (delay, err)
