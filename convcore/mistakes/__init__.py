"""The mistakes catalogue: the bugs students really write in a conv layer, each with
its conditions, its smallest setup and an implementation that makes exactly it.

```python
from convcore.mistakes import MISTAKES, get_mistake, mistaken_and_true
m = get_mistake("empty_crop")
m.wrong, m.source, m.conditions["dx"].words   # what, where from, when it shows
both = mistaken_and_true(m)                    # {"mistaken": {...}, "true": {...}} on m.setup
```

Modules: ``case`` (a setup: geometry, activation, inputs; its one-step-smaller
neighbours), ``conventions`` (how cs231n / layer / torch code is called),
``catalogue`` (the entry type and registry; ``lab_mistakes``, the ones the lab traces),
``plain_steps`` and ``plain_loops`` (the correct naive loops, one overridable method per
step: the one home of the plain loops), ``transposed_loops`` (a ConvTranspose2d's),
``layer_cases`` and ``layer_conventions`` (the cases and the PyTorch-named functions of
the layers beside Conv2d: ``torch-transposed``, ``torch-conv1d``),
``code`` (those loops in each convention's calling form), ``cell_values`` (what each
mistake's code leaves in one cell: a class's wrong answer named), and one module per
convention with the mistakes made in it, each written once as the loops with one step
changed: ``in_cs231n``, ``in_layer``, ``in_torch``, ``in_transposed``.
"""

from . import in_cs231n as _cs231n  # noqa: F401  (registers the CS231n mistakes)
from . import in_layer as _layer  # noqa: F401  (registers the layer mistakes)
from . import in_torch as _torch  # noqa: F401  (registers the PyTorch-named mistakes)
from . import in_transposed as _transposed  # noqa: F401  (registers the ConvTranspose2d mistakes)
from . import layer_conventions as _layers  # noqa: F401  (registers torch-transposed and torch-conv1d)
from .case import Case, one_step_smaller
from .catalogue import (
    MISTAKES,
    Condition,
    Mistake,
    get_mistake,
    lab_mistakes,
    mistaken_and_true,
    mistakes_for,
    outcome_equal,
)
from .conventions import CONVENTIONS, OUTPUTS, Failure, Subject, get_convention

__all__ = [
    "CONVENTIONS",
    "Case",
    "Condition",
    "Failure",
    "MISTAKES",
    "Mistake",
    "OUTPUTS",
    "Subject",
    "get_convention",
    "get_mistake",
    "lab_mistakes",
    "mistaken_and_true",
    "mistakes_for",
    "one_step_smaller",
    "outcome_equal",
]
