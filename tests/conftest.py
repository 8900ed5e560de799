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
