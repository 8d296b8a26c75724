"""Tests of run/course.py: one population and asymmetric self-play's two are each a `Course`, the
one shape the lifecycle drives (their runs: test_lifecycle.py, test_alternation.py)."""
import inspect
import typing

from neatpar.run.alternation import Alternation
from neatpar.run.course import Course, OnePopulation


def members(cls) -> dict[str, str]:
    """What each member of `cls` is: a property, or a method with its parameters."""
    found = {}
    for name, value in inspect.getmembers(cls):
        if name.startswith("_"):
            continue
        if isinstance(value, property):
            found[name] = "property"
        elif callable(value):
            found[name] = str(list(inspect.signature(value).parameters))
    return found


def test_both_courses_have_every_member_of_the_protocol_in_its_shape():
    protocol = members(Course)
    assert set(protocol) == {"generation", "snapshot", "solved", "completed", "run", "save_snapshot",
                             "finish", "keep_best", "close"}
    for course in (OnePopulation, Alternation):
        have = members(course)
        for name, shape in protocol.items():
            got = "property" if isinstance(inspect.getattr_static(course, name, None), property) else have.get(name)
            if shape == "property" and got != "property":   # an attribute set in __init__ serves as well
                assert name in inspect.getsource(course.__init__), (course.__name__, name)
            else:
                assert got == shape, (course.__name__, name, got, shape)
    assert typing.get_type_hints(Course.run) == {"generations": int, "return": type(None)}
