"""The API: one router per resource (``/api/trace``, ``/api/lesson``, ``/api/meta``...) and
the schemas of their bodies (``schemas``). A router checks, then hands the work to
``convscope.traces``."""
