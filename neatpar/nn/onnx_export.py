"""An evolved genome as an ONNX model for Unity ML-Agents' inference (the Model field of an Agent's
Behavior Parameters): Sentis in com.unity.ml-agents 3.x, Barracuda in 2.x.

The model follows the contract of ML-Agents' own exports (model API version 3, as the C# loader
checks it in SentisModelParamLoader / BarracudaModelParamLoader and runs it in ModelRunner):

  inputs   obs_0 .. obs_{k-1}   float32 [batch, size_i], one per sensor in the behavior's order;
                                the genome's inputs are their concatenation
           action_masks         float32 [batch, sum of branch sizes] (1 allowed, 0 masked), only
                                with discrete branches
           recurrent_in         float32 [batch, 1, memory_size], only with memory
  outputs  version_number (3), memory_size, continuous_action_output_shape ([continuous]),
           discrete_action_output_shape ([[branch sizes]]): float32 constants (initializers
           passed through Identity, as in ML-Agents' exports; Barracuda finds them among the
           constants, Sentis runs the model once and reads them)
           continuous_actions, deterministic_continuous_actions   float32 [batch, continuous]
           discrete_actions, deterministic_discrete_actions       int64 [batch, branches]
           recurrent_out                                           float32 [batch, 1, memory_size]
  Outputs for action kinds or memory the behavior does not have are left out, as ML-Agents does.

The actions are neatpar's policy (the episode runner's): the genome's outputs are the continuous
actions followed by each branch's scores; continuous actions are clipped to [-1, 1]; a branch takes
the first highest score among the actions its mask allows, and action 0 when the mask allows none.
The network is neat-python's, structure taken from the population kernel's tables (compile.py):
node value = act(bias + response * agg(weight_i * value_i)), feed-forward nodes in evaluation order
(unreachable nodes pruned), recurrent nodes reading the previous step's values. A recurrent model
carries the values of every evaluated node in recurrent_in / recurrent_out; Unity keeps that memory
per agent and starts each episode from zeros, as neatpar does. Every built-in activation (18) and
aggregation (7) is expressed; functions registered on the config are refused by name.

A CTRNN model (`ctrnn=(advance_time, time_step)`) makes each decision one CTRNN.advance, its
Euler steps unrolled (ONNX's Loop is not on Barracuda's list): per step every node's z from one
buffer, `other + dt / tau * (z - other)` into the other buffer, the buffers swapped; the outputs
come from the buffer the last step read, as CTRNN.advance returns them. Its memory is both buffers
of every evaluated node. neat-python sums its clock in float64, so a decision of 0.1 s in steps of
0.02 s takes 5 steps in some decisions and 6 in others (a 6th of about 1e-17 s, which moves
nothing but swaps the buffers); the model then also carries the decision's number within the
episode and looks up its step count (Gather) in a table of the first SCHEDULE_DECISIONS decisions
(fewer for many steps per decision, see euler_schedule) replayed on neat-python's clock; later
decisions take the most common count.

Opset 9 (ML-Agents' own exports use it) and IR version 4, the minimum for opset 9 (onnxruntime runs
it; Sentis and Barracuda read the IR version only as metadata). Every operator is on Barracuda's
supported-operator list and on Sentis' (float on every backend), so both importers know every node:
Identity, Slice, Concat, Flatten, Unsqueeze (plumbing, as in ML-Agents' exports); Mul, Add, Sub,
Div, Sum, Max, Min (elementwise arithmetic with broadcasting); Abs, Relu, LeakyRelu, Elu, Selu,
Sigmoid, Tanh, Sin, Exp, Log, Reciprocal, Clip (activations); Greater, Where, Cast (maxabs, inv's
0.0, masks, a column of zeros, a CTRNN's optional steps); ReduceMax, ArgMax (discrete branches, as
ML-Agents' deterministic actions); Gather (a CTRNN's step count per decision). Avoided: Softplus
(not in Barracuda; softplus is Log(1 + Exp)), TopK (not on Sentis' GPUPixel backend; median is an
odd-even transposition sort of Min/Max pairs), Equal on floats (not in opset 9), Shape /
ConstantOfShape (Barracuda only takes constant shapes; a zero column is Cast(x > x)), Loop (not in
Barracuda: a CTRNN's Euler steps are unrolled).

Precision: the model computes in float32, as Unity does; neat-python computes in float64. Measured
with the definitions of tests/test_onnx_export.py on 1,200 genomes mutated by neat-python's own
operators with every function (16 agents, 1 step feed-forward and 5 steps recurrent): continuous
actions within 1.3e-5 of neat-python's (the tests' bound is 1e-4) wherever neat-python's result is
well-conditioned; 0.04% (feed-forward) to 0.4% (recurrent) of the values are not (neat-python's
own float64 result moves by more than 1e-5 when parameters and observations move by float32
rounding, so no float32 model can follow it there); 0.01% to 0.5% of discrete choices differ, all
near-ties. Values beyond float32's range (3.4e38: exp, square and cube chains, recurrent loops
that grow) become infinities, and values below about 1e-38 lose precision or become 0; the
measurement leaves out networks with any value outside [1e-30, 1e30] (none of the feed-forward
genomes, 6 to 11% of the recurrent ones within 5 steps).
CTRNNs (genomes with evolving time constants, 80 decisions of 0.1 s in steps of 0.02 s): within
2.2e-6 to 1.1e-5 where well-conditioned, 0.03% to 1.4% of the values ill-conditioned.
"""
from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ..errors import ExportError
from ..environment import Layout
from .compile import BUILTIN_ACTIVATIONS, BUILTIN_AGGREGATIONS, Tables
from .onnx_graph import ACTIVATIONS, AGGREGATIONS, BATCH, EMPTY_AGGREGATE, OnnxGraph

