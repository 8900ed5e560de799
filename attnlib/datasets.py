"""The date-reading task of notebook 06: dates as people write them, and their ISO form.

An input is a date in one of eight formats ("21 Nov 2026", "Saturday, November 21st,
2026", "21/11/2026", ...), as written, lower case or upper case; its target is the
ISO 8601 date "2026-11-21", always 10 characters. Every example records where each part
of the date (year, month, day, weekday) sits in its text, so a notebook can check what an
attention model looked at. Everything is seeded: the same arguments give the same data.

Shape legend: N examples, T the longest text of a set (the padded length).

Source: the course's own task, a stand-in that a CPU trains in seconds for the translation
task of Bahdanau, Cho, Bengio 2015, "Neural Machine Translation by Jointly Learning to Align
and Translate"; the target is ISO 8601's calendar date, YYYY-MM-DD.
"""

from __future__ import annotations

import datetime as dt
import random
import string
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

import torch

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")  # date.weekday() order


def ordinal(n: int) -> str:
    """Write a day number as an English ordinal: 1 -> "1st", 2 -> "2nd", 11 -> "11th", 22 -> "22nd".

    Args:
        n: a non-negative int (a day of the month, 1 to 31, in this task).

    Returns:
        a str, the number followed by "st", "nd", "rd" or "th" (11, 12 and 13 take "th").
    """
    return f"{n}{'th' if 11 <= n % 100 <= 13 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


FIELDS: dict[str, tuple[Callable[[dt.date], str], str]] = {  # field: (how it writes a date, the part it shows)
    "day": (lambda d: str(d.day), "day"),
    "dd": (lambda d: f"{d.day:02d}", "day"),
    "dayth": (lambda d: ordinal(d.day), "day"),
    "m": (lambda d: str(d.month), "month"),
    "mm": (lambda d: f"{d.month:02d}", "month"),
    "month": (lambda d: MONTHS[d.month - 1], "month"),
    "mon": (lambda d: MONTHS[d.month - 1][:3], "month"),
    "year": (lambda d: str(d.year), "year"),
    "weekday": (lambda d: WEEKDAYS[d.weekday()], "weekday"),
    "wkd": (lambda d: WEEKDAYS[d.weekday()][:3], "weekday"),
}
FORMATS = ("{day} {mon} {year}", "{month} {day}, {year}", "{dd}/{mm}/{year}", "{weekday} {day} {month} {year}",
           "{year}.{mm}.{dd}", "{wkd}, {day} {mon} {year}", "{weekday}, {month} {dayth}, {year}", "{day}.{m}.{year}")
CASES: tuple[Callable[[str], str], ...] = (str, str.lower, str.upper)  # as written, lower case, upper case
PAD, BOS = "<pad>", "<bos>"
ISO_LENGTH = 10  # "YYYY-MM-DD"
ISO_PARTS = {"year": (0, 4), "month": (5, 7), "day": (8, 10)}  # span of each part in the ISO target


class DateExample(NamedTuple):
    """One example: the text, its ISO target, the format it was written in, and the parts' spans.

    ``spans[part] = (start, end)`` says that ``text[start:end]`` writes that part of the
    date ("year", "month", "day" and, in formats that have one, "weekday").
    """

    text: str
    iso: str
    format: str
    spans: dict[str, tuple[int, int]]


def render(date: dt.date, fmt: str) -> tuple[str, dict[str, tuple[int, int]]]:
    """Write ``date`` in format ``fmt`` and record where each part of the date landed.

    Args:
        date: a ``datetime.date``.
        fmt: a template such as ``"{day} {mon} {year}"`` whose fields are keys of ``FIELDS``
            (``string.Formatter`` syntax; literal text is copied as is).

    Returns:
        ``(text, spans)``: the text (a str) and a dict part -> (start, end) such that
        ``text[start:end]`` is what the field wrote, e.g.
        ``render(date(2026, 11, 21), "{dd}/{mm}/{year}") == ("21/11/2026", {"day": (0, 2),
        "month": (3, 5), "year": (6, 10)})``.

    Raises:
        TypeError: ``date`` is not a ``datetime.date``.
        ValueError: ``fmt`` has a field that is not in ``FIELDS``, or a format spec or
            conversion (``{day:>3}``, ``{day!r}``).

    Source: the course's own task; the target is ISO 8601's calendar date, YYYY-MM-DD.
    """
    if not isinstance(date, dt.date):
        raise TypeError(f"date must be a datetime.date, got {type(date).__name__}")
    text, spans = "", {}
    for literal, field, spec, conversion in string.Formatter().parse(fmt):
        text += literal
        if field is None:
            continue
        if field not in FIELDS or spec or conversion:
            raise ValueError(f"fmt has the field {{{field}}}; expected one of {sorted(FIELDS)}, "
                             "without a format spec or conversion")
        write, part = FIELDS[field]
        spans[part] = (len(text), len(text) + len(write(date)))
        text += write(date)
    return text, spans


