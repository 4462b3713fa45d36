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

from .grading import check, grade
from .report import Report

__all__ = ["Report", "check", "grade"]
