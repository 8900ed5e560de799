"""The exercise machinery: the checkers' shared judge, and the learner notebooks made from the solved ones."""

from __future__ import annotations

import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from attnlib.exercises import (
    NOT_ATTEMPTED,
    Exercise,
    Mistake,
    Probe,
    describe,
    first_difference,
    narrower,
    number_in_string,
    read_value,
    same,
    shape_of,
    tolerance,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools"))
import make_exercises  # noqa: E402


def check_value(name, answer, expected, mistakes=(), **options):
    """Judge a value in one call, as a value exercise declared on the spot."""
    Exercise(name, expected=lambda: expected, mistakes=tuple(mistakes), **options)(answer)


def check_function(name, function, inputs, reference, mistakes=(), *, on_error=None, **options):
    """Judge a function in one call; ``on_error(err, args)`` names the mistake behind an exception (or None)."""
    if on_error is not None:
        named = Mistake(on_error, raises=Exception, when=lambda err, args: on_error(err, args) is not None)
        mistakes = [*mistakes, named]
    Exercise(name, reference=reference, probes=tuple(inputs), mistakes=tuple(mistakes), **options)(function)


def line(capsys) -> str:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, f"a checker prints exactly one line, got {out!r}"
    return out.rstrip("\n")


# --- same: what counts as the right answer ---------------------------------------------------------

def test_same_compares_tensors_by_shape_and_value_and_never_accepts_nan():
    x = torch.tensor([[0.25, 0.75]])
    assert same(x, x + 1e-7)
    assert not same(x, x.T)  # same values, other shape
    assert not same(x, x + 1e-2)
    assert not same(torch.tensor([float("nan")]), torch.tensor([float("nan")]))
    assert same(x, x.tolist()) and same(x, x.numpy())  # a list or an array holding the values is read as them
    assert not same(x, [[0.25, 0.8]]) and not same(x, [0.25, 0.75])


def test_same_keeps_bool_masks_exact_and_bools_apart_from_numbers():
    mask = torch.tensor([True, False])
    assert same(mask, mask.clone()) and not same(mask, ~mask) and not same(mask, mask.float())
    assert same(True, True) and not same(1, True) and not same(True, 1)


def test_same_reads_shapes_as_tuples_and_floats_with_tolerance():
    assert same(torch.Size([2, 3]), (2, 3)) and same([2, 3], (2, 3)) and not same((3, 2), (2, 3))
    assert same(0.1 + 0.2, 0.3) and not same(0.31, 0.3) and same(3, 3)


def test_same_compares_a_pair_of_tensors_item_by_item():
    out, w = torch.ones(2, 3), torch.full((2, 2), 0.5)
    assert same((out, w), (out.clone(), w.clone())) and same([out, w], (out, w))
    assert not same((w, out), (out, w)) and not same(out, (out, w)) and not same((out,), (out, w))


# --- check_value -----------------------------------------------------------------------------------

@pytest.mark.parametrize("stub", [None, ...])
def test_check_value_reports_a_stub_as_not_attempted(capsys, stub):
    check_value("Exercise 1", stub, (2, 3))
    assert line(capsys) == f"Exercise 1: {NOT_ATTEMPTED}"


def test_check_value_says_correct_names_a_known_mistake_or_shows_expected_and_got(capsys):
    mistakes = [Mistake("rows are queries, columns keys: (Tq, Tk)", answer=(3, 2))]
    check_value("Exercise 1", (2, 3), (2, 3), mistakes, correct="one row per query.")
    assert line(capsys) == "Exercise 1: correct. one row per query."
    check_value("Exercise 1", (3, 2), (2, 3), mistakes)
    assert line(capsys) == "Exercise 1: not yet. rows are queries, columns keys: (Tq, Tk)"
    check_value("Exercise 1", (4, 4), (2, 3), mistakes)
    assert line(capsys) == "Exercise 1: not yet. Number 1 of your answer (4) is not right; check it again."


def test_a_mistake_predicate_that_cannot_judge_an_answer_is_skipped(capsys):
    mistakes = [Mistake("never shown", when=lambda a: a.sum(dim=-1) > 0), Mistake("negative", when=lambda a: a < 0)]
    check_value("Exercise 2", -1, 1, mistakes)  # the first predicate raises on an int
    assert line(capsys) == "Exercise 2: not yet. negative"


# --- check_function --------------------------------------------------------------------------------

def reference_softmax(scores):
    return torch.softmax(scores, dim=-1)


INPUTS = [(torch.arange(6.0).reshape(2, 3),), (torch.tensor([[1.0, -2.0, 0.5, 4.0]]),)]
WRONG_AXIS = Mistake("softmax ran over the queries: use dim=-1", answer=lambda s: torch.softmax(s, dim=-2))


def test_check_function_accepts_the_reference(capsys):
    check_function("Exercise 3", reference_softmax, INPUTS, reference_softmax, [WRONG_AXIS])
    assert line(capsys) == "Exercise 3: correct."


def test_check_function_names_the_mistake_it_recognises(capsys):
    check_function("Exercise 3", lambda s: torch.softmax(s, dim=0), INPUTS, reference_softmax, [WRONG_AXIS])
    assert line(capsys) == "Exercise 3: not yet. softmax ran over the queries: use dim=-1"


def test_check_function_tries_every_input_before_saying_correct(capsys):
    def right_only_on_the_first(scores):
        return reference_softmax(scores) if scores.shape == (2, 3) else scores
    check_function("Exercise 3", right_only_on_the_first, INPUTS, reference_softmax, [WRONG_AXIS])
    assert line(capsys) == "Exercise 3: not yet. On inputs (1, 4) float32, at index (0, 0) expected 0.04599, got 1.0."


def test_check_function_reports_a_stub_and_an_exception_in_one_line(capsys):
    def stub(scores):
        pass
    check_function("Exercise 3", stub, INPUTS, reference_softmax)
    assert line(capsys).startswith(f"Exercise 3: {NOT_ATTEMPTED}")
    check_function("Exercise 3", None, INPUTS, reference_softmax)
    assert line(capsys) == f"Exercise 3: {NOT_ATTEMPTED}"
    check_function("Exercise 3", lambda s: s.no_such_method(), INPUTS, reference_softmax)
    assert line(capsys).startswith("Exercise 3: not yet. Your function raised AttributeError on inputs (2, 3)")


def test_check_function_gives_the_learner_copies_so_in_place_edits_cannot_fool_it(capsys):
    def in_place(scores):
        scores.sub_(scores)  # zeroes the caller's tensor: the reference must not see that
        return torch.softmax(scores, dim=-1)
    check_function("Exercise 3", in_place, INPUTS, reference_softmax)
    assert line(capsys).startswith("Exercise 3: not yet. Your function changes its argument scores in place")


def test_a_right_result_computed_by_changing_the_input_in_place_is_not_accepted(capsys):
    def divides_in_place(scores):
        scores /= 1.0  # a no-op on the values, but written in place
        scores[..., 0] = scores[..., 0] * 2  # changes them
        return torch.softmax(scores / torch.tensor([2.0, 1.0, 1.0, 1.0])[: scores.shape[-1]], dim=-1)

    check_function("Exercise 3", divides_in_place, INPUTS, reference_softmax)
    assert "changes its argument scores in place" in line(capsys)
    check_function("Exercise 3", lambda s: torch.softmax(s.clone().sub_(1.0), dim=-1), INPUTS, reference_softmax)
    assert line(capsys) == "Exercise 3: correct."  # an in-place operation on a copy is fine


def test_watched_tensors_refuse_the_modules_named():
    from attnlib import attention as attnlib_attention
    from attnlib import multihead
    from attnlib.exercises import Refused, plain, watched

    x, = watched(torch.randn(1, 2, 4, 6), refuse=("attnlib.multihead",))
    with pytest.raises(Refused):
        multihead.merge_heads(x)
    assert torch.equal(plain(x.transpose(1, 2))[0], plain(x)[0].transpose(1, 2))  # other operations work
    y, = watched(torch.randn(2, 3))
    with pytest.raises(Refused):
        attnlib_attention.masked_softmax(y)


# --- the learner version made from the solved one --------------------------------------------------

SOLVED_CELL = """import torch
answer = None  # your prediction
### BEGIN SOLUTION
answer = (2, 3)
### END SOLUTION


def weights(scores):
    \"\"\"Softmax over the keys.\"\"\"
    ### BEGIN SOLUTION
    return torch.softmax(scores, dim=-1)
    ### END SOLUTION"""


def test_solution_blocks_become_stubs_that_still_run():
    learner = make_exercises.strip_solutions(SOLVED_CELL)
    assert "BEGIN SOLUTION" not in learner and "(2, 3)" not in learner and "softmax" not in learner.split('"""')[-1]
    assert learner.count("# YOUR CODE HERE") == 2
    namespace: dict = {}
    exec(learner, namespace)  # the stub runs: no SyntaxError, no NameError
    assert namespace["answer"] is None and namespace["weights"](torch.zeros(2, 3)) is None


@pytest.mark.parametrize("broken", [
    "### BEGIN SOLUTION\nx = 1",
    "x = 1\n### END SOLUTION",
    "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION",
])
def test_unbalanced_markers_are_refused(broken):
    with pytest.raises(ValueError, match="SOLUTION"):
        make_exercises.strip_solutions(broken)


def test_learner_version_clears_the_outputs_of_stubbed_cells_only():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("print(1)", outputs=[nbformat.v4.new_output("stream", text="1\n")]),
        nbformat.v4.new_code_cell(SOLVED_CELL, outputs=[nbformat.v4.new_output("stream", text="x\n")]),
    ])
    learner = make_exercises.learner_version(nb, "test")
    assert learner.cells[0].outputs and not learner.cells[1].outputs
    assert "BEGIN SOLUTION" in nb.cells[1].source, "the solved notebook itself is left unchanged"


