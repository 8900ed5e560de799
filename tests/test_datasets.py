"""attnlib.datasets: the date task of notebook 06 (rendering, spans, splits, vocabularies, encoding)."""

from __future__ import annotations

import datetime as dt

import pytest
import torch

from attnlib import datasets
from attnlib.datasets import (
    BOS,
    CASES,
    FORMATS,
    ISO_PARTS,
    PAD,
    DateExample,
    Vocab,
    date_examples,
    encode,
    ordinal,
    render,
    source_vocab,
    target_vocab,
)

SATURDAY = dt.date(2026, 11, 21)


@pytest.mark.parametrize(("n", "expected"), [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"),
                                             (12, "12th"), (13, "13th"), (21, "21st"), (22, "22nd"), (23, "23rd"),
                                             (30, "30th"), (31, "31st")])
def test_ordinal(n, expected):
    assert ordinal(n) == expected


def test_render_writes_all_eight_formats():
    texts = [render(SATURDAY, fmt)[0] for fmt in FORMATS]
    assert texts == ["21 Nov 2026", "November 21, 2026", "21/11/2026", "Saturday 21 November 2026",
                     "2026.11.21", "Sat, 21 Nov 2026", "Saturday, November 21st, 2026", "21.11.2026"]


def test_weekdays_are_real():
    assert datasets.WEEKDAYS[SATURDAY.weekday()] == "Saturday"
    assert render(dt.date(1970, 1, 1), "{weekday}")[0] == "Thursday"


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("date", [SATURDAY, dt.date(1950, 1, 1), dt.date(2049, 12, 31), dt.date(2000, 2, 29)])
def test_spans_cover_what_each_part_wrote(fmt, date):
    text, spans = render(date, fmt)
    assert {"year", "month", "day"} <= set(spans)
    assert text[slice(*spans["year"])] == str(date.year)
    assert int(text[slice(*spans["day"])].rstrip("stndrh")) == date.day
    month = text[slice(*spans["month"])]
    assert month in (str(date.month), f"{date.month:02d}", datasets.MONTHS[date.month - 1],
                     datasets.MONTHS[date.month - 1][:3])
    ordered = sorted(spans.values())
    assert all(a[1] <= b[0] for a, b in zip(ordered, ordered[1:]))  # parts do not overlap


def test_render_spans_of_one_format():
    assert render(SATURDAY, "{dd}/{mm}/{year}") == ("21/11/2026", {"day": (0, 2), "month": (3, 5), "year": (6, 10)})


@pytest.mark.parametrize("fmt", ["{days} {year}", "{day:>3}", "{day!r}"])
def test_render_refuses_unknown_fields(fmt):
    with pytest.raises(ValueError, match="fmt has the field"):
        render(SATURDAY, fmt)


def test_render_refuses_a_non_date():
    with pytest.raises(TypeError, match="date must be a datetime.date"):
        render("2026-11-21", FORMATS[0])


def test_examples_are_seeded_and_held_out():
    train, test = date_examples(500, 200, seed=3)
    again_train, again_test = date_examples(500, 200, seed=3)
    assert train == again_train and test == again_test
    assert len(train) == 500 and len(test) == 200
    assert len({example.iso for example in test}) == 200  # one example per held-out date
    assert {example.iso for example in train}.isdisjoint(example.iso for example in test)
    assert date_examples(500, 200, seed=4)[0] != train


def test_examples_are_consistent():
    train, test = date_examples(300, 100)
    for example in train + test:
        assert isinstance(example, DateExample) and example.format in FORMATS
        date = dt.date.fromisoformat(example.iso)
        text, spans = render(date, example.format)
        assert example.spans == spans
        assert example.text in {case(text) for case in CASES}
        assert dt.date(1950, 1, 1) <= date <= dt.date(2049, 12, 31)


def test_examples_cover_every_format_and_case():
    train, _ = date_examples(2000, 10)
    assert {example.format for example in train} == set(FORMATS)
    assert any(example.text.isupper() for example in train) and any(example.text.islower() for example in train)


