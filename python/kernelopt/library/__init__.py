"""The kernel library on the Python side: the fingerprint definition (fingerprint.py), reading
a library file and substituting its kernels into an Inductor output module (substitute.py), and
the torch.compile backend (backend.py). The C++ engine writes library files (src/store/library.hpp)."""
