"""What the tests share: paths, neat-python configs, simulators with guaranteed clean-up,
process and shared-memory inspection, `neatpar` command-line runs, and plain views of messages.
Test modules import from here and never from each other."""
import contextlib
import csv
import os
import queue
import random
import socket
import subprocess
import sys
import threading
import time

from multiprocessing import resource_tracker

# neat-python, mlagents-envs and neatpar are imported where used, so that the stock-stack script
# tests/fixtures/make_fixtures.py can use as_plain() without them.

# ---------------------------------------------------------------- paths and configs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = os.path.join(ROOT, "configs")
BUILDS = os.path.join(ROOT, "unity_builds")
BALL = os.path.join(BUILDS, "ball")
BASE_PORT = 5005


def docs_tool():
    """docs/generate.py, the documentation's tool, as a module."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("docs_generate", os.path.join(ROOT, "docs", "generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_config(name: str = "xor.cfg"):
    import neat
    return neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                       neat.DefaultStagnation, os.path.join(CONFIGS, name))


def child_pids() -> set[int]:
    """PIDs of this process's live children, less multiprocessing's resource tracker."""
    me, found = os.getpid(), set()
    tracker = getattr(resource_tracker._resource_tracker, "_pid", None)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != "Z" and int(entry) != tracker:
            found.add(int(entry))
    return found


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_gone(pids, timeout: float = 5.0) -> set[int]:
    """Wait until none of `pids` is alive; return those still alive after `timeout`."""
    deadline = time.monotonic() + timeout
    alive = {p for p in pids if pid_alive(p)}
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = {p for p in alive if pid_alive(p)}
    return alive


ALL_ACTIVATIONS = ("sigmoid tanh sin gauss relu elu lelu selu softplus identity clamped inv log exp "
                   "abs hat square cube")
ALL_AGGREGATIONS = "sum product max min maxabs median mean"

DEFAULTS = dict(
    pop_size=20, num_inputs=3, num_outputs=2, num_hidden=0, feed_forward="true",
    initial_connection="full_direct", activation_default="sigmoid", activation_options="sigmoid",
    activation_mutate_rate=0.0, aggregation_default="sum", aggregation_options="sum",
    aggregation_mutate_rate=0.0, conn_add_prob=0.5, conn_delete_prob=0.2, node_add_prob=0.3,
    node_delete_prob=0.1, bias_mutate_rate=0.7, response_mutate_rate=0.0, response_init_stdev=0.0,
    enabled_mutate_rate=0.05, weight_init_stdev=1.0, max_stagnation=20, species_elitism=2,
    # neat-python's own defaults for the node genes' time_constant (fixed at 1.0), which CTRNNs read
    time_constant_init_mean=1.0, time_constant_init_stdev=0.0, time_constant_mutate_rate=0.0,
    time_constant_mutate_power=0.0, time_constant_replace_rate=0.0, time_constant_min_value=0.01,
    time_constant_max_value=10.0,
)

TEMPLATE = """
[NEAT]
fitness_criterion = max
fitness_threshold = 1e9
pop_size = {pop_size}
reset_on_extinction = false
no_fitness_termination = true

[DefaultGenome]
num_inputs = {num_inputs}
num_hidden = {num_hidden}
num_outputs = {num_outputs}
initial_connection = {initial_connection}
feed_forward = {feed_forward}
compatibility_disjoint_coefficient = 1.0
compatibility_weight_coefficient = 0.5
conn_add_prob = {conn_add_prob}
conn_delete_prob = {conn_delete_prob}
node_add_prob = {node_add_prob}
node_delete_prob = {node_delete_prob}
single_structural_mutation = false
structural_mutation_surer = default
activation_default = {activation_default}
activation_options = {activation_options}
activation_mutate_rate = {activation_mutate_rate}
aggregation_default = {aggregation_default}
aggregation_options = {aggregation_options}
aggregation_mutate_rate = {aggregation_mutate_rate}
bias_init_mean = 0.0
bias_init_stdev = 1.0
bias_init_type = gaussian
bias_replace_rate = 0.1
bias_mutate_rate = {bias_mutate_rate}
bias_mutate_power = 0.5
bias_max_value = 30.0
bias_min_value = -30.0
response_init_mean = 1.0
response_init_stdev = {response_init_stdev}
response_init_type = gaussian
response_replace_rate = 0.1
response_mutate_rate = {response_mutate_rate}
response_mutate_power = 0.5
response_max_value = 30.0
response_min_value = -30.0
weight_init_mean = 0.0
weight_init_stdev = {weight_init_stdev}
weight_init_type = gaussian
weight_max_value = 30
weight_min_value = -30
weight_mutate_rate = 0.8
weight_replace_rate = 0.1
weight_mutate_power = 0.5
time_constant_init_mean = {time_constant_init_mean}
time_constant_init_stdev = {time_constant_init_stdev}
time_constant_init_type = gaussian
time_constant_replace_rate = {time_constant_replace_rate}
time_constant_mutate_rate = {time_constant_mutate_rate}
time_constant_mutate_power = {time_constant_mutate_power}
time_constant_max_value = {time_constant_max_value}
time_constant_min_value = {time_constant_min_value}
enabled_default = true
enabled_mutate_rate = {enabled_mutate_rate}
enabled_rate_to_true_add = 0.0
enabled_rate_to_false_add = 0.0

