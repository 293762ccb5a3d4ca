"""The Coder's built-in rewrite families (rewrite.py): candidate kernel sources made from a kernel's
own text, for the engine's gates to judge."""
