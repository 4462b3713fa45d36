"""The grader's defaults, in one place (the command line shows them in its help)."""

DEFAULT_EXAMPLES = 60  # cases hypothesis draws after the edge cases
CALL_SECONDS = 10.0  # the time one call of the checked code may take
TIME_LIMIT = 60.0  # seconds for a whole `convscope check`
MEMORY_MB = 1024  # address space of the checking subprocess
