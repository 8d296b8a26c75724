"""neatpar's communicator for mlagents-envs' UnityEnvironment: the game talks to a gRPC server bound
to 127.0.0.1 only (the stock one listens on every interface), and each message passes between
gRPC's thread and the main thread through in-process queues instead of the stock pickling Pipe,
with the stock timeout and dead-process detection.
"""
from __future__ import annotations

import queue
import socket
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

import grpc
from mlagents_envs.communicator import Communicator, PollCallback
from mlagents_envs.communicator_objects.unity_input_pb2 import UnityInputProto
from mlagents_envs.communicator_objects.unity_message_pb2 import UnityMessageProto
from mlagents_envs.communicator_objects.unity_output_pb2 import UnityOutputProto
from mlagents_envs.communicator_objects.unity_to_external_pb2_grpc import (
    UnityToExternalProtoServicer,
    add_UnityToExternalProtoServicer_to_server,
)
from mlagents_envs.exception import UnityTimeOutException, UnityWorkerInUseException

LISTEN_HOST = "127.0.0.1"
BASE_PORT = 5005


class _Servicer(UnityToExternalProtoServicer):
    """Runs on gRPC's thread: hands each request to the main thread and waits for its reply."""

    def __init__(self):
        self.requests: queue.Queue = queue.Queue()
        self.replies: queue.Queue = queue.Queue()

    def Initialize(self, request, context):
        return self.Exchange(request, context)

    def Exchange(self, request, context):
        self.requests.put(request)
        return self.replies.get()


class LocalCommunicator(Communicator):
    """mlagents-envs' Communicator on a loopback-only gRPC server with in-process hand-over."""

    def __init__(self, worker_id: int = 0, base_port: int = BASE_PORT, timeout_wait: int = 60):
        super().__init__(worker_id, base_port)
        self.port = base_port + worker_id
        self.worker_id = worker_id
        self.timeout_wait = timeout_wait
        self.is_open = False
        self._check_port()
        self.servicer = _Servicer()
        self.server = grpc.server(ThreadPoolExecutor(max_workers=2), options=[
            ("grpc.so_reuseport", 0), ("grpc.max_receive_message_length", -1),
            ("grpc.max_send_message_length", -1)])
        add_UnityToExternalProtoServicer_to_server(self.servicer, self.server)
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
        if not port_free(self.port):
            raise UnityWorkerInUseException(self.worker_id)

    def _receive(self, poll_callback: Optional[PollCallback]) -> UnityMessageProto:
        """The next message from the game, polling the game process while waiting."""
        step = max(0.05, min(1.0, self.timeout_wait / 10))
        waited = 0.0
        while waited < self.timeout_wait:
            try:
                return self.servicer.requests.get(timeout=step)
            except queue.Empty:
                waited += step
                if poll_callback is not None:
                    poll_callback()
        raise UnityTimeOutException(
            f"the environment sent nothing for {self.timeout_wait:g} s: check that it runs headless "
            f"(no user interaction), that its Behavior Type is Default, and that it uses ML-Agents "
            f"communication API 1.x")

    def _reply(self, inputs: UnityInputProto, status: int = 200) -> None:
        message = UnityMessageProto()
        message.header.status = status
        if inputs is not None:
            message.unity_input.CopyFrom(inputs)
        self.servicer.replies.put(message)

    def initialize(self, inputs: UnityInputProto, poll_callback: Optional[PollCallback] = None) -> UnityOutputProto:
        first = self._receive(poll_callback).unity_output
        self._reply(inputs)
        self._receive(poll_callback)  # the game's second, empty message; answered by the first reset
        return first

    def exchange(self, inputs: UnityInputProto, poll_callback: Optional[PollCallback] = None) -> Optional[UnityOutputProto]:
        self._reply(inputs)
        output = self._receive(poll_callback)
        if output.header.status != 200:
            return None
        return output.unity_output

    def close(self) -> None:
        if self.is_open:
            self.is_open = False
            self._reply(None, status=400)
            self.server.stop(grace=1.0)


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((LISTEN_HOST, port))
            return True
        except OSError:
            return False
