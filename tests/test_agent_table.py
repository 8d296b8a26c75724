"""The agent table (neatpar/episodes/agent_table.py): agents take rows at their first report, keep them
while they live, give them back when they go, and the table grows without losing a row's state."""
import numpy as np

from neatpar.episodes.agent_table import AgentTable, Phase


def ids(*values) -> np.ndarray:
    return np.array(values, np.int64)


def test_an_agent_keeps_its_row_and_an_unknown_one_has_none():
    table = AgentTable()
    rows = table.take("Blue", ids(7, 3))
    assert len(set(rows.tolist())) == 2 and (table.phase[rows] == Phase.FREE).all()
    assert table.take("Blue", ids(3, 7)).tolist() == rows[::-1].tolist()
    assert table.lookup("Blue", ids(7, 9)).tolist() == [rows[0], -1]
    assert table.lookup("Purple", ids(7)).tolist() == [-1]   # agent ids are per behavior


def test_a_released_row_is_free_for_the_next_agent():
    table = AgentTable()
    first = table.take("Blue", ids(1, 2))
    table.phase[first] = Phase.SCORED
    table.release("Blue", ids(1), first[:1])
    assert table.lookup("Blue", ids(1, 2)).tolist() == [-1, first[1]]
    assert table.phase[first[0]] == Phase.FREE
    assert table.take("Blue", ids(5)).tolist() == [first[0]]


def test_growing_keeps_every_row_s_state():
    table = AgentTable()
    rows = table.take("Blue", np.arange(10))
    table.phase[rows], table.genome[rows], table.ret[rows] = Phase.SCORED, np.arange(10), 0.5 * np.arange(10)
    more = table.take("Blue", np.arange(10, 40))      # more agents than the first rows
    assert len(set(rows.tolist()) | set(more.tolist())) == 40
    assert table.genome[rows].tolist() == list(range(10)) and table.ret[rows].tolist() == [0.5 * i for i in range(10)]
    assert (table.phase[rows] == Phase.SCORED).all() and (table.phase[more] == Phase.FREE).all()


def test_live_rows_are_those_of_the_behaviors_asked_for_and_clear_frees_all():
    table = AgentTable()
    blue, purple = table.take("Blue", ids(1, 2)), table.take("Purple", ids(1))
    assert sorted(table.live(["Blue"]).tolist()) == sorted(blue.tolist())
    assert sorted(table.live(["Blue", "Purple"]).tolist()) == sorted(blue.tolist() + purple.tolist())
    table.phase[blue] = Phase.OVERTIME
    table.clear()
    assert table.live(["Blue", "Purple"]).tolist() == [] and (table.phase == Phase.FREE).all()
    assert len(set(table.take("Blue", np.arange(len(table.phase))).tolist())) == len(table.phase)  # no row lost