SOLVED = sorted((ROOT / "notebooks" / "solutions").glob("*.ipynb"))
LEARNER = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_every_learner_notebook_is_made_from_a_solved_one_and_is_up_to_date():
    assert [p.name for p in SOLVED] == [p.name for p in LEARNER], "each notebook has its solved twin"
    problems = [p for s in SOLVED for p in make_exercises.stale(s, ROOT / "notebooks" / s.name)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", LEARNER, ids=lambda p: p.name)
def test_learner_notebooks_hold_no_solution_and_say_not_attempted(path):
    text = path.read_text()
    assert "BEGIN SOLUTION" not in text
    assert f": {NOT_ATTEMPTED}" in text, f"{path.name}: its checkers should report the stubs as not attempted"


@pytest.mark.parametrize("path", SOLVED, ids=lambda p: p.name)
def test_solved_notebooks_show_their_checkers_passing(path):
    nb = nbformat.read(path, as_version=4)
    solved = [c for c in nb.cells if c.cell_type == "code" and "### BEGIN SOLUTION" in c.source]
    assert 3 <= len(solved), f"{path.name}: at least 3 exercises"
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert NOT_ATTEMPTED not in outputs and ": not yet." not in outputs
    assert outputs.count(": correct.") >= 3
    markdown = "".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "## Self-check" in markdown and markdown.count("<details>") >= 3


def test_check_function_diagnose_writes_a_hint_from_the_learners_numbers(capsys):
    def diagnose(got, expected, args):
        return f"your first row sums to {got[0].sum():.2f}" if got.shape == expected.shape else None

    check_function("Exercise 3", lambda s: s.exp(), INPUTS, reference_softmax, diagnose=diagnose)
    first_row_sum = INPUTS[0][0][0].exp().sum()
    assert line(capsys) == f"Exercise 3: not yet. your first row sums to {first_row_sum:.2f}"
    # A named mistake comes before the diagnosis; a diagnosis that fails gives the general hint.
    check_function("Exercise 3", lambda s: torch.softmax(s, dim=0), INPUTS, reference_softmax, [WRONG_AXIS],
                   diagnose=diagnose)
    assert line(capsys) == "Exercise 3: not yet. softmax ran over the queries: use dim=-1"
    check_function("Exercise 3", lambda s: s.exp(), INPUTS, reference_softmax, diagnose=lambda *a: 1 / 0)
    assert line(capsys) == "Exercise 3: not yet. On inputs (2, 3) float32, at index (0, 0) expected 0.09003, got 1.0."


def test_check_function_on_error_names_the_mistake_behind_an_exception(capsys):
    def on_error(err, args):
        return f"{type(err).__name__} on {args[0].dim()}-D scores: use dim=-1" if isinstance(err, IndexError) else None

    check_function("Exercise 3", lambda s: torch.softmax(s, dim=2), INPUTS, reference_softmax, on_error=on_error)
    assert line(capsys) == "Exercise 3: not yet. IndexError on 2-D scores: use dim=-1"
    check_function("Exercise 3", lambda s: s.no_such_method(), INPUTS, reference_softmax, on_error=on_error)
    assert line(capsys).startswith("Exercise 3: not yet. Your function raised AttributeError on inputs (2, 3) float32:")


def test_check_function_silences_the_learners_warnings(capsys, recwarn):
    import warnings

    def noisy(scores):
        warnings.warn("deprecated", UserWarning, stacklevel=2)
        return reference_softmax(scores)

    check_function("Exercise 3", noisy, INPUTS, reference_softmax)
    assert line(capsys) == "Exercise 3: correct."
    assert len(recwarn) == 0


def test_describe_shows_a_pair_of_tensors_item_by_item():
    expected = "(tensor of shape (2,): [0.0, 0.0]; tensor of shape (1,): [1.0])"
    assert describe((torch.zeros(2), torch.ones(1))) == expected


# --- grading mode (nbgrader's test cells) ----------------------------------------------------------

def test_grading_mode_raises_the_printed_line_and_passes_a_right_answer_silently(capsys):
    from attnlib.exercises import grading, nb02

    with grading():
        check_function("Exercise 3", reference_softmax, INPUTS, reference_softmax, [WRONG_AXIS])
        check_value("Exercise 1", (2, 3), (2, 3))
        # torch.softmax itself is refused there (the prompt asks for torch.exp and .sum)
        nb02.check_stable_softmax(lambda x: torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True)))
    assert capsys.readouterr().out == "", "a correct answer passes silently in grading mode"

    wrong = lambda s: torch.softmax(s, dim=0)  # noqa: E731
    check_function("Exercise 3", wrong, INPUTS, reference_softmax, [WRONG_AXIS])
    printed = line(capsys)
    with grading(), pytest.raises(AssertionError) as caught:
        check_function("Exercise 3", wrong, INPUTS, reference_softmax, [WRONG_AXIS])
    assert str(caught.value) == printed == "Exercise 3: not yet. softmax ran over the queries: use dim=-1"
    assert capsys.readouterr().out == ""
    # IPython (and so nbgrader's feedback) shows the verdict as one line, not a traceback through attnlib
    assert caught.value._render_traceback_() == [f"AssertionError: {printed}"]


