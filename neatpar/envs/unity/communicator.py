"""neatpar's communicator for mlagents-envs' UnityEnvironment: the game talks to a gRPC server bound
to 127.0.0.1 only (the stock one listens on every interface), and each message passes between
gRPC's thread and the main thread through in-process queues instead of the stock pickling Pipe,
with the stock timeout and dead-process detection.

gRPC hands over the messages' raw bytes both ways (a handler without (de)serializers): the bulk
step path (bulk.py) reads and writes them itself through `exchange_bytes`; `initialize` and
`exchange`, mlagents-envs' Communicator interface, parse and serialize them with protobuf.
"""
from __future__ import annotations

import queue
import socket
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import grpc
from mlagents_envs.communicator import Communicator, PollCallback
from mlagents_envs.communicator_objects.unity_input_pb2 import UnityInputProto
from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto
from mlagents_envs.communicator_objects.unity_output_pb2 import UnityOutputProto
from mlagents_envs.exception import UnityTimeOutException, UnityWorkerInUseException

LISTEN_HOST = "127.0.0.1"
BASE_PORT = 5005
SERVICE = "communicator_objects.UnityToExternalProto"  # the game calls its one method, Exchange
STATUS_OK, STATUS_CLOSE = 200, 400


class _HandOver:
    """Runs on gRPC's thread: hands each request's bytes to the main thread and waits for the
    reply's bytes."""

    def __init__(self):
        self.requests: queue.Queue = queue.Queue()
        self.replies: queue.Queue = queue.Queue()
        _release_at_exit(self)

    def exchange(self, request: bytes, context) -> bytes:
        self.requests.put(request)
        return self.replies.get()


_live_hand_overs: weakref.WeakSet = weakref.WeakSet()


def _release_at_exit(hand_over: _HandOver) -> None:
    """At interpreter exit, every hand-over still open answers the game "close". Python's exit
    joins gRPC's worker threads; one left waiting for a reply that will never come (an environment
    the program lost without closing it, e.g. to a Ctrl+C at the wrong moment) would hang the exit.
    Registered with threading's exit hooks, which run before those joins, on first use."""
    if not getattr(_release_at_exit, "registered", False):
        threading._register_atexit(_release_hand_overs)  # the hook concurrent.futures' own joins use
        _release_at_exit.registered = True
    _live_hand_overs.add(hand_over)


def _release_hand_overs() -> None:
    for hand_over in list(_live_hand_overs):
        hand_over.replies.put(message_bytes(None, STATUS_CLOSE))


def message_bytes(inputs: Optional[UnityInputProto], status: int = STATUS_OK) -> bytes:
    """The bytes of the UnityMessageProto that carries `inputs` with this header status (what the
    stock communicator sends)."""
    message = UnityMessageProto()
    message.header.status = status
    if inputs is not None:
        message.unity_input.CopyFrom(inputs)
    return message.SerializeToString()


# port -> the stop of a server this process closed on it (set when the port is free again)
_stopping: dict[int, threading.Event] = {}


class LocalCommunicator(Communicator):
    """mlagents-envs' Communicator on a loopback-only gRPC server with in-process hand-over."""

    hand_over_class = _HandOver  # what gRPC's thread runs (a subclass may time the hand-over)

    def __init__(self, worker_id: int = 0, base_port: int = BASE_PORT, timeout_wait: int = 60):
        super().__init__(worker_id, base_port)
        self.port = base_port + worker_id
        self.worker_id = worker_id
        self.timeout_wait = timeout_wait
        self.is_open = False
        self._check_port()
        self.hand_over = self.hand_over_class()
        self.server = grpc.server(ThreadPoolExecutor(max_workers=2), options=[
            ("grpc.so_reuseport", 0), ("grpc.max_receive_message_length", -1),
            ("grpc.max_send_message_length", -1)])
        raw = grpc.unary_unary_rpc_method_handler(self.hand_over.exchange)  # bytes in, bytes out
        self.server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(SERVICE, {"Exchange": raw})])
        try:
            bound = self.server.add_insecure_port(f"{LISTEN_HOST}:{self.port}")
        except RuntimeError:
            bound = 0
        if bound != self.port:
            self.server.stop(None)
            raise UnityWorkerInUseException(worker_id)
        self.server.start()
        self.is_open = True

    def _check_port(self) -> None:
        stopping = _stopping.pop(self.port, None)
        if stopping is not None:   # this process's own server on the port, being stopped
            stopping.wait(timeout=5.0)
        if not port_free(self.port):
            raise UnityWorkerInUseException(self.worker_id)

    def _receive(self, poll_callback: Optional[PollCallback]) -> bytes:
        """The next message's bytes from the game, polling the game process while waiting."""
        step = max(0.05, min(1.0, self.timeout_wait / 10))
        waited = 0.0
        while waited < self.timeout_wait:
            try:
                return self.hand_over.requests.get(timeout=step)
            except queue.Empty:
                waited += step
                if poll_callback is not None:
                    poll_callback()
        raise UnityTimeOutException(
            f"the environment sent nothing for {self.timeout_wait:g} s: check that it runs headless "
            f"(no user interaction), that its Behavior Type is Default, and that it uses ML-Agents "
            f"communication API 1.x")

    def initialize(self, inputs: UnityInputProto, poll_callback: Optional[PollCallback] = None) -> UnityOutputProto:
        first = UnityMessageProto.FromString(self._receive(poll_callback)).unity_output
        self.hand_over.replies.put(message_bytes(inputs))
        self._receive(poll_callback)  # the game's second, empty message; answered by the first reset
        return first

    def exchange(self, inputs: UnityInputProto, poll_callback: Optional[PollCallback] = None) -> Optional[UnityOutputProto]:
        output = UnityMessageProto.FromString(self.exchange_bytes(message_bytes(inputs), poll_callback))
        if output.header.status != STATUS_OK:
            return None
        return output.unity_output

    def exchange_bytes(self, message: bytes, poll_callback: Optional[PollCallback] = None) -> bytes:
        """Send a UnityMessageProto's bytes; the game's reply's bytes (any status), with the same
        timeout and polling as `exchange`."""
        self.hand_over.replies.put(message)
        return self._receive(poll_callback)

    def close(self) -> None:
        """Tell the game to quit, and stop the server. gRPC stops it asynchronously (its grace
        second at most): a communicator made next on the same port waits for that stop."""
        if self.is_open:
            self.is_open = False
            self.hand_over.replies.put(message_bytes(None, STATUS_CLOSE))
            _stopping[self.port] = self.server.stop(grace=1.0)


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((LISTEN_HOST, port))
            return True
        except OSError:
            return False
