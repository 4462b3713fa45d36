"""The catalogue as Markdown: ``python -m convcore.mistakes.document > docs/mistakes.md``
(a test keeps docs/mistakes.md equal to this output)."""

from __future__ import annotations

from .catalogue import MISTAKES
from .conventions import CONVENTIONS

__all__ = ["catalogue_markdown"]

INTRO = """# The mistakes catalogue

Generated from `convcore.mistakes` by `python -m convcore.mistakes.document`; do not edit
by hand. Each mistake is written once, in `convcore/mistakes/in_<convention>.py`, as the
plain loops of a correct naive layer (`convcore/mistakes/plain_loops.py`) with exactly
one step changed; `convcore/mistakes/code.py` calls them in the convention's own form
(the functions or the layer class a student writes). "Shows" says when an
output differs from the truth (for inputs in general position); an *exact* condition is
also necessary, a *sufficient* one says in its words where the mistake can still hide.
The smallest setup is the one the grader's shrinking cannot make smaller: no
one-step-smaller setup shows the mistake.

Every Conv2d mistake is also a lesson: a trace request with `"mistake": "<id>"` traces
the mistaken code step by step beside the truth (the same loops, recording their steps),
and `GET /api/mistakes` lists each with its smallest
setup as a ready request and the step where its trace first diverges
(docs/grader.md, "The mistakes lab"; docs/trace-format.md, "Mistake traces").

The ConvTranspose2d mistakes (`--convention torch-transposed`, which `--convention
torch` picks for a file defining `conv_transpose2d_forward` / `_backward`) are the
plain loops of a naive transposed layer (`convcore/mistakes/transposed_loops.py`, the
scatter: each input cell stamps x·w onto the output) with one step changed. The grader
names them; the lab does not trace them, since the page and the trace engine know
Conv2d only (`convcore.mistakes.lab_mistakes()` is the lab's list). Conv1d
(`torch-conv1d`) has no catalogued mistakes yet: the grader reports its failures with
their facts, naming none.
"""


# public course code read for the catalogue's sources (repository, file, what it showed);
# cited, never copied
READ = (
    (
        "Clarence-G/learngit",
        "cs231n/assignment2/conv1.py",
        "a naive CS231n layer whose window slice strides the rows and the columns alike: "
        "the slice `column_stride_missing` leaves the columns' stride out of",
    ),
    (
        "DameDollaForThree/CS231n-assignment2",
        "cs231n/layers.py",
        "the assignment's starter as a student hands it in: `conv_backward_naive` starts from "
        "`dx, dw, db = None, None, None`, and the functions its student left unfinished (spatial "
        "batch norm) still return the starter's None (`dx_unfinished`, `dw_unfinished`)",
    ),
)


def catalogue_markdown() -> str:
    lines = [INTRO]
    for name, convention in CONVENTIONS.items():
        entries = [m for m in MISTAKES.values() if m.convention == name]
        if not entries:
            continue  # (a convention with none catalogued yet: the intro says so)
        lines.append(f"## {convention.title} (`--convention {name}`)\n")
        for m in entries:
            lines.append(f"### `{m.id}`: {m.title}\n")
            lines.append(f"- Wrong: {m.wrong}")
            lines.append(f"- Should: {m.should}")
            lines.append(f"- Source: {m.source}")
            for output, condition in m.conditions.items():
                how = "exact" if condition.exact else "sufficient"
                lines.append(f"- Shows in `{output}` ({how}): {condition.words}")
            lines.append(f"- Smallest setup: {m.setup.describe()}\n")
    lines.append("## Public course code read\n")
    lines.append("Read for the sources above, cited and not copied:\n")
    lines.extend(f"- {repo}, `{path}`: {what}." for repo, path, what in READ)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(catalogue_markdown(), end="")
