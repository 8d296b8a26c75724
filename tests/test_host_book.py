"""The main side's book of the parts running on env hosts (neatpar/episodes/host_book.py), shared by
LocalHosts and RayHosts: which part runs under which handle, how far each has got (never less
than before, never from another part's report), and which host errors reach the user as they are."""
from hypothesis import given, strategies as st

from neatpar.errors import ConfigError, HostLost, NeatparError, RemoteError, SimulatorError
from neatpar.episodes.host_book import HostBook, Running, host_error
from neatpar.episodes.hosts import PartProgress


def test_a_part_is_running_under_its_handle_from_its_start_to_its_finish():
    book = HostBook()
    book._start("ref-a", ticket=3, generation=2, part=1, host=0)
    book._start("ref-b", ticket=5, generation=2, part=0)
    assert book.progress() == {3: PartProgress(0, 0), 5: PartProgress(0, 0)}  # nothing reported yet
    assert book._where() == {3: (2, 1), 5: (2, 0)}
    assert book._finish("ref-a") == Running(3, 0, 2, 1)
    assert book.progress() == {5: PartProgress(0, 0)} and book._where() == {5: (2, 0)}
    book._forget()
    assert book.progress() == {} and book._where() == {}


def test_a_part_s_progress_never_goes_back_and_ignores_reports_of_other_parts():
    book = HostBook()
    book._start("ref", ticket=7, generation=4, part=2)
    book._keep(7, 4, 2, episodes=3, scored_steps=90)
    book._keep(7, 4, 2, episodes=2, scored_steps=120)  # a report read late: each count keeps its most
    assert book.progress() == {7: PartProgress(3, 120)}
    book._keep(7, 4, 1, episodes=9, scored_steps=500)  # the host's earlier part
    book._keep(7, 3, 2, episodes=9, scored_steps=500)  # the same part of another generation
    book._keep(8, 4, 2, episodes=9, scored_steps=500)  # a ticket that is not running
    assert book.progress() == {7: PartProgress(3, 120)}


def test_a_part_started_again_after_its_host_was_lost_counts_from_zero():
    book = HostBook()
    book._start("first", ticket=1, generation=0, part=1)
    book._keep(1, 0, 1, episodes=5, scored_steps=50)
    book._finish("first")
    book._start("second", ticket=1, generation=0, part=1)
    assert book.progress() == {1: PartProgress(0, 0)}


REPORTS = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1), st.integers(0, 2), st.integers(0, 50),
                             st.integers(0, 5000)), max_size=40)


@given(reports=REPORTS)
def test_each_running_part_shows_the_most_its_own_reports_said(reports):
    """Three parts of generation 1 running at once; reports of any ticket, generation and part in
    any order: each part shows, per count, the largest of the reports that named it."""
    book = HostBook()
    for ticket in range(3):
        book._start(f"ref-{ticket}", ticket, generation=1, part=ticket)
    expected = {ticket: PartProgress() for ticket in range(3)}
    for ticket, generation, part, episodes, scored in reports:
        book._keep(ticket, generation, part, episodes, scored)
        if (generation, part) == (1, ticket):
            seen = expected[ticket]
            expected[ticket] = PartProgress(max(seen.episodes, episodes), max(seen.scored_steps, scored))
    assert book.progress() == expected


def test_a_host_s_own_one_line_errors_pass_as_they_are_and_any_other_failure_as_the_fallback():
    fallback = HostLost("env host 1 died")
    for cause in (ConfigError("behavior 'Ball3D?team=0' observes 8 values"), SimulatorError("did not connect"),
                  NeatparError("a part failed")):
        assert host_error(cause, fallback) is cause
    for cause in (None, ValueError("deep inside"), KeyboardInterrupt()):
        assert host_error(cause, fallback) is fallback
    remote = RemoteError("ZeroDivisionError: division by zero", "Traceback ...")
    assert host_error(ZeroDivisionError("division by zero"), remote) is remote
