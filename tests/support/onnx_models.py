"""ONNX models as ML-Agents reads them: its C# loader's checks, sessions, and episodes recorded
on a simulator and replayed through an exported model."""
from .simulators import simulator


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
    """A one-genome population kernel (with state or without) drives the `agents` agents
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
    """The recorded observations through an exported model, every agent's memory (if it has
    any) carried from its episode's start, as Unity batches agents: (steps, largest |model
    action - recorded action|)."""
    import numpy as np
    session = checked_session(model)
    agents = sorted(recorded)
    memory = np.zeros((len(agents), 1, memory_size(model)), np.float32)
    steps = max(len(r) for r in recorded.values())
    worst = 0.0
    for t in range(steps):
        live = [k for k, a in enumerate(agents) if t < len(recorded[a])]  # agents still in their episode
        obs = np.stack([recorded[agents[k]][t][0] for k in live])
        if memory.shape[2]:
            continuous, memory[live] = session.run(["continuous_actions", "recurrent_out"],
                                                   {"obs_0": obs, "recurrent_in": memory[live]})
        else:
            continuous, = session.run(["continuous_actions"], {"obs_0": obs})
        expected = np.stack([recorded[agents[k]][t][1] for k in live])
        worst = max(worst, float(np.abs(continuous - expected).max()))
    return steps, worst


def play_returns(act, build: str, args: list, agents: int, seed: int = 5) -> list[float]:
    """Every agent's first episode return on a simulator build, each decision's continuous actions
    `act(observations)` (mlagents-envs' observations of the deciding agents, one array per
    sensor), sorted by agent."""
    import numpy as np
    from mlagents_envs.base_env import ActionTuple
    returns: dict[int, float] = {}
    done: set[int] = set()
    with simulator(build, args=args, seed=seed) as env:
        env.reset()
        behavior = next(iter(env.behavior_specs))
        while len(done) < agents:
            decision, terminal = env.get_steps(behavior)
            for agent, reward in zip(terminal.agent_id.tolist(), terminal.reward.tolist()):
                if agent not in done:
                    returns[agent] = returns.get(agent, 0.0) + reward
                    done.add(agent)
            if len(decision):
                for agent, reward in zip(decision.agent_id.tolist(), decision.reward.tolist()):
                    if agent not in done:
                        returns[agent] = returns.get(agent, 0.0) + reward
                env.set_actions(behavior, ActionTuple(continuous=np.asarray(act(decision.obs), np.float32)))
            env.step()
    return [returns[a] for a in sorted(returns)]
