"""What users import: load a finished run, or compile with kernelopt's substitutions."""
