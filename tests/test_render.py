"""The builds' frames (neatpar_sim/render.py, and each task's Task.render): the canvas's shapes are
exactly the pixels their definitions name, on many inputs, against a pixel-by-pixel reading of
the definition; and each task's frame draws what its state says (the ball where it is on the
platform, paddles, players, the drone, the probe's counts), for every agent chosen."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neatpar_sim import render
from neatpar_sim.spec import Task, renders
from neatpar_sim.tasks import TASKS

SMALL = 32
coordinate = st.floats(-8.0, SMALL + 8.0, allow_nan=False)
COLOR = (200, 10, 90)


def centres():
    """Every pixel's centre, (y, x) arrays of a SMALL canvas."""
    ys, xs = np.mgrid[0:SMALL, 0:SMALL]
    return ys + 0.5, xs + 0.5


def painted(canvas) -> np.ndarray:
    return (canvas.image == COLOR).all(axis=2)


@settings(max_examples=200, deadline=None)
@given(coordinate, coordinate, coordinate, coordinate)
def test_a_rectangle_is_the_pixels_whose_centres_lie_in_it(x0, y0, x1, y1):
    canvas = render.Canvas(SMALL)
    canvas.rect(x0, y0, x1, y1, COLOR)
    ys, xs = centres()
    expected = (xs >= min(x0, x1)) & (xs < max(x0, x1)) & (ys >= min(y0, y1)) & (ys < max(y0, y1))
    assert (painted(canvas) == expected).all()
    assert (canvas.image[~expected] == render.BACKGROUND).all()


@settings(max_examples=200, deadline=None)
@given(coordinate, coordinate, st.floats(0.0, 12.0))
def test_a_disc_is_the_pixels_whose_centres_lie_within_its_radius(x, y, radius):
    canvas = render.Canvas(SMALL)
    canvas.disc(x, y, radius, COLOR)
    ys, xs = centres()
    assert (painted(canvas) == ((xs - x) ** 2 + (ys - y) ** 2 <= radius ** 2)).all()


@settings(max_examples=200, deadline=None)
@given(coordinate, coordinate, coordinate, coordinate, st.floats(0.5, 6.0))
def test_a_line_is_the_pixels_whose_centres_lie_within_half_its_width_of_the_segment(x0, y0, x1, y1, width):
    canvas = render.Canvas(SMALL)
    canvas.line(x0, y0, x1, y1, COLOR, width)
    ys, xs = centres()
    dx, dy = x1 - x0, y1 - y0
    length = dx * dx + dy * dy
    along = np.clip(((xs - x0) * dx + (ys - y0) * dy) / length, 0, 1) if length > 0 else 0.0
    distance = np.hypot(xs - (x0 + along * dx), ys - (y0 + along * dy))
    inside = distance <= width / 2
    unsure = np.abs(distance - width / 2) < 1e-9   # rounding of the two formulas at the very edge
    assert (painted(canvas) == inside)[~unsure].all()


def test_a_bar_fills_its_fraction_of_the_width_between_the_margins():
    canvas = render.Canvas()
    canvas.bar(0.25, 10, 14, COLOR, margin=8)
    columns = np.flatnonzero(painted(canvas)[12])
    assert (columns[0], columns[-1] + 1) == (8, 8 + 60)   # 0.25 of 256 - 2 x 8
    canvas.bar(3.0, 20, 24, COLOR, margin=8)
    assert np.flatnonzero(painted(canvas)[22])[-1] + 1 == 248   # clipped to the whole width


def test_every_shipped_task_draws_a_square_rgb_frame_of_each_behavior_s_agents_and_a_plain_task_none():
    rng = np.random.default_rng(1)
    options = {"probe": {"behaviors": 2}, "duel": {"asymmetric": 1}}
    for name, cls in TASKS.items():
        task = cls(options.get(name, {}), rng)
        assert renders(cls), name
        for behavior in task.behaviors:
            for row in (0, task.rows(behavior.name) - 1):
                frame = task.render(behavior.name, row)
                assert frame.shape == (render.SIZE, render.SIZE, 3) and frame.dtype == np.uint8, name
    assert not renders(Task) and Task().render("any", 0) is None


def color_centroid(frame: np.ndarray, color) -> tuple[float, float]:
    """The mean (x, y) of the pixel centres of one colour."""
    ys, xs = np.nonzero((frame == color).all(axis=2))
    assert len(xs), f"no pixel of colour {color}"
    return xs.mean() + 0.5, ys.mean() + 0.5


def color_rows(frame: np.ndarray, color, column: int) -> tuple[int, int]:
    rows = np.flatnonzero((frame[:, column] == color).all(axis=1))
    return rows[0], rows[-1] + 1


def ball_task(agents=3):
    return TASKS["ball"]({"agents": agents}, np.random.default_rng(2))


@settings(max_examples=60, deadline=None)
@given(st.floats(-2.9, 2.9), st.floats(-2.9, 2.9), st.integers(0, 2))
def test_the_ball_is_drawn_where_its_state_puts_it_on_the_platform(x, z, row):
    task = ball_task()
    task.pos[row] = (x, z)
    task.tilt[row] = (0.0, 0.0)   # no downhill line over the ball
    frame = task.render(task.behaviors[0].name, row)
    px, pz = task.scales()
    cx, cy = color_centroid(frame, task.BALL_COLOR)
    assert abs(cx - px(x)) < 0.5 and abs(cy - pz(z)) < 0.5
    assert pz(1.0) < pz(0.0) and px(1.0) > px(0.0)   # x to the right, z upwards


