"""ConvScope's web service: the FastAPI app, its schemas and its command line."""
