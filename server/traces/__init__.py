"""Traces as a service builds them: a request's sizes checked before anything is
allocated (``input_sizes``), resolved and costed (``prepare``), built in a slot
(``build_slots``), shared by identical requests (``shared_builds``) and streamed
(``streaming``); the named lessons (``presets``) and "compare your numbers"."""
