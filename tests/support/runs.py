"""neatpar runs: the command line in a subprocess (read as it writes, on a pseudo-terminal),
its stats, and evaluators on env hosts of the simulator builds."""
import csv
import dataclasses
import json
import os
import queue
import subprocess
import sys
import threading
import time

from .configs import ball_cfg, write_config
from .paths import BUILDS, ROOT
from .processes import cmdline, processes_marked, python_module, segments_mapped, shm_segments, wait_until
from .simulators import free_worker_id


# The command a user types (it holds Ctrl+C back while Python imports neatpar; `python -m
# neatpar`, the same entry, only once the package itself is imported, so a signal in its first
# moments may be lost in a C extension's start-up).
NEATPAR_COMMAND = os.path.join(os.path.dirname(sys.executable), "neatpar")


def neatpar_cli(*args, timeout=300, module="neatpar"):
    """`python -m neatpar ARGS` (or another module), run to its end; its CompletedProcess."""
    return subprocess.run([*python_module(module), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


# A generation's progress bar as tqdm draws it (run/progress.py).
PROGRESS_BAR = r"gen +\d+ \|.*\| \d+/\d+ episodes \["


def one_line_error(tmp_path, args, pattern, code=2) -> str:
    """`neatpar ARGS` (with `--out` into tmp_path for evolve) fails with exit status `code` and one
    line, `neatpar: error: ...` holding `pattern`, and leaves no run folder; the line."""
    out = tmp_path / "should-not-exist"
    result = neatpar_cli(*args, "--out", str(out)) if args[0] == "evolve" else neatpar_cli(*args)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == code, result.stderr
    assert len(lines) == 1 and lines[0].startswith("neatpar: error: "), result.stderr
    assert pattern in lines[0], lines[0]
    assert not out.exists(), "a failed start left a run folder behind"
    return lines[0]


TIMING = ("seconds", "scored_steps_per_s", "fresh_seconds")   # the stats.csv columns that differ between two equal runs


def fresh_note(winner: dict) -> str:
    """What a run's closing line says after the winner's training fitness when winner.json (`winner`)
    has a score on fresh episodes."""
    fresh = winner.get("fresh")
    return "" if fresh is None else f" (training), {fresh['fitness']:.3f} on {fresh['episodes']} fresh episodes"


def evolve_ok(config, out, *extra):
    """`neatpar evolve --config CONFIG --out OUT ...`, which must succeed; its result."""
    result = neatpar_cli("evolve", "--config", config, "--out", str(out), *extra)
    assert result.returncode == 0, result.stderr
    return result


def exports_plays_and_repeats_on_two_hosts(config, full, hosted, brain) -> None:
    """The run in folder `full`: `neatpar export` of its winner (the sensors' shapes and any
    substrate from the folder) writes its winner.onnx byte for byte as `brain`, `neatpar play`
    plays it, and the same run on two env hosts, into `hosted`, gives the same stats and winner."""
    exported = neatpar_cli("export", "--config", config, "--genome", str(full / "winner.json"), "--out", str(brain))
    assert exported.returncode == 0, exported.stderr
    assert brain.read_bytes() == (full / "winner.onnx").read_bytes()
    played = neatpar_cli("play", "--config", config, "--genome", str(full / "winner.json"), "--episodes", "2")
    assert played.returncode == 0 and "2 episodes, mean return" in played.stdout, played.stderr
    assert neatpar_cli("evolve", "--config", config, "--out", str(hosted), "--envs", "2").returncode == 0
    assert stats_rows(hosted) == stats_rows(full)
    assert json.load(open(hosted / "winner.json")) == json.load(open(full / "winner.json"))


def stats_table(path) -> list[dict]:
    """A stats.csv file's rows, as dicts of its columns."""
    with open(path) as f:
        return list(csv.DictReader(f))


def without_timing(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]


def stats_rows(folder):
    with open(os.path.join(folder, "stats.csv")) as f:
        return [(r["generation"], r["best_fitness"], r["mean_fitness"], r["species"]) for r in csv.DictReader(f)]


class Run:
    """`neatpar evolve` in a subprocess whose processes carry a marker in their environment. Its
    output is read as it comes (`wait_for`), and the shared-memory segments it maps are noted while
    it runs (`segments`), so that `assert_clean` can check that each of them is gone."""

    def __init__(self, config, out, *extra, command=None):
        self.mark = f"{os.getpid()}-{time.monotonic_ns()}"
        env = {**os.environ, "NEATPAR_TEST_MARK": self.mark}
        args = ["--config", config, "--out", str(out), *extra] if config is not None else [*extra]
        self.proc = subprocess.Popen([*(command or python_module("neatpar")), "evolve", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
        self.lines: list[str] = []
        self.segments: set[str] = set()
        self._stdout: queue.Queue = queue.Queue()
        self._stderr: list[str] = []
        self._threads = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True),
                         threading.Thread(target=self._note_segments, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self):
        for line in self.proc.stdout:
            self._stdout.put(line)
        self._stdout.put(None)

    def _read_stderr(self):
        self._stderr.extend(self.proc.stderr)

    def _note_segments(self):
        """The run's process creates (and maps) every segment of the run: read its maps often."""
        while self.proc.poll() is None:
            self.segments |= segments_mapped([self.proc.pid])
            time.sleep(0.02)

    def family(self):
        return [p for p in processes_marked(f"NEATPAR_TEST_MARK={self.mark}") if p != self.proc.pid]

    def simulators(self):
        return [p for p in self.family() if "neatpar_sim" in cmdline(p)]

    def workers(self):
        return [p for p in self.family() if "spawn_main" in cmdline(p)]

    def wait_for(self, prefix, timeout=120) -> str:
        """Read output lines until one starts with `prefix` and return it; fail when the output ends
        or `timeout` seconds pass first."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._stdout.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line starting with {prefix!r} within {timeout} s; the output so far: "
                                     f"{''.join(self.lines)!r}") from None
            if line is None:
                self._stdout.put(None)
                raise AssertionError(f"the output ended (exit status {self.proc.wait()}) before a line starting "
                                     f"with {prefix!r}: {''.join(self.lines)!r}; stderr: {''.join(self._stderr)!r}")
            self.lines.append(line)
            if line.startswith(prefix):
                return line

    def finish(self, timeout=300):
        """Wait for the run to end (killed if it takes longer than `timeout`); (exit status, stderr)."""
        try:
            self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        for thread in self._threads:
            thread.join(timeout=10)
        while True:
            line = self._stdout.get()
            if line is None:
                break
            self.lines.append(line)
        return self.proc.returncode, "".join(self._stderr)

    def assert_clean(self, segments_expected: bool = False):
        """No process of the run is left, and every shared-memory segment it was seen to map is gone
        (with `segments_expected`, it must have mapped some: the check is not empty)."""
        try:
            wait_until(lambda: not self.family(), 5, "the run's processes to end")
        except AssertionError:
            raise AssertionError(f"left running: {[cmdline(p) for p in self.family()]}") from None
        assert not segments_expected or self.segments, "the run mapped no shared-memory segment"
        left = self.segments & shm_segments()
        assert not left, f"shared-memory segments left: {sorted(left)}"


def evaluator_and_population(tmp_path, name="ball.cfg", **over):
    """A UnityEvaluator on two env hosts, its neat config, and a first generation."""
    import neat
    from neatpar import settings as run_config
    from neatpar.episodes.env_evaluator import UnityEvaluator
    path = ball_cfg(tmp_path, name=name, **{"envs": 2, "timeout": 3, "pop_size": 16,
                                            "env_args": "--agents 4 --max-steps 60", "max_steps": 60, **over})
    config, run = run_config.load(path)
    population = neat.Population(config, seed=5)
    return UnityEvaluator.from_settings(run), config, list(population.population.items())


def probe_hosts(tmp_path, agents, pop, envs=2, episode=5, backend="local", num_outputs=1, **over):
    """An evaluator on env hosts of the probe build (episodes of exactly `episode` decisions), its
    neat config and a first generation of `pop` genomes; `over` changes [neatpar] keys."""
    import neat
    from neatpar import settings as run_config
    from neatpar.episodes.env_evaluator import UnityEvaluator
    section = {"env": os.path.join(BUILDS, "probe"), "env_args": f"--agents {agents} --episode-decisions {episode}",
               "behaviors": "Probe?team=0: population", "max_steps": 50, "seed": 4, "envs": envs,
               "backend": backend, "worker_id": free_worker_id(), "timeout": 5, **over}
    path = write_config(tmp_path, f"probe{envs}{backend}.cfg", neatpar=section, pop_size=pop, num_inputs=4,
                        num_outputs=num_outputs, activation_options="tanh", activation_default="tanh")
    config, settings = run_config.load(path)
    return UnityEvaluator.from_settings(settings), config, list(neat.Population(config, seed=5).population.items())


def fitnesses(pairs):
    return [g.fitness for _, g in pairs]


def undisturbed(tmp_path, **over):
    """Fitnesses after two generations' evaluations of the same population, without faults."""
    evaluator, config, pairs = evaluator_and_population(tmp_path, name="reference.cfg", **over)
    try:
        evaluator.evaluate(pairs, config)
        evaluator.evaluate(pairs, config)
        return fitnesses(pairs)
    finally:
        evaluator.close()


def on_terminal(*args, timeout=300) -> str:
    """`neatpar ARGS` with stdin, stdout and stderr on a pseudo-terminal of 24 x 120 characters;
    everything it wrote, as the terminal received it."""
    import fcntl
    import pty
    import select
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    proc = subprocess.Popen([*python_module("neatpar"), *args], stdin=slave, stdout=slave, stderr=slave,
                            cwd=ROOT)
    os.close(slave)
    received, deadline = b"", time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if select.select([master], [], [], 1.0)[0]:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the terminal closed: every process that had it exited
                    break
                if not data:
                    break
                received += data
        assert proc.wait(timeout=30) == 0, received.decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return received.decode()


@dataclasses.dataclass
class HungUp:
    """What a run whose terminal closed left: its exit status, the processes it had started
    (PIDs), and what its terminal had received."""
    status: int
    family: set
    received: str


def hang_up(*args, after: str, timeout=120) -> HungUp:
    """`neatpar ARGS` as the session leader of a pseudo-terminal of its own (its controlling
    terminal: stdin, stdout and stderr), until the terminal has shown `after`; then the terminal
    closes (its master side: the kernel sends SIGHUP, and writes to it fail from then on)."""
    import fcntl
    import pty
    import select
    import termios

    import psutil
    master, slave = pty.openpty()
    proc = subprocess.Popen([NEATPAR_COMMAND, *args], stdin=slave, stdout=slave, stderr=slave, cwd=ROOT,
                            start_new_session=True, preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
    os.close(slave)
    received, deadline = b"", time.monotonic() + timeout
    try:
        while after.encode() not in received:
            assert time.monotonic() < deadline and proc.poll() is None, received.decode(errors="replace")
            if select.select([master], [], [], 1.0)[0]:
                received += os.read(master, 65536)
        family = {p.pid for p in psutil.Process(proc.pid).children(recursive=True)}
        os.close(master)
        master = None
        return HungUp(proc.wait(timeout=60), family, received.decode(errors="replace"))
    finally:
        if master is not None:
            os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def screen(output: str) -> list[str]:
    """The lines a terminal shows in the end: what follows the last carriage return of each."""
    return [line.rstrip("\r").split("\r")[-1].rstrip() for line in output.split("\n")]
