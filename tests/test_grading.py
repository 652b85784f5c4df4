"""The graded assignments (assignments/, nbgrader; tools/assignment_notebooks.py, tools/grade.py).

Every exercise of the book has an assignment or a rubric, read from the chapters' sources: an
exercise that calls a checker has an assignment running it, and every challenge exercise a
rubric. The students' notebooks hold a stub, no solution and no hidden test. Run as nbgrader runs
them (the test cells as written, the student's answer cells), each source notebook passes every
test, an untouched stub passes none, and an answer that calls the course package's own
implementation passes the visible tests but not the hidden one. Grading a folder with
tools/grade.py, as `make grade` does, gives full marks, fewer marks and none.
"""

from __future__ import annotations

import ast
import copy
import csv
import json
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import assignment_notebooks
import nbformat
import pytest
from site_utils import REPO, chapter_numbers, source_path

from transformer_course import exercises

NAMES = assignment_notebooks.assignment_names()
EXERCISE = re.compile(r"^(?::{3,}|`{3,})\{exercise\}", re.MULTILINE)
LABEL = re.compile(r"^:label:\s*(\S+)", re.MULTILINE)
LEVEL = re.compile(r"^:class:.*\bdifficulty-([123])\b", re.MULTILINE)
CALL = re.compile(r"\b(check_\w+)\(")
CHECKERS = {name for name in dir(exercises) if name.startswith("check_")}
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", re.DOTALL)
SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.DOTALL)

# Each assignment answered with the course package's own code, the shortcut the hidden test
# refuses (an import, a module alias, a helper, the layer's own forward pass).
PACKAGE_ANSWERS = {name: textwrap.dedent(code).strip() for name, code in {
    "ch1-ex-conv-path": """
        from transformer_course.experiments.ch1_why_attention import paths
        def conv_path_length(n, k):
            return paths.counted_path_length("convolutional", n, kernel_size=k)""",
    "ch2-ex-softmax": """
        import transformer_course as tc
        my_softmax = lambda x: tc.softmax(x)""",
    "ch2-ex-attention": """
        from transformer_course import scaled_dot_product_attention_numpy as sdpa
        def helper(q, k, v, mask):
            return sdpa(q, k, v, mask)[0]
        def my_attention(q, k, v, mask=None):
            return helper(q, k, v, mask)""",
    "ch2-ex-memory": """
        import numpy as np
        from transformer_course import scaled_dot_product_attention_numpy
        def attention_weights_bytes(batch, seq_len, num_heads, num_layers, bytes_per_number):
            x = np.zeros((seq_len, 1))
            weights = scaled_dot_product_attention_numpy(x, x, x)[1]  # (T, T)
            return num_layers * batch * num_heads * weights.size * bytes_per_number""",
    "ch2-ex-local": """
        from transformer_course import causal_mask
        def local_causal_mask(T, window):
            band = torch.ones(T, T, dtype=torch.bool).triu(1 - window)
            return causal_mask(T).reshape(T, T) & band""",
    "ch3-ex-loop": """
        from transformer_course.experiments.ch3_multi_head_attention import numpy_heads
        mha_loop = lambda *args: numpy_heads.multi_head_attention_numpy(*args)[0]""",
    "ch4-ex-encoding": """
        from transformer_course import sinusoidal_encoding_numpy as my_encoding""",
    "ch4-ex-rotation": """
        from transformer_course.experiments.ch4_positional_encoding import relative_position
        my_rotation = relative_position.relative_position_map""",
    "ch4-ex-rope": """
        from transformer_course.experiments.ch4_positional_encoding.rotary import rotate
        my_rotate = lambda x: rotate(x)""",
    "ch5-ex-count": """
        from transformer_course.core.model import DecoderLayer, count_parameters
        def decoder_layer_parameters(d_model, d_ff):
            return count_parameters(DecoderLayer(d_model, 1, d_ff))""",
    "ch5-ex-forward": """
        my_forward = lambda layer, x, mask: layer(x, mask)
        my_pre_norm_forward = lambda layer, x, mask: layer.forward(x, mask)""",
    "ch6-ex-schedule": """
        from transformer_course import noam_lr as lrate""",
    "ch6-ex-floor": """
        from transformer_course.core.loss import loss_floor as smoothing_floor""",
    "ch6-ex-shift": """
        from transformer_course import shift_targets
        shift = lambda tgt: shift_targets(tgt)""",
    "ch7-ex-write-bleu": """
        import sacrebleu
        def my_bleu(hypotheses, references):
            return sacrebleu.corpus_bleu([" ".join(h) for h in hypotheses],
                                         [[" ".join(r) for r in references]],
                                         tokenize="none", smooth_method="none").score""",
    "ch8-ex-top-k": """
        from transformer_course.experiments.ch8_real_sentences import models
        def top_k_probabilities(logits, temperature, top_k):
            return models.next_token_probabilities(logits, temperature, top_k)""",
}.items()}
# Run every code cell of each notebook, in order, in one namespace as a kernel would; record for
# each cell whether it ran without an exception.
RUNNER = """
import json, sys
import nbformat
results = {}
for path in json.loads(sys.argv[1]):
    namespace, results[path] = {"__name__": "__main__"}, {}
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "code":
            grade_id = cell.metadata["nbgrader"]["grade_id"]
            try:
                exec(compile(cell.source, grade_id, "exec"), namespace)
                results[path][grade_id] = True
            except Exception:
                results[path][grade_id] = False
with open(sys.argv[2], "w") as out:
    json.dump(results, out)
"""


