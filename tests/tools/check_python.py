"""Check that this Python can run the course's pinned setup, before pip tries and fails deep down.

    python3 tests/tools/check_python.py

The Makefile runs it with $(PYTHON) before creating .venv, and with .venv's Python after.
The pins in requirements.txt have wheels for Python 3.11 to 3.14 (numpy 2.4, pandas 3.1 and
matplotlib 3.11 have none for 3.10); the stored outputs were made with 3.11. Standard library
only, and no syntax newer than Python 3.6, so an old Python gets the message, not a SyntaxError.
"""

import sys

OLDEST = (3, 11)
NEWEST = (3, 14)


def problem(version_info, executable):
    """The sentence to print when this Python cannot be used, or None when it can."""
    found = "{}.{}".format(*version_info[:2])
    if OLDEST <= tuple(version_info[:2]) <= NEWEST:
        return None
    in_venv = getattr(sys, "base_prefix", sys.prefix) != sys.prefix
    fix = "make lab PYTHON=python3.11 (or make test PYTHON=python3.11)"
    if in_venv:
        fix = "rm -rf .venv, then " + fix
    return (
        "This course needs Python {}.{} to {}.{} (its pinned numpy, pandas and matplotlib have no wheels "
        "for other versions), but {} is Python {}. Install Python 3.11 (the version the stored outputs were "
        "made with) and run: {}".format(*(OLDEST + NEWEST + (executable, found, fix)))
    )


def main():
    message = problem(sys.version_info, sys.executable)
    if message:
        sys.stderr.write(message + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
