"""nbgrader grades the course's assignments with the checkers' own hints: `make grade`.

The course folder is made afresh in a temporary directory by tests/tools/make_assignments.py (source/,
then release/ by ``nbgrader generate_assignment``). For every assignment, three students submit:

- ``solved``: the release with every answer cell filled in from the solved notebook: full points;
- ``untouched``: the release as it was handed out: 0 points, and the notebook still runs top to bottom
  (the only errors are the graded cells' AssertionErrors, each the checker's verdict on its exercise);
- ``mistake``: the solved submission with one classic mistake in one exercise: exactly that exercise's
  points lost, and ``nbgrader generate_feedback``'s HTML shows the checker's hint for that mistake.

``nbgrader autograde`` writes the scores into the course's gradebook (SQLite), read back here both through
nbgrader's own API and through the CSV that ``nbgrader export`` writes. Collected only by its own target
(tests/conftest.py's collect_ignore): it needs nbgrader (requirements-grading.txt) and executes every
notebook three times. The seconds autograding took per assignment are written to build/grading/times.md.
"""

from __future__ import annotations

import csv
import html
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from tests.tools import make_assignments

ROOT = Path(__file__).resolve().parents[2]

STUDENTS = ("solved", "untouched", "mistake")

# One classic mistake per notebook: (grade_id, the answer cell as the student wrote it, a phrase of the hint
# the checker gives for it). A notebook missing here gets the fallback below: one exercise left undone.
MISTAKES = {
    "01_toy_qkv": ("nb01_ex4", '''\
def my_attention(query, key, value):
    scores = query @ key.transpose(-2, -1)  # not divided by sqrt(d_k)
    weights = F.softmax(scores, dim=-1)
    return weights @ value, weights''', "Your scores were not scaled: divide them by sqrt(d_k)"),
    "02_softmax_axes": ("nb02_ex4", '''\
def my_softmax(x):
    e = torch.exp(x)  # no maximum subtracted
    return e / e.sum(dim=-1, keepdim=True)''', "exp(100) overflows float32 to inf"),
    "03_scaling_variance": ("nb03_ex4", '''\
def scaled_scores(q, k):
    return q @ k.transpose(-2, -1) / q.shape[-1]  # d_k, not sqrt(d_k)''',
        "divided by d_k itself, not by its square root"),
    "04_padding_and_causal_masks": ("nb04_ex3", '''\
def decoder_mask(attention_mask):
    T = attention_mask.shape[-1]
    real = attention_mask == 1
    return real[:, None, :, None] & torch.ones(T, T, dtype=torch.bool).tril()  # the padding on the queries''',
        "Your padding runs along the queries"),
    "05_multihead_reshaping": ("nb05_ex4", '''\
def my_merge_heads(x, num_heads):
    bh, t, dh = x.shape
    return x.reshape(bh // num_heads, t, num_heads * dh)  # no transpose''', "Your rows mix tokens"),
    "06_additive_attention": ("nb06_ex3", '''\
def masked_weights(scores, valid_lens):
    return torch.softmax(scores, dim=-1)  # the padded keys are not masked''', "the mask is missing"),
    "07_positional_encoding": ("nb07_ex3", '''\
def rope_rotate_half(x, positions, theta):
    angle = positions[:, None] * theta
    a, b = x[..., 0::2], x[..., 1::2]  # neighbours paired, not i and i + D/2
    return torch.stack([a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()], -1).flatten(-2)''',
        "the interleaved pairing"),
    "08_efficient_attention": ("nb08_ex3", '''\
def running_start(q, value):
    rows = q.shape[:-1]
    return q.new_full((*rows, 1), -math.inf), q.new_zeros(*rows, 1), q.new_zeros(*rows, value.shape[-1])


def blockwise_attention(query, key, value, block_size):
    q = query / math.sqrt(query.shape[-1])
    m, s, acc = running_start(q, value)
    for start in range(0, key.shape[-2], block_size):
        tile = q @ key[..., start : start + block_size, :].mT
        m_new = torch.maximum(m, tile.amax(dim=-1, keepdim=True))
        p = torch.exp(tile - m_new)
        s = s * torch.exp(m - m_new) + p.sum(dim=-1, keepdim=True)
        acc = acc + p @ value[..., start : start + block_size, :]  # acc not rescaled
        m = m_new
    return acc / s''', "Your acc is not rescaled when the maximum rises"),
    "09_pretrained_transformers": ("nb09_ex1", '''\
def mean_pool(hidden, attention_mask):
    return hidden.mean(dim=1)  # the padding is averaged in''', "Your mean includes the padded positions"),
    "10_induction_heads": ("nb10_ex2", "my_untrained_loss = math.log2(64)  # in bits", "the loss in bits"),
    "11_modern_attention": ("nb11_ex5", '''\
def my_gated_output(heads, x, w_gate, w_out):
    b, h, t, dh = heads.shape
    merged = heads.transpose(1, 2).reshape(b, t, h * dh)
    return (merged @ w_out) * torch.sigmoid(x @ w_gate)  # the gate after the output projection''',
        "Your gate comes after the output projection"),
}

