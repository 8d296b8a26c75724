"""neatpar's errors (neatpar/errors.py): `one_line`, the one way another library's text is made to
fit a one-line error message."""
from neatpar.errors import ConfigError, NeatparError, one_line


def test_one_line_makes_any_text_one_line():
    assert one_line("neat-python says:\n  pop_size\tis missing  ") == "neat-python says: pop_size is missing"
    assert one_line(ValueError("\x1b[31mred\x1b[0m text\non two lines")) == "red text on two lines"
    assert one_line(KeyError()) == "KeyError"   # an exception without text is named by its type
    assert one_line("") == ""


def test_one_line_keeps_the_first_line_of_a_traceback_when_asked_and_cuts_at_a_limit():
    traceback = RuntimeError("ray.exceptions.RaySystemError: System error:   lost\nTraceback (most recent call last):")
    assert one_line(traceback, first=True) == "ray.exceptions.RaySystemError: System error: lost"
    assert one_line("x" * 500, limit=300) == "x" * 300
    assert one_line(RuntimeError("\n\n"), first=True) == "RuntimeError"


def test_every_error_neatpar_raises_on_purpose_is_a_neatpar_error():
    assert issubclass(ConfigError, NeatparError) and issubclass(ConfigError, ValueError)
