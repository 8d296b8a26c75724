"""Tests of parallel/transfer.py: a task and a worker's start-up pickled as the pool sends them,
read back as a worker reads them, and the one-line errors naming the live handle or the part that
cannot travel."""
import io
import multiprocessing
import pickle
import socket
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import fitness_fns
from neatpar.errors import LiveHandleError, TransferError
from neatpar.parallel.messages import RunTask
from neatpar.parallel.serialize import dumps
from neatpar.parallel.transfer import dumps_checked, pickle_startup, pickle_task
from neatpar.parallel.workers import SharedRef

NOTE = "unset"  # set by an initializer sent by value, in the globals it arrives with
LOCK = threading.Lock()


def test_a_task_is_a_run_task_message_whose_payload_is_the_call():
    offset = 3

    def shifted(x, *, by):
        return x + by + offset
    message = pickle.loads(pickle_task(41, shifted, (1,), {"by": 2}))
    assert type(message) is RunTask and message.task_id == 41
    func, args, kwds = pickle.loads(message.payload)
    assert (args, kwds) == ((1,), {"by": 2}) and func is not shifted and func(*args, **kwds) == 6


def test_a_live_handle_in_a_task_is_refused_naming_where_it_sits():
    with socket.socket() as sock:
        def uses_sock(genome):
            return sock.fileno()
        for func, args, kwds, where in [
                (fitness_fns.whoami, ([1, {"conn": sock}],), {}, "args[0][1]['conn']"),
                (fitness_fns.whoami, (), {"tag": sock}, "kwds['tag']"),
                (uses_sock, (), {}, "test_a_live_handle_in_a_task_is_refused_naming_where_it_sits.<locals>.uses_sock's "
                                    "closure variable 'sock'")]:
            with pytest.raises(LiveHandleError) as info:
                pickle_task(0, func, args, kwds)
            assert str(info.value) == (f"cannot send {where} (socket, socket) to a worker: live handles stay in the "
                                       f"process that made them; create it inside the function that runs in the "
                                       f"worker, or pass plain data")


def nested(value, steps):
    """`value` inside containers, one per step: an int step is a list index, a str step a dict key."""
    for step in reversed(steps):
        value = [0] * step + [value] if isinstance(step, int) else {step: value, "plain": 1}
    return value


@settings(max_examples=100, deadline=None)
@given(steps=st.lists(st.one_of(st.integers(0, 2), st.text(max_size=4)), max_size=6))
def test_what_does_not_pickle_is_named_by_its_path_four_levels_deep_at_most(steps):
    with pytest.raises(TransferError) as info:
        pickle_task(0, fitness_fns.whoami, ("data", nested(LOCK, steps)), {})
    path = "args[1]" + "".join(f"[{step!r}]" for step in steps[:3])
    assert str(info.value) == (f"cannot send the arguments of 'whoami' to a worker: {path} cannot be pickled "
                               f"(TypeError: cannot pickle '_thread.lock' object)")


def test_an_object_that_does_not_pickle_as_a_whole_is_named_by_what_it_is():
    assert dumps_checked({"x": [1.5]}, "shared object") == dumps({"x": [1.5]})
    with pytest.raises(TransferError) as info:
        dumps_checked(LOCK, "shared object")
    assert str(info.value) == "cannot send shared object to a worker: cannot pickle '_thread.lock' object"
    with socket.socket() as sock, pytest.raises(LiveHandleError, match=r"^cannot send object\[0\] \(socket, socket\)"):
        dumps_checked([sock], "shared object")


def load_parts(startup):
    """The start-up parts read back as a worker reads them: one unpickler, load() after load()."""
    unpickler = pickle.Unpickler(io.BytesIO(startup.data))
    return {name: unpickler.load() for name in startup.names}


def test_start_up_parts_travel_in_order_with_their_keys_and_share_globals_on_arrival():
    def initializer(value):
        global NOTE
        NOTE = value

    def read_note(genome, config):
        return NOTE
    refs = {"eval_function": SharedRef(7)}
    startup = pickle_startup((5,), initializer, {"eval_function": read_note, "table": [1, 2]}, refs)
    assert startup.names == ("initargs", "initializer", "eval_function", "table")
    assert startup.keys == (None, None, 7, None)
    parts = load_parts(startup)
    assert parts["initargs"] == (5,) and parts["table"] == [1, 2]
    parts["initializer"]("set in the worker")
    assert parts["eval_function"](None, None) == "set in the worker"  # the initializer's global, read
    assert NOTE == "unset"  # the sender's own globals untouched


def test_initargs_only_multiprocessing_can_send_are_left_to_it():
    shared_array = multiprocessing.get_context("spawn").RawArray("d", 3)
    startup = pickle_startup((shared_array,), fitness_fns.failing_initializer, {}, {})
    assert startup.names == ("initializer",) and startup.keys == (None,)
    assert load_parts(startup) == {"initializer": fitness_fns.failing_initializer}


def test_a_start_up_part_that_cannot_travel_is_named():
    def locked(genome, config):
        return LOCK.locked()
    with pytest.raises(TransferError) as info:
        pickle_startup((), None, {"eval_function": locked}, {})
    assert str(info.value) == ("cannot send eval_function to a worker: eval_function's global 'LOCK' cannot be "
                               "pickled (TypeError: cannot pickle '_thread.lock' object)")
    with socket.socket() as sock:
        def connected(value):
            return sock
        with pytest.raises(LiveHandleError, match=r"^cannot send initializer's closure variable 'sock' \(socket, "):
            pickle_startup((1,), connected, {}, {})
