"""Learner answers to the exercises of notebooks 01-11, written from the learner's side.

Each module ``nbNN`` exposes ``ANSWERS: list[Answer]`` and ``EXERCISES``, which maps a checker's
name to its exercise number (for readable test ids). The answers were written from the notebooks
alone (prompt, stub, check cell, solved twin), without reading ``attnlib.exercises``: a right
answer is one a reasonable learner writes and the prompt allows (another torch call, einsum, a
loop, another number type, a wider dtype); a wrong one is a classic mistake, each checked by hand
to differ from the reference on an input a checker can use.

How an entry is called (``tests/test_exercise_corpus.py``)::

    value = entry.answer()                      # a zero-argument factory: a value or a function
    if entry.star:                              # the check cell passes several values
        checker(*value, *entry.extra_args)
    else:
        checker(value, *entry.extra_args)

``checker`` is ``"nbNN.check_name"``, the call the check cell makes, resolved in
``attnlib.exercises``. A right answer must print one line containing ": correct"; a wrong one one
line containing ": not yet", and, when ``hint_mentions`` is given, at least one of those words
(case-insensitive): the hint must name the mistake. ``hint_mentions`` is given for the classic
mistakes (those the notebook's text or prompt names, or the one an exercise is about, and a string
where a number is asked); for a less common mistake a hint that shows the first difference is
enough, and the test only asserts that it is not "expected X, got X".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Answer:
    checker: str  # "nb02.check_stable_softmax", as the check cell calls it
    answer: Callable[[], Any]  # zero-argument factory: what the learner passes (a value or a function)
    right: bool  # True: must be accepted; False: must be rejected
    label: str  # short id, e.g. "subtract-min"
    hint_mentions: tuple[str, ...] = ()  # wrong answers: the hint mentions at least one (case-insensitive)
    extra_args: tuple = ()  # further positional arguments of the check cell
    star: bool = False  # True: answer() returns a tuple, called as checker(*answer())
    note: str = field(default="", compare=False)  # why it is right or wrong, for the reader


def right(checker: str, label: str, answer: Callable[[], Any], *, star: bool = False, note: str = "") -> Answer:
    return Answer(checker, answer, True, label, star=star, note=note)


def wrong(checker: str, label: str, answer: Callable[[], Any], mentions: tuple[str, ...] = (), *,
          star: bool = False, note: str = "") -> Answer:
    return Answer(checker, answer, False, label, hint_mentions=tuple(mentions), star=star, note=note)


# Notebook 10 and its checkers (attnlib.exercises.nb10) arrive together on another branch; its
# corpus (nb10.py) is already here and runs wherever the notebook exists. There, a missing checker
# module fails the corpus test, as a missing checker of notebooks 01-09 does.
_NOTEBOOK_10 = Path(__file__).resolve().parents[2] / "notebooks" / "10_induction_heads.ipynb"
MODULES = ("nb01", "nb02", "nb03", "nb04", "nb05", "nb06", "nb07", "nb08", "nb09") + (
    ("nb10",) if _NOTEBOOK_10.exists() else ()) + ("nb11",)
