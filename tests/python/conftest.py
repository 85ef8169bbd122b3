"""conftest.py: the Python tests as a pytest suite (python3 -m pytest
tests/python; make test runs each file this way where pytest is
installed). Each test module counts its checks in a Tally (harness.py);
a test function fails when one of its checks failed (the FAIL lines
name them) or it raised. A module's skipped_tests() names the tests its
environment cannot run (a missing optional package) with the reason.
At the end one line in run_all.sh's form, "<tally name>: N passed, M
failed" (checks, plus tests that raised), so make test counts checks as
it does for the C tests."""
import pytest

_tallies = {}      # tally name -> Tally, the modules this session ran
_raised = []       # tests that failed other than by a failed check


@pytest.fixture(autouse=True)
def _checks(request):
    tally = getattr(request.module, "T", None)
    before = tally.failed if tally else 0
    yield
    if tally is not None:
        _tallies[tally.name] = tally
        new = tally.failures[before:]
        if new:
            pytest.fail(f"{len(new)} check(s) failed:\n" + "\n".join(new), pytrace=False)


def pytest_collection_modifyitems(config, items):
    for item in items:
        skips = getattr(item.module, "skipped_tests", None)
        reason = skips().get(item.name) if skips else None
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_runtest_makereport(item, call):
    if call.excinfo is not None and not call.excinfo.errisinstance(pytest.fail.Exception) \
            and not call.excinfo.errisinstance(pytest.skip.Exception):
        _raised.append(item.name)


def pytest_unconfigure(config):
    for name, t in _tallies.items():
        print(f"{name}: {t.passed} passed, {t.failed + len(_raised)} failed")