OPSET = 9
IR_VERSION = helper.find_min_ir_version_for([helper.make_opsetid("", OPSET)])
MODEL_API_VERSION = 3  # ML-Agents' ModelApiVersion.MLAgents2_0
# ML-Agents' exporter's order of inputs (obs_0, obs_1, ... first) and of outputs.
INPUT_ORDER = ("obs_", "action_masks", "recurrent_in")
OUTPUT_ORDER = ("version_number", "memory_size", "continuous_actions", "continuous_action_output_shape",
                "deterministic_continuous_actions", "discrete_actions", "discrete_action_output_shape",
                "deterministic_discrete_actions", "recurrent_out")


class CTRNNTimes(NamedTuple):
    """A CTRNN policy's clock: the time each decision advances the network, and its Euler step."""
    advance_time: float
    time_step: float


def export_policy(genome, neat_config: Any, layout: Layout, recurrent: bool = False,
                  ctrnn: CTRNNTimes | tuple[float, float] | None = None) -> onnx.ModelProto:
    """The ONNX model of `genome` (neat-python's FeedForwardNetwork, RecurrentNetwork when
    `recurrent`, or CTRNN when `ctrnn` = (advance_time, time_step): each decision is one
    CTRNN.advance) acting on a behavior with `layout` (sensor sizes in the behavior's order,
    continuous actions, branch sizes), for ML-Agents' inference."""
    _check_layout(layout)
    ctrnn = None if ctrnn is None else CTRNNTimes(*ctrnn)
    gc = neat_config.genome_config
    if (gc.num_inputs, gc.num_outputs) != (layout.inputs, layout.outputs):
        raise ExportError(
            f"the genomes have num_inputs = {gc.num_inputs}, num_outputs = {gc.num_outputs} but the behavior "
            f"observes {layout.inputs} values (sensors {layout.observation_sizes}) and takes {layout.outputs} "
            f"action values ({layout.describe_actions()}): export for the behavior the genome was evolved on")
    tables = Tables([genome], neat_config, recurrent or ctrnn is not None, time_constants=ctrnn is not None)
    _refuse_custom_functions(tables, gc)
    graph = OnnxGraph()
    if ctrnn is None:
        network = _Network(graph, tables, layout)
    else:
        network = _CTRNN(graph, tables, layout, euler_schedule(ctrnn.advance_time, ctrnn.time_step))
    _policy_outputs(graph, layout, network.evaluate(), network.memory_size)
    return policy_model(graph, "neatpar_policy", f"neat-python {_kind(recurrent, ctrnn)} of genome {genome.key}")


def policy_model(graph: OnnxGraph, name: str, doc: str) -> onnx.ModelProto:
    """The model of a policy's graph: its inputs and outputs in the order ML-Agents lists them,
    the opset and the IR version the runtimes read."""
    inputs = sorted(graph.inputs, key=lambda v: INPUT_ORDER.index(v.name.rstrip("0123456789")))
    outputs = sorted(graph.outputs, key=lambda v: OUTPUT_ORDER.index(v.name))
    model = helper.make_model(helper.make_graph(graph.nodes, name, inputs, outputs, graph.initializers),
                              opset_imports=[helper.make_opsetid("", OPSET)], producer_name="neatpar", doc_string=doc)
    model.ir_version = IR_VERSION
    return model


