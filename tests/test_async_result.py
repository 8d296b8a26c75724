"""The future result of a pool task (neatpar/parallel/async_result.py), on a real pool: not ready
until its task finishes, a timed-out wait leaves it waiting, a failure is its error and re-raised."""
import pytest

from support import fitness_fns
import neatpar
from neatpar.errors import RemoteError


@pytest.fixture(scope="module")
def pool():
    with neatpar.Pool(1) as p:
        yield p


def test_a_result_is_ready_with_its_value_once_its_task_finished(pool):
    result = pool.apply_async(fitness_fns.sleep_then, (0.5, "slept"))
    assert not result.ready()
    with pytest.raises(ValueError, match=f"task {result.task_id} is not ready"):
        result.successful()
    with pytest.raises(TimeoutError, match=f"task {result.task_id} not finished within 0.01 s"):
        result.get(timeout=0.01)
    assert result.get(timeout=30) == "slept"
    assert result.ready() and result.successful() and result.error is None


def test_a_failed_task_s_result_holds_the_error_and_get_raises_it(pool):
    result = pool.apply_async(fitness_fns.count_up_then_raise, (3,))
    result.wait(timeout=30)
    assert result.ready() and not result.successful()
    assert isinstance(result.error, RemoteError) and result.partial == [0, 1, 2]
    with pytest.raises(RemoteError) as raised:
        result.get()
    assert raised.value is result.error
