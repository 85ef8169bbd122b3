"""harness.py: the tally the Python test programs share (imported from the
folder of the test script, which Python puts first on sys.path)."""
import sys


class Tally:
    """Counts checks; a failed one prints the caller's line and what."""

    def __init__(self, name):
        self.name = name
        self.passed = self.failed = 0
        self.failures = []      # "line: what" of each failed check (conftest.py)

    def check(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            self.failures.append(f"FAIL {sys._getframe(1).f_lineno}: {what}")
            print(self.failures[-1], file=sys.stderr)
        return bool(cond)

    def finish(self):
        """Prints the summary line run_all.sh reads; the exit status."""
        print(f"{self.name}: {self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0
