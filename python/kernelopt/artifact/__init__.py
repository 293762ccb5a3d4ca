"""What a compiled model (or a kernel file) is made of, read with `ast`: an Inductor output module's
kernels, launch sites and buffers (inductor.py), a standalone Triton file's (triton_file.py), and the
facts about a kernel's source that gate 1 reads (static.py). No torch needed to import any of them."""
