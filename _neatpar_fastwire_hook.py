"""Arms neatpar's fast wire at interpreter start (imported by neatpar-fastwire.pth).

Costs a finder on sys.meta_path and nothing else until an mlagents-envs `_pb2` module is
imported; then neatpar.envs.unity.fastwire rebuilds the message modules on modern protobuf.
Set NEATPAR_FASTWIRE=0 to turn it off.
"""
import os
import sys

_PREFIX = "mlagents_envs.communicator_objects."


class _FastWireLoader:
    def create_module(self, spec):
        from neatpar.envs.unity.fastwire import build
        return build()[spec.name]

    def exec_module(self, module):
        pass


class _FastWireFinder:
    def find_spec(self, fullname, path=None, target=None):
        if not (fullname.startswith(_PREFIX) and fullname.endswith("_pb2")):
            return None
        from importlib.machinery import ModuleSpec
        return ModuleSpec(fullname, _FastWireLoader())


def arm():
    if os.environ.get("NEATPAR_FASTWIRE", "1") != "0" and not any(
            isinstance(f, _FastWireFinder) or type(f).__name__ == "_FastWireFinder" for f in sys.meta_path):
        sys.meta_path.insert(0, _FastWireFinder())


arm()