def test_notebook_06_split_sizes():
    train, test = date_examples(64000, 2000, seed=0)
    assert (len(train), len(test)) == (64000, 2000)
    assert {example.iso for example in train}.isdisjoint(example.iso for example in test)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n_train": -1}, "n_train must be a non-negative int"),
    ({"n_train": 10, "n_test": 2.5}, "n_test must be a non-negative int"),
    ({"n_train": 10, "n_test": 31, "first": dt.date(2000, 1, 1), "last": dt.date(2000, 1, 31)},
     "n_test must be smaller"),
    ({"n_train": 10, "first": dt.date(2000, 1, 2), "last": dt.date(2000, 1, 1)}, "must not come before"),
    ({"n_train": 10, "formats": ()}, "formats must hold"),
])
def test_date_examples_refuses_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        date_examples(**kwargs)


def test_vocabularies():
    train, _ = date_examples(200, 10)
    src, tgt = source_vocab(train), target_vocab()
    assert src.tokens[0] == PAD and src.index[PAD] == 0
    assert src.tokens[1:] == sorted(set("".join(example.text for example in train)))
    assert tgt.tokens == [BOS, "-", *"0123456789"] and len(tgt) == 12
    assert tgt.decode(tgt.encode("2026-11-21")) == "2026-11-21"
    assert tgt.decode(torch.tensor(tgt.encode("1950-01-01"))) == "1950-01-01"
    assert repr(tgt) == "Vocab(12 tokens: <bos> -0123456789)"


def test_vocab_errors():
    with pytest.raises(ValueError, match="without repeats"):
        Vocab(["a", "b", "a"])
    with pytest.raises(ValueError, match="without repeats"):
        Vocab([])
    with pytest.raises(ValueError, match=r"not in the vocabulary: \['x'\]"):
        target_vocab().encode("2026x11-21")
    with pytest.raises(ValueError, match=r"ids must lie in \[0, 12\)"):
        target_vocab().decode([3, 12])


def test_encode_pads_and_keeps_lengths():
    examples = [DateExample("21/11/2026", "2026-11-21", FORMATS[2], {}),
                DateExample("Sat, 21 Nov 2026", "2026-11-21", FORMATS[5], {})]
    src_vocab, tgt_vocab = source_vocab(examples), target_vocab()
    src, lengths, tgt = encode(examples, src_vocab, tgt_vocab)
    assert src.shape == (2, 16) and lengths.tolist() == [10, 16] and tgt.shape == (2, 10)
    assert src.dtype == lengths.dtype == tgt.dtype == torch.int64
    assert (src[0, 10:] == 0).all() and (src[1] != 0).all()  # 0 pads, and only pads
    assert src_vocab.decode(src[0, :10]) == "21/11/2026" and tgt_vocab.decode(tgt[1]) == "2026-11-21"
    for part, (start, end) in ISO_PARTS.items():
        assert tgt_vocab.decode(tgt[0, start:end]) == {"year": "2026", "month": "11", "day": "21"}[part]


def test_encode_errors():
    good = DateExample("21/11/2026", "2026-11-21", FORMATS[2], {})
    src_vocab, tgt_vocab = source_vocab([good]), target_vocab()
    with pytest.raises(ValueError, match="at least one example"):
        encode([], src_vocab, tgt_vocab)
    with pytest.raises(ValueError, match="10 characters"):
        encode([good._replace(iso="2026-1-21")], src_vocab, tgt_vocab)
    with pytest.raises(ValueError, match=r"not in the vocabulary: \[' ', 'N', 'o', 'v'\]"):
        encode([good._replace(text="21 Nov 2026")], src_vocab, tgt_vocab)


def test_encode_does_not_modify_its_inputs():
    train, _ = date_examples(20, 5)
    before = [example._replace(spans=dict(example.spans)) for example in train]
    encode(train, source_vocab(train), target_vocab())
    assert train == before
