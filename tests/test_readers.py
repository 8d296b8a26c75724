"""The settings' value readers (neatpar/config/readers.py): text and Python values read alike into
the checked value, and a bad one a one-line error that names the setting as the user wrote it (a
file's key, a keyword argument, a flag); each reader says in words what it accepts."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neatpar.config import readers
from neatpar.config.readers import Source, Where
from neatpar.errors import ConfigError

FILE, KEYWORD, FLAG = Where(Source.FILE), Where(Source.KEYWORD), Where(Source.FLAG)


def error_of(reader, value, where=FILE) -> str:
    with pytest.raises(ConfigError) as error:
        reader("key", value, where)
    assert "\n" not in str(error.value)
    return str(error.value)


@given(st.integers(-10**6, 10**6))
def test_an_integer_is_read_from_text_or_an_int_and_refused_out_of_its_range(value):
    read = readers.integer(0, 1000)
    if 0 <= value <= 1000:
        assert read("key", str(value), FILE) == read("key", value, KEYWORD) == value
    else:
        assert error_of(read, str(value)) == f"[neatpar] key = {value} is out of range: use an integer from 0 to 1000"


def test_the_setting_is_named_as_it_was_written():
    read = readers.integer(1)
    assert error_of(read, "0", FILE) == "[neatpar] key = 0 is out of range: use an integer at least 1"
    assert error_of(read, 0, KEYWORD) == "key=0 is out of range: use an integer at least 1"
    assert error_of(read, "0", FLAG) == "--key 0 is out of range: use an integer at least 1"
    assert error_of(read, True, KEYWORD) == "key=True is not an integer"   # a bool is no number
    assert error_of(read, "2.5") == "[neatpar] key = 2.5 is not an integer"


def test_numbers_fractions_and_booleans():
    assert readers.number()("key", " 0.25 ", FILE) == 0.25 and readers.number(positive=False)("key", -1, KEYWORD) == -1.0
    assert error_of(readers.number(), "0") == "[neatpar] key = 0 must be greater than 0"
    assert readers.fraction("key", "1", FILE) == 1.0
    assert error_of(readers.fraction, "1.5") == "[neatpar] key = 1.5 is out of range: use a number from 0 to 1"
    assert [readers.boolean("key", text, FILE) for text in ("Yes", "on", "1", "false", "OFF", "0")] == \
           [True, True, True, False, False, False]
    assert error_of(readers.boolean, "maybe") == "[neatpar] key = maybe is not true or false"


def test_choices_optional_values_and_addresses():
    read = readers.choice(("local", "ray"))
    assert read("key", " RAY ", FILE) == "ray" and read.options == ("local", "ray")
    assert error_of(read, "slurm") == "[neatpar] key = slurm is not one of local, ray"
    maybe = readers.optional(readers.integer(1))
    assert maybe("key", "none", FILE) is None and maybe("key", "", FILE) is None and maybe("key", "3", FILE) == 3
    assert maybe.accepts == "an integer, at least 1, or none"
    assert readers.address("key", " head:6379 ", FILE) == "head:6379" and readers.address("key", " ", FILE) is None


def test_arguments_keyword_arguments_and_parameters():
    assert readers.arguments("key", "--agents 4 --name 'a b'", FILE) == ("--agents", "4", "--name", "a b")
    assert readers.arguments("key", ["--x", "1"], KEYWORD) == ("--x", "1")
    assert error_of(readers.arguments, "--name 'open").startswith("[neatpar] key = --name 'open cannot be split")
    assert readers.keyword_arguments("key", "continuous = true, gravity = -9.5,\nname = 'x'", FILE) == (
        ("continuous", True), ("gravity", -9.5), ("name", "x"))
    assert readers.keyword_arguments("key", {"a": 1}, KEYWORD) == (("a", 1),)
    assert "which is not a Python literal: quote text" in error_of(readers.keyword_arguments, "mode = fast")
    assert readers.parameters("key", "a = 1, b = 2.5", FILE) == (("a", 1.0), ("b", 2.5))
    assert error_of(readers.parameters, "a") == "[neatpar] key = a has 'a', which is not 'name = number'"


def test_every_reader_says_what_it_accepts():
    made = [readers.integer(1), readers.number(), readers.choice(("a",)), readers.optional(readers.boolean)]
    plain = [readers.fraction, readers.boolean, readers.arguments, readers.keyword_arguments, readers.parameters,
             readers.address]
    assert all(isinstance(reader.accepts, str) and reader.accepts for reader in made + plain)