def test_the_ball_s_frame_shows_its_own_row_and_the_tilt_downhill():
    task = ball_task()
    task.pos[:] = [(-1.0, 0.0), (1.5, 1.5), (0.0, -2.0)]
    task.tilt[:] = 0.0
    task.tilt[1] = (-0.3, 0.0)   # about z, negative: the ball rolls towards +x
    for row in range(3):
        cx, cy = color_centroid(task.render(task.behaviors[0].name, row), task.BALL_COLOR)
        px, pz = task.scales()
        assert abs(cx - px(task.pos[row, 0])) < 0.5 and abs(cy - pz(task.pos[row, 1])) < 0.5
    tilted = task.render(task.behaviors[0].name, 1)
    lx, ly = color_centroid(tilted, task.TILT_COLOR)
    assert lx > render.SIZE / 2 + 5 and abs(ly - render.SIZE / 2) < 2   # towards +x, drawn from the centre


def test_a_duel_frame_draws_both_paddles_where_they_are_the_ball_and_the_points():
    task = TASKS["duel"]({"areas": 3}, np.random.default_rng(3))
    task.paddle[:, 1] = (0.5, -0.3)
    task.ball[1] = (0.75, 0.4)
    task.won[:, 1] = (2, 1)
    x, y = task.scales()
    for behavior in task.behaviors:
        frame = task.render(behavior.name, 1)
        mine = task._team(behavior.name)
        for team, column in ((0, int(x(0.0)) - 3), (1, int(x(1.0)) + 3)):
            color = render.HIGHLIGHT if team == mine else task.TEAM_COLORS[team]
            top, bottom = color_rows(frame, color, column)
            assert abs(top - y(task.paddle[team, 1] + task.HALF)) <= 1 and abs(bottom - y(task.paddle[team, 1] - task.HALF)) <= 1
        cx, cy = color_centroid(frame, task.BALL_COLOR)
        assert abs(cx - x(0.75)) < 0.5 and abs(cy - y(0.4)) < 0.5
        points = [(frame[:12] == c).all(axis=2).sum() for c in task.TEAM_COLORS]
        assert points[0] == 2 * points[1] > 0   # two dots for team 0, one for team 1


def test_a_teams_frame_puts_the_players_and_the_ball_in_their_cells_and_frames_the_agent_s_player():
    task = TASKS["teams"]({"areas": 2}, np.random.default_rng(4))
    task.players[:, 1] = [(3, 1), (7, 4)]
    task.ball[1] = (5, 2)
    task.steps[1] = task.max_steps // 4
    for team, behavior in enumerate(task.behaviors):
        frame = task.render(behavior.name, 1)
        for other in (0, 1):
            left, top, side = task.cell(*task.players[other, 1])
            cx, cy = color_centroid(frame, task.TEAM_COLORS[other])
            assert abs(cx - (left + side / 2)) < 1 and abs(cy - (top + side / 2)) < 1
        left, top, side = task.cell(5, 2)
        cx, cy = color_centroid(frame, task.BALL_COLOR)
        assert abs(cx - (left + side / 2)) < 0.5 and abs(cy - (top + side / 2)) < 0.5
        hx, hy = color_centroid(frame, render.HIGHLIGHT)
        left, top, side = task.cell(*task.players[team, 1])
        assert abs(hx - (left + side / 2)) < 1 and abs(hy - (top + side / 2)) < 1
        clock = (frame == task.CLOCK_COLOR).all(axis=2).any(axis=0).sum()
        assert abs(clock - 0.75 * (render.SIZE - 2 * task.MARGIN)) <= 1


def test_a_hover_frame_draws_the_drone_at_its_altitude_the_target_and_the_thrust():
    task = TASKS["hover"]({"agents": 2}, np.random.default_rng(5))
    y = task.altitude()
    for height, thrust in ((2.0, -0.5), (7.5, 0.5)):
        task.height[1], task.thrust[1] = height, thrust
        frame = task.render(task.behaviors[0].name, 1)
        _, cy = color_centroid(frame, task.DRONE_COLOR)
        assert abs(cy - y(height)) < 0.5
        _, target = color_centroid(frame, task.TARGET_COLOR)
        assert abs(target - y(task.target()[1])) < 1
        flame = (frame == task.FLAME_COLOR).all(axis=2).any(axis=1).sum()
        assert abs(flame - (20 * (thrust + 1.0) - 5)) <= 1   # below the drone's lower half


def test_a_probe_frame_gauges_the_agent_s_decisions_in_its_episode():
    task = TASKS["probe"]({"agents": 2, "episode_decisions": 8}, np.random.default_rng(6))
    name = task.behaviors[0].name
    for decisions in (0, 2, 8):
        task.decisions[name][0] = decisions
        frame = task.render(name, 0)
        gauge = (frame[32] == task.DECISIONS_COLOR).all(axis=1).sum()
        assert abs(gauge - decisions / 8 * (render.SIZE - 16)) <= 1


@pytest.mark.parametrize("name", sorted(TASKS))
def test_drawing_changes_nothing_of_the_task_and_draws_no_random_number(name):
    rng = np.random.default_rng(7)
    task = TASKS[name]({}, rng)
    drawn = rng.bit_generator.state
    state = {k: np.copy(v) for k, v in vars(task).items() if isinstance(v, np.ndarray)}
    for behavior in task.behaviors:
        task.render(behavior.name, 0)
    assert all((getattr(task, k) == v).all() for k, v in state.items())
    assert rng.bit_generator.state == drawn