@pytest.mark.parametrize("stub", [None, ..., lambda s: None])
def test_grading_mode_fails_an_untouched_stub(capsys, stub):
    from attnlib.exercises import grading

    with grading(), pytest.raises(AssertionError, match=NOT_ATTEMPTED):
        check_function("Exercise 3", stub, INPUTS, reference_softmax)
    with grading(), pytest.raises(AssertionError, match=f"^Exercise 1: {NOT_ATTEMPTED}$"):
        check_value("Exercise 1", None if stub is not ... else ..., (2, 3))
    assert capsys.readouterr().out == ""


def test_grading_mode_ends_with_its_block_even_after_a_failure(capsys):
    from attnlib.exercises import grading

    with pytest.raises(AssertionError), grading():
        with grading():  # nested: leaving the inner block keeps grading on
            pass
        check_value("Exercise 1", (3, 2), (2, 3))
    check_value("Exercise 1", (3, 2), (2, 3))  # outside: prints again, never raises
    assert line(capsys) == "Exercise 1: not yet. Number 1 of your answer (3) is not right; check it again."


def test_checkers_that_print_by_themselves_also_raise_in_grading_mode(capsys):
    """nb01's shape checks, nb05's view-after-transpose hint and nb07's lines speak through report() too."""
    from attnlib.exercises import grading, nb01, nb05, nb07

    def view_after_transpose(x, num_heads):
        bh, t, dh = x.shape
        return x.view(bh // num_heads, num_heads, t, dh).transpose(1, 2).view(bh // num_heads, t, -1)

    calls = [lambda: nb01.check_shapes((5, 7), None, (5, 32)),
             lambda: nb05.check_merge_heads(view_after_transpose),
             lambda: nb07.check_decode_bugs({"A", "B"}),
             lambda: nb07.check_decode_bugs(None)]
    for call in calls:
        call()
        printed = line(capsys)
        with grading(), pytest.raises(AssertionError) as caught:
            call()
        assert str(caught.value) == printed
    with grading():
        nb07.check_decode_bugs({"A", "C"})
    assert capsys.readouterr().out == ""


def test_report_refuses_an_unknown_verdict():
    from attnlib.exercises import report

    with pytest.raises(ValueError, match="verdict"):
        report("Exercise 1", "maybe")


# --- reading an answer -----------------------------------------------------------------------------

@pytest.mark.parametrize("answer", [6, 6.0, np.int64(6), np.float32(6.0), torch.tensor(6), torch.tensor(6.0),
                                    torch.tensor([6]), np.array(6), np.array([6.0]), Fraction(12, 2),
                                    Decimal("6.0"), [6]])
def test_read_value_reads_anything_holding_one_number_as_that_number(answer):
    value = read_value(answer, 6)
    assert value == 6 and type(value) in (int, float)
    assert same(answer, 6) and same(answer, 6.0)


def test_read_value_keeps_booleans_apart_from_numbers_and_leaves_what_it_cannot_read():
    assert read_value(True, 1) is True and not same(True, 1) and not same(np.bool_(True), 1)
    assert same(np.bool_(True), True) and same(torch.tensor(True), True)
    assert read_value("6", 6) == "6" and not same("6", 6)
    assert read_value(torch.tensor([6, 7]), 6) is not None and not same(torch.tensor([6, 7]), 6)


@pytest.mark.parametrize("answer", [(2, 3), [2, 3], torch.Size([2, 3]), torch.tensor([2, 3]), np.array([2, 3]),
                                    (np.int64(2), torch.tensor(3))])
def test_shapes_are_read_from_any_sequence_of_ints(answer):
    assert same(answer, (2, 3)) and shape_of(answer) == (2, 3)
    assert not same(answer, (3, 2))


def test_a_tensor_answer_may_be_an_array_or_nested_lists():
    expected = torch.tensor([[0.5, 0.5], [0.25, 0.75]], dtype=torch.float64)
    assert same(np.array([[0.5, 0.5], [0.25, 0.75]]), expected) and same([[0.5, 0.5], [0.25, 0.75]], expected)
    assert not same([[0.5, 0.5]], expected) and not same("0.5", expected)


def test_a_number_written_as_a_string_is_told_to_write_the_number(capsys):
    check_value("Exercise 2", "0.68", 0.68)
    out = line(capsys)
    assert out.startswith("Exercise 2: not yet. You wrote the string '0.68'") and "without quotes" in out
    assert number_in_string("1/7") is not None and number_in_string("seven") is None
    check_value("Exercise 2", "seven", 0.68)
    assert line(capsys) == "Exercise 2: not yet. Your answer 'seven' is not the one asked for."


def test_decimals_accept_one_unit_in_the_last_decimal_and_no_more(capsys):
    for answer, verdict in ((0.99, "correct"), (1, "correct"), (1.01, "correct"), (0.98, "not yet")):
        check_value("Exercise 2", answer, 1.0, decimals=2)
        assert line(capsys).startswith(f"Exercise 2: {verdict}")
    check_value("Exercise 2", 0.17, 1 / 6, decimals=2)
    assert line(capsys).startswith("Exercise 2: correct")


# --- dtype-aware comparison ------------------------------------------------------------------------

def test_tolerance_follows_the_narrower_dtype():
    assert narrower(torch.float32, torch.float16) == torch.float16 and narrower(torch.int64, None) is None
    assert tolerance(torch.float16) == (1e-3, 1e-3) and tolerance(torch.bfloat16) == (1.6e-2, 1.6e-2)
    assert tolerance(torch.float32) == (1e-5, 1e-4)
    x = torch.tensor([0.3, 0.7], dtype=torch.float64)
    assert same(x.half(), x) and not same(x.float() + 5e-4, x)
    assert same(x.float() + 5e-4, x, dtype=torch.float16)  # computed from float16 inputs: float16's precision


def _softmax_ref(x):
    return torch.softmax(x, dim=-1)


def test_float16_inputs_compare_at_float16_tolerance_against_a_float64_reference(capsys):
    x = (torch.arange(8.0).reshape(2, 4) / 3).half()
    # computed in float32 from float16 inputs: right, though it differs from a float16 softmax by more than 1e-5
    in_float32 = lambda s: torch.softmax(s, dim=-1, dtype=torch.float32)  # noqa: E731
    assert not torch.allclose(in_float32(x), torch.softmax(x, dim=-1).float(), atol=1e-5, rtol=0)
    check_function("Exercise 4", in_float32, [(x,)], _softmax_ref)
    assert line(capsys) == "Exercise 4: correct."
    check_function("Exercise 4", lambda s: torch.softmax(s, dim=-1), [(x,)], _softmax_ref)
    assert line(capsys) == "Exercise 4: correct."
    check_function("Exercise 4", lambda s: torch.softmax(s, dim=-1) + 5e-3, [(x,)], _softmax_ref)
    assert line(capsys).startswith("Exercise 4: not yet. On inputs (2, 4) float16, at index (0, 0)")


def test_a_result_narrower_than_its_inputs_is_not_accepted(capsys):
    x = torch.arange(6.0).reshape(2, 3)
    check_function("Exercise 4", lambda s: torch.softmax(s, dim=-1).half(), [(x,)], _softmax_ref)
    assert line(capsys) == ("Exercise 4: not yet. On inputs (2, 3) float32 your function returns float16 for "
                            "float32 inputs: keep the inputs' dtype (or a wider one), so that no precision is lost.")
    check_function("Exercise 4", lambda s: torch.softmax(s.double(), dim=-1), [(x,)], _softmax_ref)
    assert line(capsys) == "Exercise 4: correct."
    check_function("Exercise 2", lambda n: torch.eye(n, dtype=torch.float16), [(3,)], lambda n: torch.eye(n))
    assert line(capsys) == ("Exercise 2: not yet. On inputs 3 your function returns float16 for inputs that are "
                            "numbers: keep float32 (or a wider one), so that no precision is lost.")


# --- probes and the fallback hint ------------------------------------------------------------------

def _shift_by_min(x):
    e = torch.exp(x - x.amin(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)


def test_a_probe_separates_a_lucky_implementation_and_is_named(capsys):
    easy = [(torch.tensor([[1.0, 2.0, 3.0]]),)]
    wide = Probe((torch.tensor([[0.0, 200.0]]),), "the row [0, 200]")
    check_function("Exercise 4", _shift_by_min, easy, _softmax_ref)
    assert line(capsys) == "Exercise 4: correct."  # lucky on small rows
    check_function("Exercise 4", _shift_by_min, easy + [wide], _softmax_ref)
    assert line(capsys) == "Exercise 4: not yet. On the probe the row [0, 200], at index (0, 1) expected 1.0, got nan."
    named = Probe(wide.args, wide.label, "subtract the maximum")
    check_function("Exercise 4", _shift_by_min, easy + [named], _softmax_ref)
    assert line(capsys) == "Exercise 4: not yet. subtract the maximum"


def test_a_gradient_probe_catches_a_nan_gradient_behind_right_weights(capsys):
    scores = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -1.0]])
    mask = torch.tensor([[False, False, False], [True, True, False]])  # query 0 has no key

    def reference(s, m):
        w = torch.softmax(s.masked_fill(~m, float("-inf")), dim=-1)
        return torch.where(m.any(dim=-1, keepdim=True), w, 0.0)

    def additive_then_nan_to_num(s, m):
        return torch.softmax(s + torch.zeros_like(s).masked_fill(~m, float("-inf")), dim=-1).nan_to_num(0.0)

    probe = Probe((scores, mask), "a loss on query 1", loss=lambda w, args: w[1].sum() * 0 + (w[1] ** 2).sum())
    check_function("Exercise 4", additive_then_nan_to_num, [(scores, mask)], reference)
    assert line(capsys) == "Exercise 4: correct."  # the forward pass alone cannot tell
    check_function("Exercise 4", additive_then_nan_to_num, [(scores, mask), probe], reference)
    assert line(capsys).startswith("Exercise 4: not yet. On the probe a loss on query 1 your weights are right, "
                                   "but their gradient is not finite")
    check_function("Exercise 4", reference, [(scores, mask), probe], reference)
    assert line(capsys) == "Exercise 4: correct."