@dataclass(frozen=True)
class Exercise:
    """One exercise of a chapter: its label, its difficulty and the checkers it calls."""

    label: str
    level: int
    checkers: frozenset[str]


def book_exercises() -> list[Exercise]:
    """Every exercise of every chapter, each read up to the next exercise or section heading
    (its solution included)."""
    found = []
    for docname in chapter_numbers():
        text = source_path(docname).read_text(encoding="utf-8")
        starts = [m.start() for m in EXERCISE.finditer(text)]
        for start, end in zip(starts, [*starts[1:], len(text)], strict=True):
            block = text[start:end].split("\n## ", 1)[0]
            found.append(Exercise(LABEL.search(block).group(1), int(LEVEL.search(block).group(1)),
                                  frozenset(set(CALL.findall(block)) & CHECKERS)))
    return found


def source(name: str) -> nbformat.NotebookNode:
    """Assignment ``name``'s source notebook (solutions and hidden tests in)."""
    return nbformat.read(assignment_notebooks.SOURCE / name / f"{name}.ipynb", as_version=4)


def nbgrader_meta(cell: nbformat.NotebookNode) -> dict:
    """The cell's nbgrader metadata (grade_id, grade, points, solution, locked)."""
    return cell.metadata["nbgrader"]


def answered(notebook: nbformat.NotebookNode, answer: str) -> nbformat.NotebookNode:
    """``notebook`` with ``answer`` in its ``-answer`` cell."""
    notebook = copy.deepcopy(notebook)
    for cell in notebook.cells:
        if nbgrader_meta(cell)["grade_id"].endswith("-answer"):
            cell.source = answer
    return notebook


