"""Tests of the deceptive maze (neatpar_sim/maze.py): range finders, radar and position as
observations, walls that stop the robot, the reward only at the episode's end (closeness to the
goal, 1 for reaching it), the deception (the reward's dead end under the goal beats every point of
the way on), repeatable episodes, and the build played by a real UnityEnvironment."""
import math

import numpy as np
from mlagents_envs.base_env import ActionTuple

from neatpar_sim import maze
from neatpar_sim.maze import GOAL, RADIUS, START, Maze, closeness, wall_distance
from neatpar_sim.tasks import TASKS
from support.simulators import simulator

NAME = "Maze?team=0"


def drive(task, actions, steps):
    """Step every robot with the same (n, 2) actions; the StepResults."""
    acting = np.ones(task.n, bool)
    return [task.step({NAME: (actions.astype(np.float32), None)}, {NAME: acting}, {NAME: acting})[NAME]
            for _ in range(steps)]


def test_the_start_observation_is_the_range_finders_radar_and_position_worked_out_by_hand():
    observation = Maze({"agents": 2}, None).observe(NAME)
    # From (20, 30) heading right: the floor 30 below, 30 x sqrt(2) down-right, nothing within 100
    # ahead, the first wall 37 above (37 x sqrt(2) up-right), the left side 20 behind.
    ranges = [30, 30 * math.sqrt(2), 100, 37 * math.sqrt(2), 37, 20]
    assert np.allclose(observation[:, :6], np.array(ranges) / 100.0)
    assert observation[:, 6:10].tolist() == [[1, 0, 0, 0]] * 2          # the goal is ahead (up-right)
    assert np.allclose(observation[:, 10:], [20 / 100 - 1, 30 / 100 - 1])
    assert observation.dtype == np.float32 and TASKS["maze"] is Maze


def test_the_radar_names_the_slice_the_goal_lies_in():
    headings = np.array([math.atan2(GOAL[1] - 30, GOAL[0] - 20) + turn for turn in (0, math.pi / 2, math.pi, -math.pi / 2)])
    slices = maze.radar(np.tile(START, (4, 1)), headings)
    assert slices.tolist() == [[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0], [0, 1, 0, 0]]   # front, right, back, left


def test_walls_stop_the_robot_and_no_drive_ever_brings_it_within_its_radius():
    task = Maze({"agents": 1}, None)
    task.heading[:] = math.pi / 2
    drive(task, np.array([[0.0, 1.0]]), 40)
    assert task.position[0, 0] == 20.0 and 67 - RADIUS - 3.0 < task.position[0, 1] < 67 - RADIUS
    rng = np.random.default_rng(4)
    task = Maze({"agents": 64, "max_steps": 10**6}, None)
    for _ in range(300):
        drive(task, rng.uniform(-1, 1, (64, 2)), 1)
        assert (wall_distance(task.position) >= RADIUS).all()
        assert ((task.position > 0) & (task.position < 200)).all()


def test_the_reward_comes_at_the_end_closeness_when_interrupted_and_one_at_the_goal():
    task = Maze({"agents": 3, "max_steps": 5}, None)
    task.position[2] = (GOAL[0] - 9.0, GOAL[1])                # 9 from the goal, heading at it: 7.5 after a step
    results = drive(task, np.array([[0.0, 0.5]] * 3), 5)
    assert results[0].done.tolist() == [False, False, True] and results[0].reward[2] == 1.0
    assert not results[0].interrupted[2]
    assert all(r.reward[:2].tolist() == [0, 0] and not r.done[:2].any() for r in results[:4])
    last = results[4]
    assert last.done[:2].all() and last.interrupted[:2].all()
    assert np.allclose(last.reward[:2], closeness(task.position[:2])) and last.reward[0] < 1.0


def test_the_dead_end_under_the_goal_beats_every_point_of_the_way_on():
    xs, ys = np.meshgrid(np.arange(6.0, 195.0, 1.0), np.arange(6.0, 195.0, 1.0))
    points = np.column_stack([xs.ravel(), ys.ravel()])
    points = points[wall_distance(points) >= RADIUS]
    second = (points[:, 1] > 67) & (points[:, 1] < 133)
    dead_end = closeness(np.array([[GOAL[0], 133 - RADIUS]]))[0]
    assert closeness(points[second]).max() == dead_end            # the second corridor's best is the dead end
    way_on = (second & (points[:, 0] < 145 - RADIUS)) | ((points[:, 1] >= 133) & (points[:, 0] < 80))
    assert closeness(points[way_on]).max() < dead_end               # the way on only loses...
    far = (second & (points[:, 0] < 100)) | (points[:, 1] >= 133) & (points[:, 0] < 80)
    assert closeness(points[far]).max() < dead_end - 0.15           # ...and its far half by much
    assert closeness(np.array([START]))[0] < dead_end


