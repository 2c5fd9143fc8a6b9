"""The ``foba-lab`` command line: ``select`` (features of a CSV file, optionally with k chosen
by cross-validation), ``serve`` (the web app, as ``python -m app``) and ``worker`` (a job worker
for the distributed backend).

A package of its own because it spans both sides: ``select`` runs the engine only (it never
imports the web stack), while ``serve`` and ``worker`` import ``app`` when they are run. The
engine must stay web-free, and ``app`` should not be imported to select features.
"""