def run_cells(notebooks: dict[str, nbformat.NotebookNode],
              folder: Path) -> dict[str, dict[str, bool]]:
    """Run each notebook's code cells in a fresh namespace (all notebooks in one process);
    return, for each notebook's key, each cell's grade id -> whether it ran without an exception."""
    paths = {key: folder / f"{key}.ipynb" for key in notebooks}
    for key, notebook in notebooks.items():
        nbformat.write(notebook, paths[key])
    done = subprocess.run([sys.executable, "-c", RUNNER, json.dumps([str(p) for p in
                           paths.values()]), str(folder / "results.json")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((folder / "results.json").read_text())
    return {key: results[str(path)] for key, path in paths.items()}


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The students' notebooks, as `make assignments` writes them (nbgrader generate_assignment)."""
    out = tmp_path_factory.mktemp("release") / "assignments"
    assignment_notebooks.write_release(out)
    return out


def rubric_labels() -> set[str]:
    """The exercises RUBRICS.md has a rubric for (the labels its headings carry)."""
    return set(re.findall(r"^## (\S+):", assignment_notebooks.RUBRICS.read_text(
        encoding="utf-8"), re.MULTILINE))


def test_every_exercise_has_an_assignment_or_a_rubric() -> None:
    """A new exercise fails here until it has its notebook in assignments/source/ or its
    rubric in RUBRICS.md; an assignment or a rubric for no exercise of the book fails too."""
    labels = [e.label for e in book_exercises()]
    assert len(labels) == len(set(labels)), "two exercises share a label"
    marked = set(NAMES) | rubric_labels()
    assert [label for label in labels if label not in marked] == []
    assert sorted(marked - set(labels)) == []


def test_every_exercise_with_a_checker_has_an_assignment_running_it() -> None:
    checked = {e.label: e.checkers for e in book_exercises() if e.checkers}
    assert checked, "no exercise of the book calls a checker: the parser is wrong"
    assert sorted(set(checked) - set(NAMES)) == [], "an exercise with a checker has no assignment"
    for name in NAMES:
        visible = "\n".join(HIDDEN.sub("", c.source) for c in source(name).cells
                            if c.cell_type == "code" and nbgrader_meta(c).get("grade"))
        runs = set(CALL.findall(visible)) & CHECKERS
        assert runs, f"{name}: no visible test runs a checker of transformer_course.exercises"
        assert checked.get(name, set()) <= runs, f"{name} does not run its chapter's checker"


def test_every_challenge_exercise_has_a_rubric() -> None:
    challenges = {e.label for e in book_exercises() if e.level == 3}
    assert challenges and challenges <= rubric_labels()


def test_the_release_holds_stubs_and_no_solution_or_hidden_test(release: Path) -> None:
    assert sorted(p.stem for p in release.glob("*.ipynb")) == NAMES
    for name in NAMES:
        student = {nbgrader_meta(c)["grade_id"]: c.source
                   for c in nbformat.read(release / f"{name}.ipynb", as_version=4).cells}
        cells = source(name).cells
        assert nbgrader_meta(cells[-1]).get("grade") and HIDDEN.search(cells[-1].source), \
            f"{name}: the last cell is not a hidden test"
        for cell in cells:
            released = student[nbgrader_meta(cell)["grade_id"]]
            assert "### BEGIN" not in released and "### END" not in released, name
            for solution in SOLUTION.findall(cell.source):
                assert solution.strip() not in released and "NotImplementedError" in released
            if HIDDEN.search(cell.source):
                assert not ast.parse(released).body, f"{name}: a hidden test left code behind"
                assert ast.parse(cell.source).body, f"{name}: the hidden test holds no code"
            elif nbgrader_meta(cell).get("grade"):
                assert released == cell.source, f"{name}: a visible test changed"


def test_students_need_nothing_of_nbgrader(release: Path) -> None:
    pins = (REPO / "requirements-student.txt").read_text().lower()
    assert "nbgrader" not in pins
    for notebook in release.glob("*.ipynb"):
        for cell in nbformat.read(notebook, as_version=4).cells:
            assert "nbgrader" not in cell.source or cell.cell_type == "markdown", notebook.name


def test_solutions_pass_every_test_stubs_none_and_package_answers_not_the_hidden_one(
        release: Path, tmp_path: Path) -> None:
    """Answer cells as the student left them, test cells as written (what nbgrader grades)."""
    assert sorted(PACKAGE_ANSWERS) == NAMES, "every assignment needs an answer taken from the " \
                                             "package here"
    notebooks = {}
    for name in NAMES:
        stub = next(c.source for c in nbformat.read(release / f"{name}.ipynb", as_version=4).cells
                    if nbgrader_meta(c)["grade_id"] == f"{name}-answer")
        notebooks[f"{name}-solution"] = source(name)
        notebooks[f"{name}-stub"] = answered(source(name), stub)
        notebooks[f"{name}-package"] = answered(source(name), PACKAGE_ANSWERS[name])
    ran = run_cells(notebooks, tmp_path)
    for name in NAMES:
        tests = [nbgrader_meta(c)["grade_id"] for c in source(name).cells
                 if nbgrader_meta(c).get("grade")]  # in order; the hidden one last
        assert all(ran[f"{name}-solution"].values()), f"{name}: {ran[f'{name}-solution']}"
        assert not any(ran[f"{name}-stub"][test] for test in tests), name
        package = [ran[f"{name}-package"][test] for test in tests]
        assert all(package[:-1]) and not package[-1], f"{name}: {package}"


@pytest.mark.pipeline
def test_grading_a_folder_gives_full_fewer_and_no_marks(release: Path, tmp_path: Path) -> None:
    """As `make grade` runs it: a folder per student (any file name) or <student>.ipynb."""
    name, other = "ch1-ex-conv-path", "ch6-ex-shift"
    student = nbformat.read(release / f"{name}.ipynb", as_version=4)
    wrong = "def conv_path_length(n, kernel_size):\n    return (n - 1) // (kernel_size // 2)"
    folder = tmp_path / "submissions"
    submissions = {
        "full/my answer.ipynb": source(name),  # the instructor's solution, renamed
        "full/shift.ipynb": source(other),
        "wrong.ipynb": answered(student, wrong),  # floor, not ceiling: passes the hand-worked test
        "stub/download/ch1.ipynb": student,
        "package.ipynb": answered(student, PACKAGE_ANSWERS[name]),
    }
    for path, notebook in submissions.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, folder / path)
    (folder / "notes.ipynb").write_text("not a notebook")  # reported and skipped
    done = subprocess.run([sys.executable, str(REPO / "tools" / "grade.py"), str(folder),
                           "--work", str(tmp_path / "grading")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = list(csv.DictReader(Path(done.stdout.strip().splitlines()[-1]).open()))
    score = {(row["student_id"], row["assignment"]): (float(row["score"]), float(row["max_score"]))
             for row in rows}
    assert set(score) == {(s, a) for s in ("full", "wrong", "stub", "package")
                          for a in (name, other)}
    top = score["full", name][1]
    assert top > 0 and score["full", name][0] == top and score["full", other][0] == top
    assert 0 < score["wrong", name][0] < top
    assert 0 < score["package", name][0] < top
    assert score["stub", name][0] == 0 and score["wrong", other][0] == 0  # nothing handed in
