"""The fast wire: mlagents-envs' message modules rebuilt on modern (upb) protobuf.

mlagents-envs 0.28.0 ships `_pb2` modules generated for protobuf <= 3.20, which on Python 3.10 to 3.13
exists only as the slow pure-Python backend. Each of those files embeds its serialized
FileDescriptorProto. This module reads those bytes from the files' text (without importing them),
adds them to protobuf's default descriptor pool in dependency order and builds modules with the
names current protoc output defines (message classes, enum wrappers, top-level enum values,
DESCRIPTOR and the `_NAME` descriptors), registered under the original module names. mlagents-envs'
own code, including `unity_to_external_pb2_grpc.py`, then runs unchanged on the fast backend.

It is put in effect by an import hook armed at interpreter start (`_neatpar_fastwire_hook`,
installed with a .pth file), so it holds in every process of the environment whatever is
imported first. Set NEATPAR_FASTWIRE=0 to turn the hook off.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import re
import sys
import threading
import types

from ...errors import FastWireError

PACKAGE = "mlagents_envs.communicator_objects"
EXPECTED_VERSION = "0.28.0"
MODULES = (
    "agent_action", "agent_info_action_pair", "agent_info", "brain_parameters", "capabilities",
    "command", "custom_reset_parameters", "demonstration_meta", "engine_configuration", "header",
    "observation", "space_type", "training_analytics", "unity_input", "unity_message", "unity_output",
    "unity_rl_initialization_input", "unity_rl_initialization_output", "unity_rl_input",
    "unity_rl_output", "unity_to_external",
)

_SERIALIZED = re.compile(r"serialized_pb=_b\(('(?:[^'\\]|\\.)*')\)", re.S)
_ALIAS = re.compile(r"^from mlagents_envs\.communicator_objects import (\w+) as (\w+)$", re.M)
_lock = threading.Lock()
_built: dict[str, types.ModuleType] = {}


def source_folder() -> str:
    """Folder of mlagents-envs' generated message files (found without importing them)."""
    spec = importlib.util.find_spec("mlagents_envs")
    if spec is None or not spec.submodule_search_locations:
        raise FastWireError("mlagents-envs is not installed: pip install mlagents-envs==0.28.0")
    return os.path.join(list(spec.submodule_search_locations)[0], "communicator_objects")


