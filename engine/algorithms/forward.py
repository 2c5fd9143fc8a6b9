"""Forward selection: fully corrective greedy, OMP, forward stepwise, and replacement steps.

``forward-obj``: Zhang 2008 Figure 1 = Shalev-Shwartz et al. 2010 Algorithm 3 (fully corrective
forward greedy): add the feature whose one-coordinate move lowers the objective most, refit on
the support. Its quadratic-approximation selection rule (Section 2.3) is an option.
``omp``: Forward-gdt / generalised OMP (Elenberg et al. 2016 Algorithm 3): largest |gradient|.
``stepwise``: forward stepwise (Elenberg et al. Algorithm 2): the candidate whose full refit
lowers the objective most.
``replacement``: fully corrective greedy to k, then Algorithm 4 of Shalev-Shwartz et al.
"""

from __future__ import annotations

from ..objectives import Objective
from ..registry import Param, register_algorithm
from ..threads import blas_policy
from ..trace import Recorder
from .common import Solution, emit_stop
from .greedy import PathConfig, greedy_path
from .params import DELTA, EPSILON, MAX_REPLACEMENTS, REPLACEMENT
from .replacement import post_process


def forward_run(
    objective: Objective,
    rec: Recorder,
    *,
    k: int | None,
    rule: str,
    delta: float | None = None,
    epsilon: float | None = None,
    replacement: str = "none",
    max_replacements: int | None = None,
) -> Solution:
    if k is None and delta is None and epsilon is None:
        raise ValueError("give k or a stopping threshold (delta / epsilon)")
    cfg = PathConfig(rule=rule, k=k, delta=delta, epsilon=epsilon)
    solution, state = greedy_path(objective, rec, cfg)
    if replacement != "none":
        state, reason = post_process(
            state,
            rec,
            variant=replacement,
            max_replacements=max_replacements,
            reason=solution.reason,
        )
        solution = Solution.of(state, reason)
    emit_stop(rec, state, solution.reason)
    return solution


@register_algorithm(
    name="forward-obj",
    title="Forward greedy (fully corrective)",
    summary="Add the feature whose one-coordinate move lowers the objective most, refit on all "
    "selected features; never delete.",
    reference="Zhang 2008, Figure 1; Shalev-Shwartz, Srebro & Zhang 2010, Algorithm 3",
    params=(
        Param(
            "selection",
            "str",
            "obj",
            "obj: exact one-coordinate objective drop; quad: the quadratic approximation "
            "(Shalev-Shwartz et al. Section 2.3).",
            choices=("obj", "quad"),
        ),
        DELTA,
        REPLACEMENT,
        MAX_REPLACEMENTS,
    ),
    k="optional",
    family="forward",
)
@blas_policy
def forward_obj(objective, rec, *, k, rng, selection, delta, replacement, max_replacements):
    return forward_run(
        objective,
        rec,
        k=k,
        rule=selection,
        delta=delta,
        replacement=replacement,
        max_replacements=max_replacements,
    )


@register_algorithm(
    name="omp",
    title="OMP (Forward-gdt)",
    summary="Orthogonal matching pursuit: add the feature of largest |gradient|, refit on all "
    "selected features.",
    reference="Liu et al. 2014 (Forward-gdt); Elenberg et al. 2016, Algorithm 3",
    params=(EPSILON, REPLACEMENT, MAX_REPLACEMENTS),
    k="optional",
    family="forward",
)
@blas_policy
def omp(objective, rec, *, k, rng, epsilon, replacement, max_replacements):
    return forward_run(
        objective,
        rec,
        k=k,
        rule="gdt",
        epsilon=epsilon,
        replacement=replacement,
        max_replacements=max_replacements,
    )


@register_algorithm(
    name="stepwise",
    title="Forward stepwise",
    summary="Add the feature whose full refit lowers the objective most (exact for least "
    "squares by rank-one algebra; warm-started refits otherwise).",
    reference="Elenberg et al. 2016, Algorithm 2",
    params=(DELTA, REPLACEMENT, MAX_REPLACEMENTS),
    k="optional",
    family="forward",
)
@blas_policy
def stepwise(objective, rec, *, k, rng, delta, replacement, max_replacements):
    return forward_run(
        objective,
        rec,
        k=k,
        rule="refit",
        delta=delta,
        replacement=replacement,
        max_replacements=max_replacements,
    )


@register_algorithm(
    name="replacement",
    title="Fully corrective greedy + replacement steps",
    summary="Fully corrective forward greedy to k features, then swap features in and out "
    "while a swap lowers the objective.",
    reference="Shalev-Shwartz, Srebro & Zhang 2010, Algorithms 3 and 4 (Theorem 2.9)",
    params=(
        Param(
            "variant",
            "str",
            "full",
            "full: Algorithm 4 (refit on support + best feature, drop the smallest weight); "
            "simple: swap largest |gradient| in, smallest |weight| out.",
            choices=("full", "simple"),
        ),
        MAX_REPLACEMENTS,
    ),
    k="required",
    family="forward",
)
@blas_policy
def replacement(objective, rec, *, k, rng, variant, max_replacements):
    return forward_run(
        objective, rec, k=k, rule="obj", replacement=variant, max_replacements=max_replacements
    )