def test_the_same_actions_give_the_same_episode():
    rng = np.random.default_rng(9)
    actions = rng.uniform(-1, 1, (50, 8, 2))
    runs = []
    for _ in range(2):
        task = Maze({"agents": 8}, np.random.default_rng(0))
        runs.append([task.step({NAME: (a.astype(np.float32), None)}, {NAME: np.ones(8, bool)},
                               {NAME: np.ones(8, bool)})[NAME].reward.tolist() + task.observe(NAME).tolist()
                     for a in actions])
    assert runs[0] == runs[1]


def test_a_real_unity_environment_plays_the_maze_to_its_end():
    with simulator("maze", args=["--agents", "4", "--max-steps", "30"], seed=2) as env:
        env.reset()
        spec = env.behavior_specs[NAME]
        assert [o.shape for o in spec.observation_specs] == [(12,)] and spec.action_spec.continuous_size == 2
        decision, _ = env.get_steps(NAME)
        assert np.array_equal(decision.obs[0], Maze({"agents": 4}, None).observe(NAME))
        turns = np.array([[0.0, 1.0], [0.5, 1.0], [-0.3, 0.8], [1.0, -1.0]], np.float32)
        rewards = {}
        for _ in range(30):
            env.set_actions(NAME, ActionTuple(continuous=turns[decision.agent_id]))
            env.step()
            decision, terminal = env.get_steps(NAME)
            rewards.update(zip(terminal.agent_id.tolist(), zip(terminal.reward.tolist(), terminal.obs[0].tolist(),
                                                              terminal.interrupted.tolist())))
        assert sorted(rewards) == [0, 1, 2, 3]
        for reward, observation, interrupted in rewards.values():
            position = (np.array(observation[10:]) + 1.0) * 100.0      # the final observation's position
            assert interrupted and math.isclose(reward, closeness(position[None])[0], abs_tol=1e-5)
        task = Maze({"agents": 4, "max_steps": 30}, None)
        drive(task, turns, 30)
        assert np.allclose([rewards[i][1][10:] for i in range(4)], task.observe(NAME)[:, 10:], atol=1e-6)


def test_the_goal_parameter_moves_the_goal_along_the_way_through_the_maze():
    """GetWithDefault("goal", 1) in each robot's OnEpisodeBegin: 0 puts the goal at the start (the
    first step reaches it), a uniform sampler a new place for each robot, on the way through."""
    from neatpar_sim.game_parameters import GameParameters
    from neatpar_sim.maze import PATH, along_path
    from support.curricula import parameter_payload
    assert along_path(0.0) == START and along_path(1.0) == GOAL and along_path(0.5) != GOAL
    legs = np.hypot(*np.diff(PATH, axis=0).T)
    assert along_path(legs[0] / legs.sum()) == (180.0, 30.0)
    parameters = GameParameters()
    parameters.receive(parameter_payload(lambda c: c.set_float_parameter("goal", 0.0)))
    at_start = Maze({"agents": 2}, None, parameters=parameters)
    result = drive(at_start, np.zeros((2, 2)), 1)[0]
    assert result.done.all() and (result.reward == 1.0).all()
    parameters.receive(parameter_payload(lambda c: c.set_uniform_sampler_parameters("goal", 0.2, 0.8, 3)))
    spread = Maze({"agents": 4}, None, parameters=parameters)
    assert len({tuple(g) for g in spread.goal}) == 4
    assert all(not np.allclose(g, GOAL) for g in spread.goal)


def test_the_opening_parameter_moves_the_second_wall_s_left_end():
    """GetWithDefault("opening", 30): the second wall ends there, for the range finders and for
    moves alike; 200 takes it away."""
    from neatpar_sim.game_parameters import GameParameters
    from support.curricula import parameter_payload
    for opening, ahead in ((30.0, 23.0), (200.0, 90.0), (90.0, 90.0)):
        parameters = GameParameters()
        parameters.receive(parameter_payload(lambda c: c.set_float_parameter("opening", opening)))
        task = Maze({"agents": 1}, None, parameters=parameters)
        task.position[:] = (60.0, 110.0)
        task.heading[:] = math.pi / 2   # up, towards the second wall at y = 133
        assert math.isclose(task.observe(NAME)[0, 2] * 100.0, ahead, abs_tol=1e-9)
        drive(task, np.array([[0.0, 1.0]]), 20)   # straight up at full speed
        assert (task.position[0, 1] > 133.0) == (opening > 60.0 + RADIUS)