def read_descriptor(path: str) -> tuple[bytes, dict[str, str]]:
    """The serialized FileDescriptorProto embedded in an old `_pb2` file, and its import aliases."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise FastWireError(f"cannot read {path}: {exc}; reinstall mlagents-envs=={EXPECTED_VERSION}") from exc
    match = _SERIALIZED.search(text)
    if match is None:
        raise FastWireError(
            f"{os.path.basename(path)} is not in the form mlagents-envs {EXPECTED_VERSION} ships "
            f"(no serialized_pb=_b('...')); neatpar's fast wire supports mlagents-envs=={EXPECTED_VERSION}")
    data = ast.literal_eval(match.group(1)).encode("latin1")
    aliases = {alias: module for module, alias in _ALIAS.findall(text)}
    return data, aliases


def _modern_protobuf():
    try:
        from google.protobuf import __version__ as version
        from google.protobuf import descriptor_pb2, descriptor_pool
        from google.protobuf.internal import builder
    except ImportError as exc:
        raise FastWireError(
            f"neatpar's fast wire needs protobuf>=5 with google.protobuf.internal.builder ({exc}); "
            f"install the pinned protobuf (pip install 'protobuf==6.33.*') or set NEATPAR_FASTWIRE=0") from exc
    return version, descriptor_pb2, descriptor_pool, builder


def _check_mlagents_version() -> None:
    try:
        from importlib.metadata import version
        found = version("mlagents-envs")
    except Exception:  # noqa: BLE001 - metadata missing: the file checks below still apply
        return
    if found != EXPECTED_VERSION:
        raise FastWireError(f"neatpar's fast wire supports mlagents-envs=={EXPECTED_VERSION}, found {found}; "
                            f"install that version or set NEATPAR_FASTWIRE=0")


def _dependency_order(protos: dict) -> list[str]:
    """File names ordered so each comes after the files it imports."""
    order, seen = [], set()

    def visit(name):
        if name in seen:
            return
        seen.add(name)
        for dep in protos[name].dependency:
            if dep in protos:
                visit(dep)
        order.append(name)

    for name in sorted(protos):
        visit(name)
    return order


def build() -> dict[str, types.ModuleType]:
    """Rebuild all message modules (once per process) and register them in sys.modules."""
    with _lock:
        if _built:
            return _built
        _check_mlagents_version()
        version, descriptor_pb2, descriptor_pool, builder = _modern_protobuf()
        folder = source_folder()
        protos, aliases, module_of = {}, {}, {}
        for short in MODULES:
            data, module_aliases = read_descriptor(os.path.join(folder, f"{short}_pb2.py"))
            proto = descriptor_pb2.FileDescriptorProto.FromString(data)
            protos[proto.name] = proto
            module_of[proto.name] = f"{PACKAGE}.{short}_pb2"
            aliases[proto.name] = module_aliases
        pool = descriptor_pool.Default()
        modules = {}
        for file_name in _dependency_order(protos):
            _refuse_foreign_registration(pool, file_name)
            descriptor = pool.AddSerializedFile(protos[file_name].SerializeToString())
            name = module_of[file_name]
            module = types.ModuleType(name, f"mlagents-envs message module {file_name}, rebuilt by neatpar.fastwire")
            module.__file__ = os.path.join(folder, name.rsplit(".", 1)[1] + ".py")
            namespace = vars(module)
            namespace["DESCRIPTOR"] = descriptor
            builder.BuildMessageAndEnumDescriptors(descriptor, namespace)
            builder.BuildTopDescriptorsAndMessages(descriptor, name, namespace)
            for alias, short in aliases[file_name].items():
                namespace[alias] = modules[f"{PACKAGE}.{short}"]
            modules[name] = module
        package = importlib.import_module(PACKAGE)
        for name, module in modules.items():
            sys.modules[name] = module
            setattr(package, name.rsplit(".", 1)[1], module)
        _built.update(modules)
        return _built


def _refuse_foreign_registration(pool, file_name: str) -> None:
    """Never mix stacks: these .proto names must not be in the pool already."""
    try:
        pool.FindFileByName(file_name)
    except KeyError:
        return
    raise FastWireError(
        f"{file_name} is already registered in protobuf's default pool by something other than "
        f"neatpar (an old mlagents `_pb2` module imported with NEATPAR_FASTWIRE=0, or another copy "
        f"of the messages); import mlagents_envs only with the fast wire in effect")


def in_effect() -> bool:
    """True when mlagents-envs' message modules in this process are the rebuilt ones."""
    module = sys.modules.get(f"{PACKAGE}.unity_message_pb2")
    return module is not None and module is _built.get(f"{PACKAGE}.unity_message_pb2")


def backend() -> str:
    """protobuf's backend in this process: 'upb', 'cpp' or 'python'."""
    from google.protobuf.internal import api_implementation
    return api_implementation.Type()


def armed() -> bool:
    """True when the start-up hook's finder is in place (or the messages are already rebuilt)."""
    return in_effect() or any(type(f).__name__ == "_FastWireFinder" for f in sys.meta_path)


def require_armed() -> None:
    """Refuse to go on without the fast wire, unless it was turned off on purpose: without it,
    mlagents-envs' old message modules fail on modern protobuf with an obscure TypeError."""
    if armed() or os.environ.get("NEATPAR_FASTWIRE", "1") == "0" or f"{PACKAGE}.unity_message_pb2" in sys.modules:
        return
    raise FastWireError(
        "neatpar's fast wire is off: its start-up hook (neatpar-fastwire.pth in site-packages) is not installed "
        "in this environment, so mlagents-envs cannot load its messages on protobuf 6; reinstall neatpar "
        "(pip install neatpar, or pip install -e . with setuptools 65 to 84), or set NEATPAR_FASTWIRE=0 with "
        "protobuf's pure-Python backend (PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python, much slower)")
