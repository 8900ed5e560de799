"""The exercise machinery: the checkers' shared judge, and the learner notebooks made from the solved ones."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
import torch

from attnlib.exercises import NOT_ATTEMPTED, Mistake, check_function, check_value, describe, same

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "tools"))
import make_exercises  # noqa: E402


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
    assert not same(x, x.tolist())  # a list is not the tensor asked for


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
    assert line(capsys) == "Exercise 1: not yet. Expected (2, 3), got (4, 4)."


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
    assert line(capsys).startswith("Exercise 3: not yet. On inputs (1, 4) float32 expected tensor of shape (1, 4)")


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
    assert "not yet" in line(capsys)


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
    assert line(capsys).startswith("Exercise 3: not yet. On inputs (2, 3) float32 expected")


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
        nb02.check_stable_softmax(reference_softmax)
    assert capsys.readouterr().out == "", "a correct answer passes silently in grading mode"

    wrong = lambda s: torch.softmax(s, dim=0)  # noqa: E731
    check_function("Exercise 3", wrong, INPUTS, reference_softmax, [WRONG_AXIS])
    printed = line(capsys)
    with grading(), pytest.raises(AssertionError) as caught:
        check_function("Exercise 3", wrong, INPUTS, reference_softmax, [WRONG_AXIS])
    assert str(caught.value) == printed == "Exercise 3: not yet. softmax ran over the queries: use dim=-1"
    assert capsys.readouterr().out == ""


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
    assert line(capsys) == "Exercise 1: not yet. Expected (2, 3), got (3, 2)."


def test_checkers_that_print_by_themselves_also_raise_in_grading_mode(capsys):
    """nb01's shape checks, nb05's view-after-transpose hint and nb07's lines speak through report() too."""
    from attnlib.exercises import grading, nb01, nb05, nb07

    def view_after_transpose(x):
        b, h, t, dh = x.shape
        return x.transpose(1, 2).view(b, t, h * dh)

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
