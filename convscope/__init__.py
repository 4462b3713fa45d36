"""ConvScope for notebooks and scripts: ``from convscope import show``.

    lesson = show(x, w, b, stride=2, padding=1)   # the player, inline and offline
    lesson.trace().tensors["dw"]                  # the trace as NumPy arrays

The numerical core is ``convcore``; the service and the page are ``server``.
"""

from convcore import __version__

from .notebook import Lesson, LessonTrace, show

__all__ = ["Lesson", "LessonTrace", "show", "__version__"]