def test_first_difference_shows_index_expected_and_got_and_never_the_same_words_twice():
    big = torch.zeros(3, 5)
    wrong = big.clone()
    wrong[1, 2] = 0.5
    assert first_difference(wrong, big) == "at index (1, 2) expected 0.0, got 0.5"
    assert describe(wrong) == describe(big)  # why the old fallback said the same words on both sides
    assert first_difference(big.T, big) == "expected shape (3, 5), got shape (5, 3)"
    assert first_difference(big.long(), big) == "expected a floating tensor (dtype float32), got dtype int64"
    assert first_difference((2, 1, 0), [2, 1, 0]) != "expected [2, 1, 0], got [2, 1, 0]"
    assert first_difference((big, wrong), (big, big)).startswith("in item 1 of the 2 you return, at index (1, 2)")


def test_the_fallback_of_a_big_tensor_shows_where_it_differs(capsys):
    x = torch.arange(15.0).reshape(3, 5)
    check_function("Exercise 2", lambda t: t.float() + (t == 7).float(), [(x,)], lambda t: t.clone())
    assert line(capsys) == "Exercise 2: not yet. On inputs (3, 5) float32, at index (1, 2) expected 7.0, got 8.0."


def test_the_reference_runs_in_float64_and_the_learner_in_the_inputs_dtype(capsys):
    seen = {"learner": [], "reference": []}

    def learner(x):
        seen["learner"].append(x.dtype)
        return torch.softmax(x.float(), dim=-1)

    def reference(x):
        seen["reference"].append(x.dtype)
        return torch.softmax(x, dim=-1)

    x = torch.tensor([[1.0, 2.0, 3.0]])
    check_function("Exercise 4", learner, [(x.half(),), (x,), (x.bfloat16(),)], reference)
    assert line(capsys) == "Exercise 4: correct."
    assert seen == {"learner": [torch.float16, torch.float32, torch.bfloat16], "reference": [torch.float64] * 3}


