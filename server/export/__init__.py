"""Lessons that travel without a server, animations for slides, and handouts to print.

- ``bundle``: the page (index.html, its style and its ES module graph) as one HTML text
  with data embedded, that opens from ``file://``
- ``lesson``: a trace config (a preset or a setup file) -> that file
- ``browser``: a headless Chromium driven over its DevTools pipe (no dependency)
- ``animation``: a step range as a GIF or a WebM, drawn by the page in that browser
- ``handout``: a printable PDF, a page per phase (or step), printed by the page in that browser
- ``command``: ``convscope export`` (a lesson file, an animation or a handout, by the output's name)
"""

from .bundle import BundleError, inline_page
from .lesson import lesson_html, write_lesson

__all__ = ["BundleError", "inline_page", "lesson_html", "write_lesson"]
