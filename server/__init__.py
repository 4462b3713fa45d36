"""ConvScope's web service: the FastAPI app (``server.app.create_app``), its schemas,
routes, settings, streaming and command line (``convscope``)."""
