"""The evidence the engine's gates decide from (src/verify/): tensor comparison with dtype-aware
tolerances (compare.py), gate 2's runs on recorded kernel launches (launches.py) and gate 3's
output-by-output comparison of two models and a float64 reference (outputs.py). Nothing here decides."""
