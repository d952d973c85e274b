"""The conformance suite: tt-metal's own kernels, read from the installed pinned ttnn wheel, run on the
simulator and checked against numpy/torch references written from the ops' definitions.

scripts/test sets up .venv-tt (which holds the wheel) before this suite runs, so a missing wheel is an
error here, not a skip.
"""
