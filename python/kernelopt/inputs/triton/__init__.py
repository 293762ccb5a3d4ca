"""A standalone Triton kernel file (`"input_kind": "triton"`): loaded and its launches captured
(session.py), the ops run on them (ops.py); its text is read by artifact/triton_file.py."""
