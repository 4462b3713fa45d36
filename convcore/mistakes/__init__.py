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
``catalogue`` (the entry type and registry), and one module per convention with a
correct naive implementation and the mistakes made in it: ``naive_cs231n``,
``naive_layer``, ``naive_torch``.
"""

from . import naive_cs231n as _cs231n  # noqa: F401  (registers the CS231n mistakes)
from . import naive_layer as _layer  # noqa: F401  (registers the layer mistakes)
from . import naive_torch as _torch  # noqa: F401  (registers the PyTorch-named mistakes)
from .case import Case, one_step_smaller
from .catalogue import MISTAKES, Condition, Mistake, get_mistake, mistaken_and_true, mistakes_for, outcome_equal
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
    "mistaken_and_true",
    "mistakes_for",
    "one_step_smaller",
    "outcome_equal",
]