def test_close_numbers_are_shown_with_enough_digits_to_differ():
    assert first_difference(0.712149, 0.712051) == "expected 0.712051, got 0.712149"  # both 0.7121 at 4 digits
    got, expected = torch.tensor([0.712149], dtype=torch.float64), torch.tensor([0.712051], dtype=torch.float64)
    assert not same(got, expected)
    assert first_difference(got, expected) == "at index 0 expected 0.712051, got 0.712149"


def test_a_reference_that_cannot_take_float64_still_works(capsys):
    weights = torch.tensor([[1.0], [2.0]])  # float32, inside the reference: float64 @ float32 raises

    def reference(x):
        return x @ weights

    check_function("Exercise 1", lambda x: x @ weights, [(torch.ones(3, 2),)], reference)
    assert line(capsys) == "Exercise 1: correct."
    check_function("Exercise 1", lambda x: x @ weights + 1, [(torch.ones(3, 2),)], reference)
    assert line(capsys) == "Exercise 1: not yet. On inputs (3, 2) float32, at index (0, 0) expected 3.0, got 4.0."


def test_an_exercise_refuses_calls_into_the_modules_it_names(capsys):
    import attnlib
    from attnlib.exercises import Exercise

    exercise = Exercise("Exercise 4", reference=lambda q, k: attnlib.causal_mask(q, k, align="bottom_right"),
                        probes=[(3, 8), (2, 2)], refuse=("attnlib.masks",))
    exercise(lambda q, k: attnlib.causal_mask(q, k, align="bottom_right"))
    assert line(capsys) == ("Exercise 4: not yet. Your function calls attnlib's causal_mask: this exercise asks you to "
                            "write that step yourself, with torch's basic operations.")
    exercise(lambda q, k: torch.ones(q, k, dtype=torch.bool).tril(k - q))
    assert line(capsys) == "Exercise 4: correct."
    exercise(lambda q, k: attnlib.causal_mask(q, k, align="no such alignment"))  # refused even when it raises
    assert "calls attnlib's causal_mask" in line(capsys)
    one = Exercise("Exercise 4", reference=exercise.reference, probes=[(3, 8), (2, 2)],
                   refuse=("attnlib.masks.causal_mask",))  # one function refused, the module's others allowed
    one(lambda q, k: attnlib.causal_mask(q, k, align="bottom_right"))
    assert "calls attnlib's causal_mask" in line(capsys)
    one(lambda q, k: attnlib.masks.expand_key_mask(torch.ones(1, k, dtype=torch.bool))[0, 0]
        & torch.ones(q, k, dtype=torch.bool).tril(k - q))
    assert line(capsys) == "Exercise 4: correct."