def date_examples(
    n_train: int,
    n_test: int = 2000,
    *,
    seed: int = 0,
    first: dt.date = dt.date(1950, 1, 1),
    last: dt.date = dt.date(2049, 12, 31),
    formats: Sequence[str] = FORMATS,
) -> tuple[list[DateExample], list[DateExample]]:
    """A training set and a held-out test set of dates, each written in a random format and case.

    Every date from ``first`` to ``last`` (inclusive) is shuffled by ``random.Random(seed)``;
    the first ``n_test`` are held out, one test example each. Each training example draws
    one of the other dates (with replacement), so no test date appears in training, in any
    format. Each example draws a format from ``formats`` and a case from ``CASES``.

    Args:
        n_train: the number of training examples (>= 0).
        n_test: the number of held-out dates (>= 0, and fewer than the dates in the range).
        seed: seeds the one ``random.Random`` that draws everything.
        first, last: the range of dates.
        formats: templates for :func:`render`.

    Returns:
        ``(train, test)``: lists of :class:`DateExample` of lengths ``n_train`` and ``n_test``.

    Raises:
        ValueError: a negative ``n_train`` or ``n_test``, ``last`` before ``first``, a
            ``n_test`` that leaves no date for training, or no formats.

    Source: the course's own task, a stand-in for the translation task of Bahdanau, Cho,
    Bengio 2015 that a CPU trains in seconds.
    """
    for name, n in (("n_train", n_train), ("n_test", n_test)):
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"{name} must be a non-negative int, got {n!r}")
    if last < first:
        raise ValueError(f"last ({last}) must not come before first ({first})")
    if not formats:
        raise ValueError("formats must hold at least one template, got none")
    n_dates = (last - first).days + 1
    if n_test >= n_dates:
        raise ValueError(f"n_test must be smaller than the {n_dates} dates from {first} to {last}, got {n_test}")
    rng = random.Random(seed)
    dates = [first + dt.timedelta(days=i) for i in range(n_dates)]
    rng.shuffle(dates)
    test_dates, train_dates = dates[:n_test], dates[n_test:]

    def example(date: dt.date) -> DateExample:
        fmt = rng.choice(formats)
        text, spans = render(date, fmt)
        return DateExample(rng.choice(CASES)(text), date.isoformat(), fmt, spans)  # lower/upper keep the spans

    train = [example(rng.choice(train_dates)) for _ in range(n_train)]
    test = [example(date) for date in test_dates]
    return train, test


class Vocab:
    """Characters to integer ids and back; ``tokens[0]`` is the padding or begin symbol.

    Args:
        tokens: the symbols in id order, no repeats (multi-character symbols such as
            ``"<pad>"`` are one token each).

    Raises:
        ValueError: repeated tokens, or none.
    """

    def __init__(self, tokens: Iterable[str]) -> None:
        self.tokens = list(tokens)
        if not self.tokens or len(set(self.tokens)) != len(self.tokens):
            raise ValueError(f"tokens must be non-empty and without repeats, got {self.tokens!r}")
        self.index = {token: i for i, token in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens: {self.tokens[0]} {''.join(self.tokens[1:])})"

    def encode(self, text: str) -> list[int]:
        """The id of every character of ``text``, as a list of ints of length ``len(text)``.

        Raises:
            ValueError: a character that is not in the vocabulary (each one is named).
        """
        missing = sorted({c for c in text if c not in self.index})
        if missing:
            raise ValueError(f"text {text!r} has characters not in the vocabulary: {missing}")
        return [self.index[c] for c in text]

    def decode(self, ids: Iterable[int] | torch.Tensor) -> str:
        """The tokens of ``ids`` (a list of ints or an integer tensor of shape (T,)), joined into a str.

        Raises:
            ValueError: an id outside [0, len(self)).
        """
        ids = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
        for i in ids:
            if not 0 <= i < len(self):
                raise ValueError(f"ids must lie in [0, {len(self)}), got {i}")
        return "".join(self.tokens[i] for i in ids)


def source_vocab(examples: Iterable[DateExample]) -> Vocab:
    """The input vocabulary: ``PAD`` (id 0), then every character of the examples' texts, sorted.

    Build it from the training examples only; :func:`encode` then names any test character
    it lacks. With notebook 06's training set it has 59 tokens.
    """
    return Vocab([PAD, *sorted({c for example in examples for c in example.text})])


def target_vocab() -> Vocab:
    """The output vocabulary, 12 tokens: ``BOS`` (id 0, the symbol that starts decoding), then ``-0123456789``."""
    return Vocab([BOS, *sorted("0123456789-")])


def encode(
    examples: Sequence[DateExample], src_vocab: Vocab, tgt_vocab: Vocab
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Turn examples into padded id tensors.

    Args:
        examples: N :class:`DateExample` (at least one).
        src_vocab: for the texts (id 0 pads), e.g. :func:`source_vocab`.
        tgt_vocab: for the ISO targets, e.g. :func:`target_vocab`.

    Returns:
        ``(src, lengths, tgt)``, all int64 on the CPU: ``src`` (N, T), the texts' ids padded
        with 0 to the longest text T; ``lengths`` (N,), each text's valid length (for
        ``attnlib.from_valid_lens``); ``tgt`` (N, 10), the ISO targets' ids.

    Raises:
        ValueError: no examples, a character missing from a vocabulary (named), or a target
            that is not 10 characters long.
    """
    if len(examples) == 0:
        raise ValueError("examples must hold at least one example, got none")
    for example in examples:
        if len(example.iso) != ISO_LENGTH:
            raise ValueError(f"every target must have {ISO_LENGTH} characters, got {example.iso!r}")
    lengths = torch.tensor([len(example.text) for example in examples])  # (N,)
    src = torch.zeros(len(examples), int(lengths.max()), dtype=torch.long)  # (N, T), 0 = padding
    for n, example in enumerate(examples):
        src[n, : len(example.text)] = torch.tensor(src_vocab.encode(example.text), dtype=torch.long)
    tgt = torch.tensor([tgt_vocab.encode(example.iso) for example in examples], dtype=torch.long)  # (N, 10)
    return src, lengths, tgt