def _kind(recurrent: bool, ctrnn: CTRNNTimes | None) -> str:
    if ctrnn is not None:
        return f"CTRNN (advance {ctrnn.advance_time!r} s per decision, time step {ctrnn.time_step!r} s)"
    return "recurrent network" if recurrent else "feed-forward network"


def _check_layout(layout: Layout) -> None:
    if not layout.observation_sizes or min(layout.observation_sizes) < 1:
        raise ExportError(f"observation sizes {layout.observation_sizes} are invalid: give each sensor's flattened "
                          f"size, at least one sensor of size >= 1")
    if layout.continuous < 0 or (layout.branches and min(layout.branches) < 1):
        raise ExportError(f"actions ({layout.describe_actions()}) are invalid: counts must be >= 0 and branch "
                          f"sizes >= 1")
    if layout.continuous == 0 and not layout.branches:
        raise ExportError("the behavior has no actions (0 continuous, no discrete branches): ML-Agents cannot run "
                          "a model without action outputs")


def _refuse_custom_functions(tables: Tables, gc) -> None:
    names = [_name_of(fn, gc.activation_defs) + " (activation)" for fn in tables.custom_activations]
    names += [_name_of(fn, gc.aggregation_function_defs) + " (aggregation)" for fn in tables.custom_aggregations]
    if names:
        raise ExportError(f"the genome uses functions registered on the config, which ONNX cannot express: "
                          f"{', '.join(names)}; export genomes that use neat-python's built-in functions only")


def _name_of(fn, function_set) -> str:
    return next((repr(name) for name, f in function_set.functions.items() if f is fn), repr(fn))


# ---------------------------------------------------------------- the network

class _Network:
    """The genome's network as [batch, 1] columns, one per node value, from the kernel's tables."""

    def __init__(self, graph: OnnxGraph, tables: Tables, layout: Layout):
        self.g, self.t, self.layout = graph, tables, layout
        self.nodes = range(int(tables.genome_start[0]), int(tables.genome_start[1]))
        self.memory_size = len(self.nodes) if tables.recurrent else 0
        self._first_input = ""
        self._zero = ""

    def evaluate(self) -> list[str]:
        """Columns of the genome's outputs, in order (and recurrent_out when there is memory)."""
        t, g = self.t, self.g
        inputs = self._input_columns()
        current = dict(enumerate(inputs))              # slot -> column, as the nodes are evaluated
        previous = dict(current)                       # what recurrent nodes read
        if self.memory_size:
            memory = g.op("Flatten", [g.add_input("recurrent_in", [BATCH, 1, self.memory_size])])
            for j, n in enumerate(self.nodes):
                previous[int(t.node_slot[n])] = self._column(memory, j)
        read = previous if t.recurrent else current
        for n in self.nodes:
            current[int(t.node_slot[n])] = self._node(n, read)
        if self.memory_size:
            state = [current[int(t.node_slot[n])] for n in self.nodes]
            self.g.add_output("recurrent_out", g.op("Unsqueeze", [self._concat(state)], axes=[1]),
                              TensorProto.FLOAT, [BATCH, 1, self.memory_size])
        first_output = t.num_inputs
        return [current.get(first_output + k) or self.zero() for k in range(t.num_outputs)]

    def _input_columns(self) -> list[str]:
        columns = []
        for i, size in enumerate(self.layout.observation_sizes):
            obs = self.g.add_input(f"obs_{i}", [BATCH, size])
            columns += [self._column(obs, j) if size > 1 else obs for j in range(size)]
        self._first_input = columns[0]
        return columns

    def _column(self, matrix: str, j: int) -> str:
        return self.g.op("Slice", [matrix], axes=[1], starts=[j], ends=[j + 1])

    def _concat(self, columns: list[str]) -> str:
        return self.g.op("Concat", columns, axis=1)

    def zero(self) -> str:
        """A [batch, 1] column of 0.0 whatever the observations hold (x > x is false, even for NaN)."""
        if not self._zero:
            x = self._first_input
            self._zero = self.g.op("Cast", [self.g.op("Greater", [x, x])], to=TensorProto.FLOAT)
        return self._zero

    def _node(self, n: int, read: dict) -> str:
        t, g = self.t, self.g
        activation = BUILTIN_ACTIVATIONS[int(t.node_act[n])]
        aggregation = BUILTIN_AGGREGATIONS[int(t.node_agg[n])]
        terms = [g.op("Mul", [read.get(int(t.link_src[k])) or self.zero(), g.const(float(t.link_w[k]))])
                 for k in range(int(t.link_start[n]), int(t.link_start[n + 1]))]
        if terms:
            s = AGGREGATIONS[aggregation](g, terms)
        else:  # a node without inputs: agg([]) is a constant
            s = g.op("Add", [self.zero(), g.const(EMPTY_AGGREGATE.get(aggregation, 0.0))])
        z = g.op("Add", [g.const(float(t.node_bias[n])), g.op("Mul", [g.const(float(t.node_resp[n])), s])])
        return ACTIVATIONS[activation](g, z)


