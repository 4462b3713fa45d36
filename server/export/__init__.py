"""Lessons that travel without a server.

- ``bundle``: the page (index.html, its style and its ES module graph) as one HTML text
  with data embedded, that opens from ``file://``
- ``lesson``: a trace config (a preset or a setup file) -> that file, and the
  ``convscope export`` command
"""

from .bundle import BundleError, inline_page
from .lesson import lesson_html, write_lesson

__all__ = ["BundleError", "inline_page", "lesson_html", "write_lesson"]
