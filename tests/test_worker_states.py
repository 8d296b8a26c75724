"""The pool's worker lifecycle (neatpar/parallel/worker_states.py): its table has a row for every
message a worker sends, and a real worker that speaks out of turn stops the pool with a one-line error."""
import pytest

from support import fitness_fns
import neatpar
from neatpar.errors import PoolProtocolError, WorkerDied
from neatpar.parallel.messages import Done, Failed, Items, LoadFailed, Ready, Reached, Retire, StartFailed, StartStage
from neatpar.parallel.worker_states import POOL_EVENTS, TRANSITIONS, WorkerState


def test_the_state_table_has_a_state_for_every_message_a_worker_sends():
    accepted = {kind for row in TRANSITIONS.values() for kind in row}
    assert accepted - set(POOL_EVENTS) == {Reached, Ready, Items, Done, Failed, LoadFailed, Retire, StartFailed}
    assert TRANSITIONS[WorkerState.GONE] == {}   # a gone worker is heard no more


@pytest.mark.parametrize("message, said", [
    (Ready(0, ()), r"sent Ready while busy with task \d+, out of turn \(a busy worker sends Items or Done or "
                   r"Failed or LoadFailed or Retire\)"),
    (Done(-1, None, []), r"sent Done about task -1 while busy with task \d+, out of turn")])
def test_a_message_out_of_turn_stops_the_pool_with_a_one_line_error(message, said):
    """The pool's state table checks every message: a busy worker that says it is ready, or
    reports another task than its own, is out of step with the pool."""
    pool = neatpar.Pool(1)
    result = pool.apply_async(fitness_fns.send_out_of_turn, (message,))
    with pytest.raises(PoolProtocolError, match=said) as error:
        result.get(timeout=60)
    assert "\n" not in str(error.value) and "a task must not send on its worker's channel" in str(error.value)
    assert pool.pids == []   # stopped: no worker left running
    with pytest.raises(ValueError, match="the pool is closed"):
        pool.apply_async(fitness_fns.whoami, (0,))


def test_an_idle_worker_that_speaks_is_out_of_turn():
    pool = neatpar.Pool(2)
    try:
        assert pool.apply_async(fitness_fns.send_out_of_turn, (Reached(StartStage.LOAD, 0), 1.0), worker=0).get(60) \
            == "sent"
        waiting = pool.apply_async(fitness_fns.sleep_then, (20, "slept"), worker=1)
        with pytest.raises(PoolProtocolError, match=r"pool worker 0 \(pid \d+\) sent Reached while idle, out of turn "
                                                    r"\(an idle worker sends Retire\)"):
            waiting.get(timeout=60)
        assert isinstance(waiting.error, WorkerDied)   # the pool stopped under the task it waited for
    finally:
        pool.terminate()

