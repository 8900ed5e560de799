"""Shared pytest configuration: a reproducible Hypothesis profile.

The default profile "ci" is derandomized: every run tries the same examples, so a failure
in CI is a failure on every machine, and nothing is written to an example database.
``HYPOTHESIS_PROFILE=explore pytest tests`` draws fresh random examples on every run
instead, to look for new failures. Each property test sets its own modest
``max_examples`` so that the unit tests stay fast.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The website's test (tests/site/, run by `make site` after the build) and the browser test
# (tests/e2e/, run by `make e2e`) and the autograding test (tests/grading/, run by `make grade`) need
# what only those targets install and build; `make test`
# (`pytest tests notebooks`) does not collect them; their own targets name them on the command
# line (`pytest tests/site`, `pytest tests/e2e`), which collect_ignore does not stop.
collect_ignore = ["site", "e2e", "grading"]
