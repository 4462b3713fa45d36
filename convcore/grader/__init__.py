"""The grader behind ``convscope check``: find the smallest case that breaks a conv
layer's code and name the mistake.

```python
from convcore.grader import check
report = check(conv_forward_naive, conv_backward_naive)   # CS231n convention
print(report)            # per output: pass, or the smallest counterexample
report.exit_code         # 0 pass, 1 a failure, 2 could not grade
```

Modules: ``space`` (edge cases and the hypothesis strategy per convention), ``search``
(run, shrink, name), ``report`` (text, JSON, Gradescope), ``grading`` (``grade`` and
the notebook's ``check``), ``loader`` (a student's file), ``sandbox`` (the subprocess
with time and memory limits), ``command`` (the ``convscope check`` subcommand).
"""

from typing import Any

__all__ = ["Report", "check", "grade"]


def __getattr__(name: str) -> Any:
    # lazily, so that the command line can list `convscope check` without importing
    # hypothesis (the search) until a check runs
    if name in ("check", "grade"):
        from . import grading

        return getattr(grading, name)
    if name == "Report":
        from .report import Report

        return Report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
