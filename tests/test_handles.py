"""Live handles (neatpar/parallel/handles.py): what counts as one, where one sits inside an
object, and the placeholder that stands in for a cleared global."""
import functools
import pickle
import socket
import subprocess
import sys

import pytest

from neatpar.errors import ClearedGlobalError
from neatpar.parallel.declarations import HandleClass, declare_handle_class
from neatpar.parallel.handles import ClearedGlobal, find_handle, find_live_handles, handle_kind, is_connecting


def made_in(module: str, name: str) -> type:
    """A class that claims to be defined in `module` (matched by name: its library is never imported)."""
    return type(name, (), {"__module__": module})


def test_sockets_files_and_processes_are_handles_while_open():
    with socket.socket() as sock:
        assert handle_kind(sock) == "socket"
    assert handle_kind(sock) is None
    with open(__file__) as f:
        assert handle_kind(f) == "open file"
    assert handle_kind(f) is None
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        assert handle_kind(process) == "child process"
    finally:
        process.wait()
    assert handle_kind(socket.socket) is None and handle_kind(socket) is None  # a class, a module


def test_built_in_and_declared_classes_are_matched_by_module_and_name_through_the_mro():
    server = made_in("grpc._server", "Server")
    assert handle_kind(type("Mine", (server,), {})()) == "gRPC server" and is_connecting("gRPC server")
    assert handle_kind(made_in("grpc", "Channel")()) == "gRPC channel" and not is_connecting("gRPC channel")
    assert handle_kind(made_in("elsewhere", "Server")()) is None
    declared = HandleClass("some_library.connection", "Link", "some library link", connecting=True)
    link = made_in("some_library.connection", "Link")
    assert handle_kind(link()) is None and not is_connecting("some library link")
    declare_handle_class(declared)
    declare_handle_class(declared)
    assert handle_kind(type("Sub", (link,), {"__module__": "mine"})()) == "some library link"
    assert is_connecting("some library link")


def held(value):
    return value


def test_a_handle_inside_an_object_is_found_with_its_path():
    with socket.socket() as sock:
        found = find_handle(({"conn": [1, sock]},), "args", descend=lambda fn: True)
        assert str(found) == "args[0]['conn'][1] (socket, socket)"
        partial = functools.partial(held, sock)
        assert find_handle(partial, "fn", descend=lambda fn: True).path == "fn.args[0]"
        assert find_handle({"plain": [1, "two", 3.0]}, "args", descend=lambda fn: True) is None
        assert find_live_handles({"sock": sock, "n": 1, "__builtins__": sock}) == {"sock": "socket"}


def test_a_cleared_global_names_itself_on_any_use_and_pickles_as_itself():
    cleared = ClearedGlobal("env", "socket")
    for use in (lambda: cleared.reset(), lambda: cleared(), lambda: len(cleared), lambda: bool(cleared)):
        with pytest.raises(ClearedGlobalError, match=r"global 'env' \(socket\) of your main module was cleared"):
            use()
    assert repr(pickle.loads(pickle.dumps(cleared))) == "<cleared global 'env'>"