[DefaultSpeciesSet]
compatibility_threshold = 3.0

[DefaultStagnation]
species_fitness_func = max
max_stagnation = {max_stagnation}
species_elitism = {species_elitism}

[DefaultReproduction]
elitism = 2
survival_threshold = 0.2
min_species_size = 2
"""


def write_config(directory, name="neat.cfg", neatpar: dict | None = None, **options) -> str:
    """Write a config with `options` over DEFAULTS (and a [neatpar] section) into `directory`."""
    unknown = set(options) - set(DEFAULTS)
    if unknown:
        raise KeyError(f"unknown config options {sorted(unknown)}")
    path = os.path.join(str(directory), name)
    with open(path, "w") as f:
        f.write(TEMPLATE.format(**{**DEFAULTS, **options}))
        if neatpar is not None:
            f.write("\n[neatpar]\n" + "".join(f"{k} = {v}\n" for k, v in neatpar.items()))
    return path


def make_config(directory, name="neat.cfg", **options):
    """Write a config with `options` over DEFAULTS into `directory` and load it."""
    import neat
    return neat.Config(neat.DefaultGenome, neat.DefaultReproduction, neat.DefaultSpeciesSet,
                       neat.DefaultStagnation, write_config(directory, name, **options))


def hand_genome(config, nodes: dict, links: list, key: int = 1):
    """A genome written by hand: nodes {key: (activation, aggregation, bias, response[, time
    constant])}, links [(source, target, weight, enabled)] in connection order."""
    from neat.genes import DefaultConnectionGene, DefaultNodeGene
    genome = config.genome_type(key)
    for n, (act, agg, bias, response, *tau) in nodes.items():
        gene = DefaultNodeGene(n)
        gene.activation, gene.aggregation, gene.bias, gene.response = act, agg, bias, response
        gene.time_constant = tau[0] if tau else 1.0
        genome.nodes[n] = gene
    for innovation, (i, o, weight, enabled) in enumerate(links):
        gene = DefaultConnectionGene((i, o), innovation=innovation + 1)
        gene.weight, gene.enabled = weight, enabled
        genome.connections[(i, o)] = gene
    return genome


# ---------------------------------------------------------------- simulators


def free_worker_id() -> int:
    """A worker_id whose port (5005 + id) is free on this machine right now."""
    for _ in range(200):
        worker_id = random.randint(100, 3000)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", BASE_PORT + worker_id))
                return worker_id
            except OSError:
                continue
    raise RuntimeError("no free port for a simulator")


@contextlib.contextmanager
def simulator(build="ball", args=(), seed=0, side_channels=None, log_folder=None, timeout_wait=30):
    """A UnityEnvironment on a simulator build; closed (and its process reaped) on exit."""
    from mlagents_envs.environment import UnityEnvironment
    env = UnityEnvironment(os.path.join(BUILDS, build), worker_id=free_worker_id(), seed=seed,
                           no_graphics=True, additional_args=list(args), side_channels=side_channels or [],
                           log_folder=log_folder, timeout_wait=timeout_wait)
    process = env._process
    try:
        yield env
    finally:
        try:
            env.close()
        finally:
            if process is not None and process.poll() is None:
                process.kill()
            if process is not None:
                process.wait()
                assert not wait_gone([process.pid], 2.0)


# ---------------------------------------------------------------- processes and shared memory

def cmdline(pid):
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def processes_marked(mark):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if mark.encode() in open(f"/proc/{pid}/environ", "rb").read():
                found.append(int(pid))
        except OSError:
            pass
    return found


def run_marked(args, env=None, timeout=180):
    """Run python with `args` (the tests' folder on its path); assert that none of its processes
    outlives it (they carry a marker in their environment). Returns the result and its seconds."""
    mark = f"{os.getpid()}-{time.monotonic_ns()}"
    started = time.monotonic()
    tests = os.path.dirname(os.path.abspath(__file__))
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": tests, "NEATPAR_TEST_MARK": mark, **(env or {})})
    elapsed = time.monotonic() - started
    deadline = time.monotonic() + 5
    while processes_marked(f"NEATPAR_TEST_MARK={mark}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_marked(f"NEATPAR_TEST_MARK={mark}") == [], "processes outlived the script"
    return result, elapsed


def sims_on(port_marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "neatpar.sim" in cmd and port_marker in cmd:
            found.append(int(pid))
    return found


def parent_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def shm_segments():
    return {name for name in os.listdir("/dev/shm") if name.startswith("neatpar-")}


# ---------------------------------------------------------------- neatpar runs

def ball_cfg(folder, name="ball.cfg", generations=3, interval=1, **over):
    section = {"env": BALL, "env_args": "--agents 4 --max-steps 15", "behaviors": "Ball3D?team=0: population",
               "max_steps": 15, "generations": generations, "seed": 11, "checkpoint_interval": interval,
               "worker_id": free_worker_id()}
    neat_options = {k: over.pop(k) for k in list(over) if k in DEFAULTS}  # the rest is [neatpar]
    section.update(over)
    return write_config(folder, name, neatpar=section, **{"pop_size": 8, "num_inputs": 8, "num_outputs": 2,
                                                          "activation_options": "tanh",
                                                          "activation_default": "tanh", **neat_options})


DUEL_SHORT = "--areas 4 --points 2 --rally-steps 60"   # short duel matches: 2 rallies of at most 60 steps


def duel_cfg(folder, name="duel.cfg", generations=3, **neatpar):
    """A self-play config for the duel build: the population plays Duel?team=0 and Duel?team=1 from
    both sides against a league of 3; 8 genomes, short matches."""
    section = {"env": os.path.join(BUILDS, "duel"), "env_args": DUEL_SHORT,
               "behaviors": "Duel?team=0: population, Duel?team=1: league", "max_steps": 200,
               "episodes_per_genome": 2, "league_swap_sides": "true", "league_window": 3, "generations": generations,
               "seed": 3, "checkpoint_interval": 1, "worker_id": free_worker_id(), **neatpar}
    return write_config(folder, name, neatpar=section, pop_size=8, num_inputs=6, num_outputs=1,
                        activation_options="tanh", activation_default="tanh")


HOVER = os.path.join(BUILDS, "hover")
CTRNN_GENES = dict(time_constant_init_mean=0.2, time_constant_init_stdev=0.1, time_constant_mutate_rate=0.3,
                   time_constant_mutate_power=0.1, time_constant_replace_rate=0.05, time_constant_min_value=0.02,
                   time_constant_max_value=5.0)


def hover_cfg(folder, name="hover.cfg", generations=3, interval=1, **over):
    """configs/hover.cfg in small: CTRNNs on the hover build, decisions every 5 academy steps."""
    section = {"env": HOVER, "env_args": "--agents 6 --max-steps 150 --decision-period 5",
               "behaviors": "Hover?team=0: population", "network": "ctrnn", "ctrnn_decision_time": 0.1,
               "ctrnn_time_step": 0.02, "max_steps": 30, "generations": generations, "seed": 4,
               "checkpoint_interval": interval, "worker_id": free_worker_id()}
    neat_options = {k: over.pop(k) for k in list(over) if k in DEFAULTS}  # the rest is [neatpar]
    section.update(over)
    return write_config(folder, name, neatpar=section, **{"pop_size": 10, "num_inputs": 2, "num_outputs": 1,
                                                          "feed_forward": "false", "num_hidden": 1,
                                                          "activation_options": "tanh", "activation_default": "tanh",
                                                          **CTRNN_GENES, **neat_options})


def genes_of(genome) -> tuple:
    """A genome's key, fitness and genes, exactly (floats as hex), whatever its class."""
    from neatpar.evolution.records import gene_dicts
    nodes, connections = gene_dicts(genome)
    return (genome.key, genome.fitness,
            [(k, n.bias.hex(), n.response.hex(), n.activation, n.aggregation) for k, n in nodes.items()],
            [(k, c.innovation, c.weight.hex(), c.enabled) for k, c in connections.items()])


# The command a user types (it holds Ctrl+C back while Python imports neatpar; `python -m
# neatpar.cli` cannot, so a signal in its first seconds may be lost in a C extension's start-up).
NEATPAR_COMMAND = os.path.join(os.path.dirname(sys.executable), "neatpar")


def neatpar_cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "neatpar.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


def stats_rows(folder):
    with open(os.path.join(folder, "stats.csv")) as f:
        return [(r["generation"], r["best_fitness"], r["mean_fitness"], r["species"]) for r in csv.DictReader(f)]


def wait_until(condition, timeout: float, what: str, interval: float = 0.05):
    """Poll `condition` until it returns something true and return that; fail naming `what` when
    `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}")
        time.sleep(interval)


def process_maps(pid: int) -> str:
    """What process `pid` has mapped (/proc/PID/maps); empty when it is gone."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            return f.read()
    except OSError:
        return ""


def segments_mapped(pids) -> set[str]:
    """neatpar's shared-memory segments that the processes `pids` have mapped now."""
    found = set()
    for pid in pids:
        for line in process_maps(pid).splitlines():
            fields = line.split(maxsplit=5)  # address, perms, offset, device, inode, path
            if len(fields) == 6 and fields[5].startswith("/dev/shm/neatpar-"):
                found.add(fields[5].split()[0][len("/dev/shm/"):])
    return found


class Run:
    """`neatpar evolve` in a subprocess whose processes carry a marker in their environment. Its
    output is read as it comes (`wait_for`), and the shared-memory segments it maps are noted while
    it runs (`segments`), so that `assert_clean` can check that each of them is gone."""

    def __init__(self, config, out, *extra, command=None):
        self.mark = f"{os.getpid()}-{time.monotonic_ns()}"
        env = {**os.environ, "NEATPAR_TEST_MARK": self.mark}
        args = ["--config", config, "--out", str(out), *extra] if config is not None else [*extra]
        self.proc = subprocess.Popen([*(command or [sys.executable, "-m", "neatpar.cli"]), "evolve", *args],
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
        return [p for p in self.family() if "neatpar.sim" in cmdline(p)]

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
    from neatpar.run.evaluator import UnityEvaluator
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
    from neatpar.run.evaluator import UnityEvaluator
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
    proc = subprocess.Popen([sys.executable, "-m", "neatpar.cli", *args], stdin=slave, stdout=slave, stderr=slave,
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


def screen(output: str) -> list[str]:
    """The lines a terminal shows in the end: what follows the last carriage return of each."""
    return [line.rstrip("\r").split("\r")[-1].rstrip() for line in output.split("\n")]


# ---------------------------------------------------------------- messages as plain values

def as_plain(message):
    out = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            out[field.name] = {k: _value(field.message_type.fields_by_name["value"], v) for k, v in sorted(value.items())}
        elif _repeated(field):
            out[field.name] = [_value(field, v) for v in value]
        elif field.message_type is not None:
            out[field.name] = as_plain(value) if message.HasField(field.name) else None
        else:
            out[field.name] = _value(field, value)
    return out


def _repeated(field) -> bool:
    """protobuf 6 has is_repeated (label is deprecated there); the stock stack's 3.20 has only label."""
    return field.is_repeated if hasattr(field, "is_repeated") else field.label == field.LABEL_REPEATED


def _value(field, value):
    if field.message_type is not None:
        return as_plain(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


# ---------------------------------------------------------------- ONNX models as ML-Agents reads them

TENSOR_GENERATORS = {"batch_size", "sequence_length", "recurrent_in", "prev_action", "action_masks", "epsilon"}


def checked_session(model):
    """An onnxruntime session of a model, after onnx's full check."""
    import onnx
    import onnxruntime as ort
    onnx.checker.check_model(model, full_check=True)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def memory_size(model) -> int:
    """The memory_size constant of an exported model (0 without memory)."""
    from onnx import numpy_helper
    constants = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    identity = {n.output[0]: n.input[0] for n in model.graph.node if n.op_type == "Identity"}
    return int(constants[identity["memory_size"]][0])


def value_info(values) -> dict:
    def shape(v):
        return [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
    return {v.name: (v.type.tensor_type.elem_type, shape(v)) for v in values}


def read_like_ml_agents(model, sensors: list, continuous: int, branches: tuple, deterministic: bool) -> list:
    """The checks of ML-Agents 3.0's C# loader (Runtime/Inference), on this model and a behavior
    with these sensor sizes and action spec; returns the failed checks' messages.

    SentisModelInfo runs the model once on zero inputs of batch 1 (dynamic dimensions read as 1)
    and keeps every output; every input is created as a float tensor (GetInputTensors)."""
    import numpy as np
    from onnx import TensorProto
    inputs, outputs = value_info(model.graph.input), value_info(model.graph.output)
    session = checked_session(model)
    zeros = {name: np.zeros([1 if isinstance(d, str) else d for d in shape], np.float32)
             for name, (_, shape) in inputs.items()}
    ran = dict(zip([o.name for o in session.get_outputs()], session.run(None, zeros)))
    failed = []

    def constant(name):  # GetTensorByName; (Tensor<float>) casts throw on any other type
        if name not in ran:
            return None
        assert outputs[name][0] == TensorProto.FLOAT, f"{name} is read as Tensor<float>"
        return ran[name]

    def contains(name):  # OutputsContainName: a substring match over the output names
        return any(name in o for o in outputs)

    # SentisModelInfo.CheckExpectedTensors
    if constant("version_number") is None or constant("memory_size") is None:
        return ["Required constant version_number / memory_size was not found in the model file."]
    if not any(contains(n) for n in ("continuous_actions", "discrete_actions")):
        return ["The model does not contain any Action Output Node."]
    if contains("continuous_actions") and constant("continuous_action_output_shape") is None:
        return ["The model uses continuous action but does not contain Continuous Action Output Shape Node."]
    if contains("discrete_actions") and constant("discrete_action_output_shape") is None:
        return ["The model uses discrete action but does not contain Discrete Action Output Shape Node."]
    version, memory = int(constant("version_number")[0]), int(constant("memory_size")[0])
    # SentisModelParamLoader.CheckModelVersion (MinSupportedVersion 2, MaxSupportedVersion 3)
    if not 2 <= version <= 3:
        failed.append(f"Model version {version} is not supported")
    # SentisModelInfo.CheckContinuousOutputs / CheckDiscreteOutputs / CheckDiscreteOutputSize
    continuous_name = "deterministic_continuous_actions" if deterministic else "continuous_actions"
    discrete_name = "deterministic_discrete_actions" if deterministic else "discrete_actions"
    continuous_size = int(constant("continuous_action_output_shape")[0]) if contains("continuous_actions") else 0
    discrete_shape = constant("discrete_action_output_shape")
    has_continuous = continuous_name in outputs and continuous_size > 0
    has_discrete = discrete_name in outputs and discrete_shape is not None and int(discrete_shape.sum()) > 0
    # SentisModelParamLoader.CheckInputTensorPresence
    for i in range(len(sensors)):
        if f"obs_{i}" not in inputs:
            failed.append(f"The model does not contain an Observation Placeholder Input for sensor component {i}.")
    if memory > 0 and "recurrent_in" not in inputs:
        failed.append("The model does not contain a Recurrent Input Node but has memory_size.")
    if has_discrete and "action_masks" not in inputs:
        failed.append("The model does not contain an Action Mask but is using Discrete Control.")
    # SentisModelParamLoader.CheckInputTensorShape (CheckRankOneObsShape: TensorProxy.Channels is
    # the last dimension of a rank-2 tensor) and TensorGenerator.GenerateTensors (a generator per input)
    known = TENSOR_GENERATORS | {f"obs_{i}" for i in range(len(sensors))}
    for name, (elem, shape) in inputs.items():
        assert elem == TensorProto.FLOAT, f"input {name} is fed as a float tensor"
        assert isinstance(shape[0], str), f"input {name} has a dynamic batch dimension"
        if name not in known:
            failed.append(f"Model contains an unexpected input named : {name}")
        elif name.startswith("obs_") and (len(shape) != 2 or shape[-1] != sensors[int(name[4:])]):
            failed.append(f"An Observation of the model does not match: {shape} for a sensor of "
                          f"{sensors[int(name[4:])]}")
    # SentisModelParamLoader.CheckOutputTensorShape
    if continuous_size != continuous:
        failed.append(f"Continuous Action Size of the model does not match: {continuous} vs {continuous_size}.")
    model_branches = [] if discrete_shape is None else discrete_shape.reshape(-1).tolist()
    if model_branches != list(branches):
        failed.append(f"Discrete Action Size of the model does not match: {branches} vs {model_branches}.")
    # SentisModelParamLoader.CheckOutputTensorPresence and SentisModelInfo.GetOutputNames (what
    # ModelRunner fetches and TensorApplier applies: Tensor<float> continuous, Tensor<int> discrete,
    # recurrent_out read as [agent, 0, j] with Width() = memory size)
    fetched = ([continuous_name] if has_continuous else []) + ([discrete_name] if has_discrete else [])
    if memory > 0:
        if "recurrent_out" not in outputs:
            failed.append("The model does not contain a Recurrent Output Node but has memory_size.")
        else:
            fetched.append("recurrent_out")
            assert outputs["recurrent_out"][1][1:] == [1, memory] and inputs["recurrent_in"][1][1:] == [1, memory]
    for name in fetched:
        assert name in outputs, f"{name} is fetched"
        assert outputs[name][0] == (TensorProto.INT64 if "discrete" in name else TensorProto.FLOAT)
    return failed


def record_ball_episodes(genome, config, agents: int, max_steps: int, seed: int = 5) -> tuple:
    """A recurrent genome drives `agents` agents of the ball simulator through neatpar's kernel
    until each has finished one episode: (layout, {agent: [(observation, continuous action)]})."""
    from neatpar.nn import RecurrentPopulation
    return record_episodes(RecurrentPopulation.create([genome], config), "ball",
                           ["--agents", str(agents), "--max-steps", str(max_steps)], agents, seed)


def record_episodes(population, build: str, args: list, agents: int, seed: int = 5) -> tuple:
    """A one-genome population kernel with state (recurrent or CTRNN) drives the `agents` agents
    of a simulator build until each has finished one episode: (layout, {agent: [(observation,
    continuous action)]}), one entry per decision."""
    import numpy as np
    from neatpar.envs.unity.adapter import layout_of, outputs_to_actions
    recorded: dict[int, list] = {}
    finished: set[int] = set()
    with simulator(build, args=args, seed=seed) as env:
        env.reset()
        behavior = next(iter(env.behavior_specs))
        layout = layout_of(behavior, env.behavior_specs[behavior])
        while len(finished) < agents:
            decision, terminal = env.get_steps(behavior)
            finished.update(int(a) for a in terminal.agent_id)
            if len(decision):
                rows = decision.agent_id.astype(np.int64)
                obs = np.concatenate([o.reshape(len(decision), -1) for o in decision.obs], axis=1)
                actions = outputs_to_actions(layout, population.activate(obs, np.zeros(len(rows), np.int64), rows),
                                             decision.action_mask)
                for i, agent in enumerate(rows.tolist()):
                    if agent not in finished:
                        recorded.setdefault(agent, []).append((obs[i], actions.continuous[i]))
                env.set_actions(behavior, actions)
            env.step()
    return layout, recorded


def replay_deviation(model, recorded: dict) -> tuple[int, float]:
    """The recorded observations through an exported model, every agent's memory carried from
    its episode's start, as Unity batches agents: (steps, largest |model action - recorded action|)."""
    import numpy as np
    session = checked_session(model)
    agents = sorted(recorded)
    memory = np.zeros((len(agents), 1, memory_size(model)), np.float32)
    steps = max(len(r) for r in recorded.values())
    worst = 0.0
    for t in range(steps):
        live = [k for k, a in enumerate(agents) if t < len(recorded[a])]  # agents still in their episode
        obs = np.stack([recorded[agents[k]][t][0] for k in live])
        continuous, memory[live] = session.run(["continuous_actions", "recurrent_out"],
                                               {"obs_0": obs, "recurrent_in": memory[live]})
        expected = np.stack([recorded[agents[k]][t][1] for k in live])
        worst = max(worst, float(np.abs(continuous - expected).max()))
    return steps, worst

