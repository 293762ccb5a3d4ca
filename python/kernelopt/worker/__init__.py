"""The GPU-side worker: a JSON-lines server the C++ engine drives (see server.py)."""
