"""The device side shared by every input kind: loading and launching Triton kernels, on a GPU or under
Triton's interpreter, with launch-argument copies that keep layout and aliasing (kernels.py); timing
(timing.py); the versions and device facts every answer carries (info.py)."""
