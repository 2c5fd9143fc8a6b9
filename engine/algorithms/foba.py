"""FoBa: adaptive forward-backward greedy selection.

Zhang (2008), Figure 3, for least squares; Liu, Fujimaki & Ye (2014), Algorithm 1, for any
smooth convex loss, with forward goodness by objective drop (FoBa-obj) or |gradient|
(FoBa-gdt); and the fixed-threshold forward-backward heuristic of Zhang's Section 3.
"""

from __future__ import annotations

from ..objectives import Objective
from ..registry import Param, register_algorithm
from ..threads import blas_policy
from ..trace import Recorder
from .common import Solution, emit_stop
from .greedy import PathConfig, greedy_path
from .params import BACKWARD, DELETION_COST, DELTA, EPSILON, MAX_STEPS, NU, PATH_END

_ZHANG = "Zhang 2008, Figure 3"
_LIU = "Liu, Fujimaki & Ye 2014, Algorithm 1"


def _run(objective: Objective, rec: Recorder, cfg: PathConfig) -> Solution:
    solution, state = greedy_path(objective, rec, cfg)
    emit_stop(rec, state, solution.reason)
    return solution


def _check_stopping(k, *rules) -> None:
    if k is None and all(r is None for r in rules):
        raise ValueError("give k, or a stopping threshold, or max_steps: the path needs an end")


@register_algorithm(
    name="foba-obj",
    title="FoBa-obj",
    summary="Adaptive forward-backward greedy: add the feature whose one-coordinate move lowers "
    "the objective most, refit, then delete while a deletion costs less than nu x the gain.",
    reference=f"{_LIU} (FoBa-obj); {_ZHANG}",
    params=(BACKWARD, NU, DELTA, MAX_STEPS, DELETION_COST, PATH_END),
    k="optional",
    family="forward-backward",
)
@blas_policy
def foba_obj(
    objective, rec, *, k, rng, backward, nu, delta, max_steps, deletion_cost, path_end
) -> Solution:
    _check_stopping(k, delta, max_steps)
    cfg = PathConfig(
        rule="obj",
        backward=backward,
        k=k,
        nu=nu,
        delta=delta,
        max_steps=max_steps,
        deletion_cost=deletion_cost,
        stop_at_k=path_end == "sparsity",
    )
    return _run(objective, rec, cfg)


@register_algorithm(
    name="foba-gdt",
    title="FoBa-gdt",
    summary="Forward-backward greedy with gradient selection: add the feature of largest "
    "|gradient|, refit, delete while a deletion costs less than nu x the gain.",
    reference=f"{_LIU} (FoBa-gdt)",
    params=(BACKWARD, NU, EPSILON, MAX_STEPS, DELETION_COST, PATH_END),
    k="optional",
    family="forward-backward",
)
@blas_policy
def foba_gdt(
    objective, rec, *, k, rng, backward, nu, epsilon, max_steps, deletion_cost, path_end
) -> Solution:
    _check_stopping(k, epsilon, max_steps)
    cfg = PathConfig(
        rule="gdt",
        backward=backward,
        k=k,
        nu=nu,
        epsilon=epsilon,
        max_steps=max_steps,
        deletion_cost=deletion_cost,
        stop_at_k=path_end == "sparsity",
    )
    return _run(objective, rec, cfg)


@register_algorithm(
    name="foba-refit",
    title="FoBa (exact refit forward rule)",
    summary="Forward-backward greedy whose forward step adds the feature whose full refit "
    "lowers the objective most (forward stepwise), then deletes while a deletion costs less "
    "than nu x the gain: the FoBa baseline of Elenberg et al.",
    reference=f"Elenberg et al. 2016, Section 5 (FoBa baseline); {_ZHANG}",
    params=(BACKWARD, NU, DELTA, MAX_STEPS, DELETION_COST, PATH_END),
    k="optional",
    family="forward-backward",
)
@blas_policy
def foba_refit(
    objective, rec, *, k, rng, backward, nu, delta, max_steps, deletion_cost, path_end
) -> Solution:
    _check_stopping(k, delta, max_steps)
    cfg = PathConfig(
        rule="refit",
        backward=backward,
        k=k,
        nu=nu,
        delta=delta,
        max_steps=max_steps,
        deletion_cost=deletion_cost,
        stop_at_k=path_end == "sparsity",
    )
    return _run(objective, rec, cfg)


@register_algorithm(
    name="fb-threshold",
    title="Forward-backward, fixed threshold",
    summary="The classical heuristic: forward greedy steps, and delete a feature whenever its "
    "deletion costs less than a fixed eps_back.",
    reference="Zhang 2008, Section 3 (the heuristic 'as implemented in SAS')",
    params=(
        Param(
            "eps_back",
            "float",
            None,
            "Fixed backward threshold on the objective increase (Zhang uses 10 on Boston "
            "Housing's squared-error scale).",
            minimum=0.0,
            exclusive_minimum=True,
            required=True,
        ),
        DELTA,
        MAX_STEPS,
    ),
    k="optional",
    family="forward-backward",
)
@blas_policy
def fb_threshold(objective, rec, *, k, rng, eps_back, delta, max_steps) -> Solution:
    _check_stopping(k, delta, max_steps)
    cfg = PathConfig(
        rule="obj", backward="fixed", k=k, eps_back=eps_back, delta=delta, max_steps=max_steps
    )
    return _run(objective, rec, cfg)
