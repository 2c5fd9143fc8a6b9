"""Parameter descriptions shared by several algorithms (one definition each)."""

from __future__ import annotations

from ..registry import Param

NU = Param(
    "nu",
    "float",
    0.5,
    "Backward ratio: delete while the deletion cost is below nu times the forward gain "
    "(Zhang 2008 uses 0.5).",
    minimum=0.0,
    maximum=1.0,
    exclusive_minimum=True,
)
BACKWARD = Param(
    "backward",
    "str",
    "standard",
    "Backward rule: standard (nu x the gain when the support last grew to its size), "
    "conservative (nu x the smallest forward gain so far), aggressive (the phase's cumulative "
    "cost against nu x the gains it undoes).",
    choices=("standard", "conservative", "aggressive"),
)
DELTA = Param(
    "delta",
    "float",
    None,
    "Stop when the best forward objective drop is below delta (Liu et al., FoBa-obj).",
    minimum=0.0,
    exclusive_minimum=True,
    nullable=True,
)
EPSILON = Param(
    "epsilon",
    "float",
    None,
    "Stop when the largest |gradient| is below epsilon (Liu et al., FoBa-gdt).",
    minimum=0.0,
    exclusive_minimum=True,
    nullable=True,
)
MAX_STEPS = Param(
    "max_steps",
    "int",
    None,
    "Number of add/remove steps in the path (default 5k, Zhang's path length).",
    minimum=1,
    nullable=True,
)
REPLACEMENT = Param(
    "replacement",
    "str",
    "none",
    "Post-process with replacement steps (Shalev-Shwartz et al., Algorithm 4): full refit on "
    "support + best feature then drop the smallest weight, or the simple gradient / "
    "smallest-weight swap.",
    choices=("none", "full", "simple"),
)
MAX_REPLACEMENTS = Param(
    "max_replacements",
    "int",
    None,
    "Most replacement steps to try (default 10k).",
    minimum=1,
    nullable=True,
)
PATH_END = Param(
    "path_end",
    "str",
    "auto",
    "Where the path ends when k is given. auto (default): Zhang's path, stopped before it "
    "would grow past k + max(5, ceil(k/10)) features; the answer is the best size-k support "
    "along it. Why it keeps Zhang's answer: the path's moves do not depend on where it ends, "
    "so it is the start of Zhang's path, and the answer could differ only if that path came "
    "back to k from beyond the cap. A return to k from s features takes s - k deletions, each "
    "cheaper than nu times the gain that last grew the path to its size, and those gains "
    "shrink as the path grows. Measured (bench/path_end.py: every generator at its paper's "
    "setting, several seeds, the bundled tables, least squares and logistic): auto gave "
    "Zhang's support and objective in 1016 of 1016 paths; the returns to k that improved the "
    "answer (47 of 508 FoBa paths) came from at most 2 features past k (3 in one more path on "
    "Zhang's setting with decoys correlated 0.9), so the cap leaves a margin of 2 or more. "
    "Not a proof: a path that came back from further would be answered by its best size-k "
    "support before the cap. It costs 1.2x sparsity's time at k = 40-50 and up to 2x at "
    "k = 5, against 3-5x for zhang. zhang: the full path of max_steps (default 5k) steps, "
    "for reproductions; sparsity: stop as soon as the path holds k features (Liu et al. 2014, "
    "App. D), the answer is that first size-k support: fastest, and it missed Zhang's better "
    "support in 15 of 160 paths. Lasso paths: auto stops at the first path point past the "
    "same cap.",
    choices=("auto", "zhang", "sparsity"),
)
DELETION_COST = Param(
    "deletion_cost",
    "str",
    "fixed",
    "Backward step's cost of deleting a feature. fixed: the objective increase of zeroing its "
    "coefficient with the others held (both papers' algorithm boxes); refit: the increase "
    "after refitting the remaining features (Zhang's R package foba).",
    choices=("fixed", "refit"),
)