def _policy_outputs(g: OnnxGraph, layout: Layout, columns: list[str], memory_size: int) -> None:
    """ML-Agents' outputs, in the order of its exporter, from the genome's output columns."""
    g.add_constant_output("version_number", [MODEL_API_VERSION])
    g.add_constant_output("memory_size", [memory_size])
    if layout.continuous:
        actions = g.op("Clip", [g.op("Concat", columns[:layout.continuous], axis=1)], min=-1.0, max=1.0)
        g.add_output("continuous_actions", actions, TensorProto.FLOAT, [BATCH, layout.continuous])
        g.add_constant_output("continuous_action_output_shape", [layout.continuous])
        g.add_output("deterministic_continuous_actions", actions, TensorProto.FLOAT, [BATCH, layout.continuous])
    if layout.branches:
        masks = g.add_input("action_masks", [BATCH, sum(layout.branches)])
        choices, start = [], layout.continuous
        for b, size in enumerate(layout.branches):
            mask_start = start - layout.continuous
            mask = g.op("Slice", [masks], axes=[1], starts=[mask_start], ends=[mask_start + size])
            choices.append(_branch_choice(g, columns[start:start + size], mask))
            start += size
        actions = g.op("Concat", choices, axis=1)
        g.add_output("discrete_actions", actions, TensorProto.INT64, [BATCH, len(layout.branches)])
        g.add_constant_output("discrete_action_output_shape", [list(layout.branches)])
        g.add_output("deterministic_discrete_actions", actions, TensorProto.INT64, [BATCH, len(layout.branches)])


def _branch_choice(g: OnnxGraph, scores: list[str], mask: str) -> str:
    """[batch, 1] int64: the first highest score among allowed actions; 0 when none is allowed.
    Scores are floored at float32's lowest finite value, so an allowed -inf still beats a masked one."""
    lowest = float(np.finfo(np.float32).min)
    finite_scores = g.op("Max", [g.op("Concat", scores, axis=1), g.const(lowest)])
    allowed = g.op("Greater", [mask, g.const(0.5)])
    masked = g.op("Where", [allowed, finite_scores, g.const(-math.inf)])
    choice = g.op("ArgMax", [masked], axis=1, keepdims=1)
    any_allowed = g.op("Greater", [g.op("ReduceMax", [mask], axes=[1], keepdims=1), g.const(0.5)])
    return g.op("Where", [any_allowed, choice, g.const(0, np.int64)])


# ---------------------------------------------------------------- CTRNN: Euler steps unrolled

SCHEDULE_DECISIONS = 65_536   # decisions of an episode whose Euler steps the model follows exactly
SCHEDULE_WORK = 2 ** 21       # at most this many steps are simulated to find them
NEGLIGIBLE_STEP = 1e-6        # a step of at most this many time steps is taken as 0 s (it still swaps)


class Schedule(NamedTuple):
    """The Euler steps of one decision as neat-python's CTRNN.advance takes them from a reset.

    `dt[j]` is step j's length (0.0 for a step of at most NEGLIGIBLE_STEP time steps: the 1e-17
    to 1e-12 s remainders of the float64 clock, which only swap the two value buffers); decision
    k (counted from the episode's start) takes the first `counts[min(k, len(counts) - 1)]` steps;
    `counts` is None when every decision takes all of them."""
    dt: tuple
    counts: np.ndarray | None