def test_results_of_two_differently_watched_probes_compare():
    """A lucky answer returns the first probe's result on every probe: the verdict names a difference, it does not
    fail to read the answer (two watched tensor classes cannot meet in one torch operation)."""
    from attnlib.exercises import Exercise, Probe, watched

    def probes():
        return [Probe(watched(torch.randn(n, 3), forbid=lambda t: "")) for n in (2, 4)]

    exercise = Exercise("Exercise 1", reference=lambda x: x.softmax(-1), probes=probes)
    first = probes()[0].args[0]
    verdict = exercise.judge(lambda x: first.softmax(-1))
    assert verdict.verdict == "not yet" and "could not read" not in verdict.text, verdict.text
    assert exercise.judge(lambda x: x.softmax(-1)).verdict == "correct"


def test_an_always_mistake_is_found_where_the_tolerance_would_accept_the_output(capsys):
    """A masked weight of 3e-7 is within atol of 0; a row with always=True still names it, a plain row cannot."""
    scores, mask = torch.tensor([[0.0, 1.0, 2.0]]), torch.tensor([[True, True, False]])

    def right(s, m):
        return torch.softmax(s.masked_fill(~m, float("-inf")), dim=-1)

    def finite(s, m):
        return torch.softmax(s.masked_fill(~m, -15.0), dim=-1)

    def leak(always):
        return Mistake("a masked key keeps weight", when=lambda got, args: bool(got[~args[1]].max() > 1e-30),
                       always=always)

    check_function("Exercise 1", finite, [(scores, mask)], right, [leak(always=True)])
    assert line(capsys) == "Exercise 1: not yet. a masked key keeps weight"
    check_function("Exercise 1", finite, [(scores, mask)], right, [leak(always=False)])
    assert line(capsys) == "Exercise 1: correct."  # what the tolerance alone decides
    check_function("Exercise 1", right, [(scores, mask)], right, [leak(always=True)])
    assert line(capsys) == "Exercise 1: correct."
