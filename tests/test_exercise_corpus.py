"""Every learner answer of tests/corpus against the checkers of attnlib.exercises.

A right answer must be accepted, a wrong one rejected with a hint that names its mistake; either
way the checker prints exactly one line and raises nothing. The answers were written from the
notebooks, not from the checkers (see tests/corpus/__init__.py).
"""

import importlib
import re

import pytest
import torch

from tests.corpus import MODULES

ENTRIES, IDS = [], []
for _name in MODULES:
    _module = importlib.import_module(f"tests.corpus.{_name}")
    for _entry in _module.ANSWERS:
        _number = _module.EXERCISES[_entry.checker.split(".")[1]]
        ENTRIES.append(_entry)
        IDS.append(f"{_name}-ex{_number}-{_entry.label}-{'right' if _entry.right else 'wrong'}")

# "expected X, got Y...": X ends at the first ", got"; Y is everything after it
EXPECTED_GOT = re.compile(r"expected (?P<expected>.+?),? got (?P<rest>.+)$", re.I)


def same_on_both_sides(line):
    """True if a hint says "expected X, got X" (X followed by the end, or by "." / ";" and a space)."""
    for match in EXPECTED_GOT.finditer(line):
        expected, rest = match["expected"].strip(), match["rest"]
        if rest.startswith(expected) and re.match(r"[.;:]?(\s|$)", rest[len(expected):]):
            return True
    return False


def _checker(dotted):
    module, name = dotted.split(".")
    checker = getattr(importlib.import_module(f"attnlib.exercises.{module}"), name, None)
    if checker is None:
        pytest.fail(f"attnlib.exercises has no {dotted}: if the exercise was replaced, update tests/corpus/{module}.py")
    return checker


def _run(entry, capsys):
    """Call the checker as the check cell does; return the printed text, failing if it raised."""
    value = entry.answer()
    args = (*value, *entry.extra_args) if entry.star else (value, *entry.extra_args)
    checker = _checker(entry.checker)
    capsys.readouterr()
    try:
        checker(*args)
    except BaseException as error:  # noqa: BLE001 - a checker must never raise, whatever it is given
        pytest.fail(f"{entry.checker} raised {type(error).__name__}: {error}")
    return capsys.readouterr().out


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_verdict(entry, capsys):
    out = _run(entry, capsys)
    lines = out.rstrip("\n").split("\n")
    assert len(lines) == 1 and lines[0].strip(), f"expected one line, got {out!r}"
    line = lines[0]
    if entry.right:
        assert ": correct" in line, f"right answer rejected: {line}"
        return
    assert ": not yet" in line and "not attempted" not in line, f"wrong answer not rejected: {line}"
    if entry.hint_mentions:
        assert any(word.lower() in line.lower() for word in entry.hint_mentions), (
            f"hint names none of {entry.hint_mentions}: {line}")
    assert not same_on_both_sides(line), f"same words on both sides of expected/got: {line}"


_FIRST_RIGHT = {}
for _entry, _id in zip(ENTRIES, IDS):
    if _entry.right:
        _FIRST_RIGHT.setdefault(_entry.checker, (_entry, _id))


@pytest.mark.parametrize("entry", [e for e, _ in _FIRST_RIGHT.values()], ids=[i for _, i in _FIRST_RIGHT.values()])
def test_leaves_global_rng_alone(entry, capsys):
    """A checker draws its probes from a private generator: the learner's seeded cells stay reproducible."""
    torch.manual_seed(1234)
    before = torch.get_rng_state()
    _run(entry, capsys)
    assert torch.equal(torch.get_rng_state(), before), f"{entry.checker} moved torch's global random generator"


def test_corpus_size():
    """At least 4 right and 4 wrong answers for every exercise."""
    counts = {}
    for entry in ENTRIES:
        counts.setdefault(entry.checker, [0, 0])[entry.right] += 1
    short = {checker: f"{n_right} right, {n_wrong} wrong" for checker, (n_wrong, n_right) in counts.items()
             if n_right < 4 or n_wrong < 4}
    assert not short, short


def test_corpus_labels_unique():
    assert len(set(IDS)) == len(IDS), sorted(i for i in IDS if IDS.count(i) > 1)