@functools.lru_cache(maxsize=16)
def euler_schedule(advance_time: float, time_step: float) -> Schedule:
    """CTRNN.advance's loop (`while time < final: dt = min(time_step, final - time)`) replayed on
    the float64 clock from 0.0 for the first decisions of an episode; the entry after the last
    simulated decision is the most common count, used for every later decision."""
    steps = max(1, math.ceil(advance_time / time_step))
    decisions = max(1024, min(SCHEDULE_DECISIONS, SCHEDULE_WORK // steps))
    time, patterns = 0.0, []
    for _ in range(decisions):
        final, taken = time + advance_time, []
        while time < final:
            dt = min(time_step, final - time)
            taken.append(dt)
            time += dt
        patterns.append(taken)
    longest = max(len(p) for p in patterns)
    dt = []
    for j in range(longest):
        values = np.array([p[j] for p in patterns if len(p) > j])
        real = values > NEGLIGIBLE_STEP * time_step
        if real.any() and (not real.all() or np.ptp(values) > 1e-6 * values.max()):
            raise ExportError(f"a CTRNN decision of {advance_time!r} s in steps of {time_step!r} s takes Euler "
                              f"steps of varying length (step {j + 1}: {values.min()!r} to {values.max()!r} s), "
                              f"which the model cannot follow: choose a time step that divides the decision "
                              f"time, or a clearly shorter last step")
        dt.append(float(values.mean()) if real.any() else 0.0)
    counts = np.array([len(p) for p in patterns])
    if (counts == longest).all():
        return Schedule(tuple(dt), None)
    common = np.bincount(counts).argmax()
    return Schedule(tuple(dt), np.append(counts, common).astype(np.float32))


class _CTRNN(_Network):
    """neat-python's CTRNN as [batch, 1] columns: per decision, the Euler steps of `schedule`
    unrolled. Memory: the two value buffers of the evaluated nodes (`current`, the one the last
    step wrote and the next step reads, then `other`, the one the last step read and the outputs
    come from, as CTRNN.advance returns them), preceded by the decision count within the episode
    when the number of steps varies (the rounding steps of neat-python's clock, which the
    schedule lists per decision)."""

    def __init__(self, graph: OnnxGraph, tables: Tables, layout: Layout, schedule: Schedule):
        super().__init__(graph, tables, layout)
        self.schedule = schedule
        self.counted = schedule.counts is not None and len(self.nodes) > 0
        self.memory_size = 2 * len(self.nodes) + self.counted

    def evaluate(self) -> list[str]:
        t, g = self.t, self.g
        inputs = self._input_columns()
        if not self.nodes:  # no node has an input link: neat-python's outputs stay 0.0, no memory
            return [self.zero() for _ in range(t.num_outputs)]
        memory = g.op("Flatten", [g.add_input("recurrent_in", [BATCH, 1, self.memory_size])])
        first, n = int(self.counted), len(self.nodes)
        slots = [int(t.node_slot[k]) for k in self.nodes]
        current = {slot: self._column(memory, first + j) for j, slot in enumerate(slots)}
        other = {slot: self._column(memory, first + n + j) for j, slot in enumerate(slots)}
        taken = self._steps_taken(memory) if self.counted else None
        always = len(self.schedule.dt) if taken is None else int(self.schedule.counts.min())
        for step, dt in enumerate(self.schedule.dt):
            moved = self._euler_step(current, other, inputs, dt) if dt else dict(other)
            if step < always:
                current, other = moved, current
            else:  # taken only by the decisions that count more than `step` steps
                condition = g.op("Greater", [taken, g.const(float(step))])
                current, other = ({s: g.op("Where", [condition, moved[s], current[s]]) for s in slots},
                                  {s: g.op("Where", [condition, current[s], other[s]]) for s in slots})
        state = [current[s] for s in slots] + [other[s] for s in slots]
        if self.counted:
            state.insert(0, g.op("Add", [self._column(memory, 0), g.const(1.0)]))
        g.add_output("recurrent_out", g.op("Unsqueeze", [self._concat(state)], axes=[1]), TensorProto.FLOAT,
                     [BATCH, 1, self.memory_size])
        first_output = t.num_inputs  # CTRNN.advance returns values[1 - active]: the buffer its last step read
        return [other.get(first_output + k) or self.zero() for k in range(t.num_outputs)]

    def _steps_taken(self, memory: str) -> str:
        """[batch, 1]: how many Euler steps this decision takes (the schedule's count of the
        decision, clamped to the last entry)."""
        g, counts = self.g, self.schedule.counts
        table = f"ctrnn_steps_{len(g.initializers)}"
        g.initializers.append(numpy_helper.from_array(counts, table))
        decision = g.op("Min", [self._column(memory, 0), g.const(float(len(counts) - 1))])
        return g.op("Gather", [table, g.op("Cast", [decision], to=TensorProto.INT64)], axis=0)

    def _euler_step(self, current: dict, other: dict, inputs: list[str], dt: float) -> dict:
        """One step: every node's z from `current` (inputs from the observations), then
        other + dt / tau * (z - other), as CTRNN.advance updates the buffer it does not read."""
        t, g = self.t, self.g
        read = dict(enumerate(inputs))
        read.update(current)
        moved = {}
        for k in self.nodes:
            slot = int(t.node_slot[k])
            z = self._node(k, read)
            rate = g.const(dt / float(t.node_tau[k]))
            moved[slot] = g.op("Add", [other[slot], g.op("Mul", [rate, g.op("Sub", [z, other[slot]])])])
        return moved