# GRADING_NOTEBOOKS="02 05" grades only the notebooks whose names contain one of these (default: all)
ASSIGNMENTS = [p.stem for p in make_assignments.assignment_names(os.environ.get("GRADING_NOTEBOOKS", "").split())]


def mistake_of(course: Path, name: str) -> tuple[str, str, str]:
    """(grade_id, the wrong answer cell, a phrase of its hint); the fallback: the first exercise left as released."""
    if name in MISTAKES:
        return MISTAKES[name]
    release = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
    grade, cell = next(iter(answer_cells(release).items()))
    grade_id = grade.removesuffix("_answer")
    return grade_id, cell.source, f"Exercise {grade_id.split('_ex')[-1]}: "  # the checker's verdict on a stub


def answer_cells(nb: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")}


def run_nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([os.path.join(bin_dir, "nbgrader"), *args], cwd=course, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done


# Seconds one run of a notebook takes on an idle core (make course), to share the notebooks between the
# workers; a notebook not listed counts as 30.
COST = {"06": 120, "09": 46, "10": 60}
# GRADING_WORKERS=1 grades in one course folder, one notebook after the other
WORKERS = int(os.environ.get("GRADING_WORKERS", "2"))


def share(names: list[str], workers: int) -> list[list[str]]:
    """The notebooks split into `workers` groups of about equal cost, the costliest placed first."""
    groups: list[list[str]] = [[] for _ in range(max(1, min(workers, len(names))))]
    for name in sorted(names, key=lambda n: -COST.get(n[:2], 30)):
        min(groups, key=lambda g: sum(COST.get(n[:2], 30) for n in g)).append(name)
    return [sorted(g) for g in groups]


def submit(course: Path, name: str) -> None:
    """The three students' notebooks for one assignment, in submitted/STUDENT/NAME/NAME.ipynb."""
    source = nbformat.read(course / "source" / name / f"{name}.ipynb", as_version=4)
    release = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
    solutions = answer_cells(source)
    grade_id, wrong, _ = mistake_of(course, name)
    for student in STUDENTS:
        nb = nbformat.from_dict(release)
        for grade, cell in answer_cells(nb).items():
            if student == "solved" or (student == "mistake" and grade != f"{grade_id}_answer"):
                cell.source = solutions[grade].source
            elif student == "mistake":
                cell.source = wrong
        folder = course / "submitted" / student / name
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{name}.ipynb")


def grade_group(course: Path, names: list[str]) -> list[tuple[str, float, float]]:
    """Make one course folder for these notebooks, autograde their submissions, feedback, export; seconds each."""
    subprocess.run([sys.executable, str(ROOT / "tests/tools/make_assignments.py"), "--course", str(course), *names],
                   check=True, capture_output=True, text=True)
    times = []
    for name in names:
        submit(course, name)
        start = time.perf_counter()
        run_nbgrader(course, "autograde", name)
        middle = time.perf_counter()
        run_nbgrader(course, "generate_feedback", name, "--student", "mistake")
        times.append((name, middle - start, time.perf_counter() - middle))
    run_nbgrader(course, "export")
    return times


@pytest.fixture(scope="module")
def courses(tmp_path_factory) -> dict[str, Path]:
    """Each notebook's course folder after autograding, feedback and export.

    The notebooks are shared between WORKERS course folders graded side by side (each its own gradebook:
    SQLite and nbgrader are not made for two writers at once), one kernel at a time in each.
    """
    base = tmp_path_factory.mktemp("nbgrader")
    groups = share(ASSIGNMENTS, WORKERS)
    start = time.perf_counter()
    with ThreadPoolExecutor(len(groups)) as pool:
        results = list(pool.map(lambda ig: grade_group(base / f"course{ig[0]}", ig[1]), enumerate(groups)))
    wall = time.perf_counter() - start
    out = ROOT / "build" / "grading"
    out.mkdir(parents=True, exist_ok=True)
    rows = [f"| {name} | {i + 1} | {grade:.0f} | {feedback:.0f} |"
            for i, times in enumerate(results) for name, grade, feedback in times]
    (out / "times.md").write_text(
        "| assignment | worker | seconds: autograde 3 submissions | generate_feedback |\n| --- | --- | --- | --- |\n"
        + "\n".join(rows) + f"\n| all, {len(groups)} workers side by side | | {wall:.0f} (wall clock) | |\n")
    return {name: base / f"course{i}" for i, names in enumerate(groups) for name in names}


def scores(course: Path, name: str, student: str) -> dict[str, tuple[float, float]]:
    """grade_id -> (score, max_score) for one student's notebook, from the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        submission = gb.find_submission_notebook(name, name, student)
        return {g.name: (g.score, g.max_score) for g in submission.grades}


def errors(course: Path, name: str, student: str) -> list[tuple[str | None, str, str]]:
    """(grade_id of a graded cell or None, ename, evalue) of every error in the autograded notebook."""
    nb = nbformat.read(course / "autograded" / student / name / f"{name}.ipynb", as_version=4)
    found = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                found.append((meta.get("grade_id") if meta.get("grade") else None, output.ename, output.evalue))
    return found


def points_of(name: str) -> dict[str, int]:
    _, nb, exercises = make_assignments.all_assignments([name])[0]
    return {e.grade_id: e.points for e in exercises}


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_solved_scores_full_points_without_errors(courses, name):
    course = courses[name]
    got = scores(course, name, "solved")
    assert got.keys() == points_of(name).keys()
    assert {g: s for g, (s, _) in got.items()} == points_of(name)
    assert errors(course, name, "solved") == []


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_untouched_release_scores_zero_and_runs_to_the_end(courses, name):
    course = courses[name]
    got = scores(course, name, "untouched")
    assert all(score == 0 for score, _ in got.values()), got
    found = errors(course, name, "untouched")
    assert sorted(g for g, _, _ in found) == sorted(points_of(name)), found  # one error per graded cell, no other
    for grade_id, ename, evalue in found:  # the checker's verdict ("not attempted yet" for most stubs)
        assert ename == "AssertionError" and evalue.startswith(f"Exercise {grade_id.split('_ex')[-1]}: "), found


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_one_mistake_loses_exactly_that_exercise(courses, name):
    course = courses[name]
    grade_id, _, phrase = mistake_of(course, name)
    points = points_of(name)
    got = {g: s for g, (s, _) in scores(course, name, "mistake").items()}
    assert got == {**points, grade_id: 0}
    found = errors(course, name, "mistake")
    assert [(g, e) for g, e, _ in found] == [(grade_id, "AssertionError")], found
    assert phrase in found[0][2]


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_feedback_shows_the_checkers_hint(courses, name):
    course = courses[name]
    grade_id, _, phrase = mistake_of(course, name)
    (_, _, line), = errors(course, name, "mistake")  # the checker's line, as the AssertionError carries it
    page = (course / "feedback" / "mistake" / name / f"{name}.html").read_text()
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert phrase in line and line in text
    assert "most recent call last" not in text, "the verdict is shown as its line, without a traceback"
    total, lost = sum(points_of(name).values()), points_of(name)[grade_id]
    assert re.search(rf"Score:\s*{total - lost}(\.0)?\s*/\s*{total}(\.0)?", text), "the feedback's score line"
    if name == "02_softmax_axes":  # the line book/teachers.md quotes, and the score above it
        page = make_assignments.TEACHERS_PAGE.read_text()
        assert f"AssertionError: {line}\n" in page, "book/teachers.md: quote the feedback line of 02's mistake"
        assert f"{name} (Score: {total - lost}.0 / {total}.0)" in page


def test_export_csv_has_every_score(courses):
    got = {}
    for course in set(courses.values()):
        with open(course / "grades.csv", newline="") as f:
            for row in csv.DictReader(f):  # every assignment of that gradebook, every student
                got[(row["assignment"], row["student_id"])] = (float(row["raw_score"]), float(row["max_score"]))
    want = {}
    for name, course in courses.items():
        points = points_of(name)
        total = float(sum(points.values()))
        want[(name, "solved")] = (total, total)
        want[(name, "untouched")] = (0.0, total)
        want[(name, "mistake")] = (total - points[mistake_of(course, name)[0]], total)
    assert got == want


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_hidden_tests_leave_the_release_and_come_back_for_grading(courses, name):
    course = courses[name]
    release = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
    text = "\n".join(c.source for c in release.cells)
    hidden_ids = {g for g in make_assignments.HIDDEN_TESTS if g in points_of(name)}
    assert "HIDDEN TESTS" not in text
    assert not any(make_assignments.HIDDEN_TESTS[g].splitlines()[-1] in text for g in hidden_ids)
    graded = nbformat.read(course / "autograded" / "solved" / name / f"{name}.ipynb", as_version=4)
    found = {c.metadata["nbgrader"]["grade_id"] for c in graded.cells
             if c.metadata.get("nbgrader", {}).get("grade") and "BEGIN HIDDEN TESTS" in c.source}
    assert found == hidden_ids


def test_points_table_in_the_teachers_page_is_current():
    page = make_assignments.TEACHERS_PAGE.read_text()
    table = make_assignments.points_table([(n, e) for n, _, e in make_assignments.all_assignments()])
    assert make_assignments.page_with_table(page, table) == page, \
        "book/teachers.md's points table is stale: run python tests/tools/make_assignments.py --update-page"


def test_grading_mode_is_not_in_the_course_notebooks():
    for path in sorted((ROOT / "notebooks").glob("**/*.ipynb")):
        assert "grading()" not in path.read_text(), f"{path.name}: the learner notebooks keep the printing checkers"


