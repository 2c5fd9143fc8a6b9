"""FoBa: adaptive forward-backward greedy selection.

Zhang (2008), Figure 3, for least squares; Liu, Fujimaki & Ye (2014), Algorithm 1, for any
smooth convex loss, with forward goodness by objective drop (FoBa-obj) or |gradient|
(FoBa-gdt); and the fixed-threshold forward-backward heuristic of Zhang's Section 3.
"""

from __future__ import annotations

from ..objectives import Objective
from ..registry import Param, Requirements, Traits, register_algorithm
from ..trace import Recorder
from .common import Solution, emit_stop, size_cap
from .greedy import PathConfig, greedy_path
from .params import BACKWARD, DELETION_COST, DELTA, EPSILON, MAX_STEPS, NU, PATH_END

_ZHANG = "Zhang 2008, Figure 3"
_LIU = "Liu, Fujimaki & Ye 2014, Algorithm 1"


def _run(objective: Objective, rec: Recorder, cfg: PathConfig) -> Solution:
    solution, state = greedy_path(objective, rec, cfg)
    emit_stop(rec, state, solution.stop_reason)
    return solution


def _foba(objective, rec, rule: str, *, path_end: str, **settings) -> Solution:
    """A FoBa path with the forward ``rule``; ``settings`` are PathConfig fields."""
    cfg = PathConfig(rule=rule, size_cap=size_cap(settings.get("k"), path_end), **settings)
    return _run(objective, rec, cfg)


def _needs_an_end(k, params) -> None:
    if k is None and all(params.get(p) is None for p in ("delta", "epsilon", "max_steps")):
        raise ValueError("give k, or a stopping threshold, or max_steps: the path needs an end")


_FOBA = Requirements(check=_needs_an_end)


@register_algorithm(
    name="foba-obj",
    title="FoBa-obj",
    summary="Adaptive forward-backward greedy: add the feature whose one-coordinate move lowers "
    "the objective most, refit, then delete while a deletion costs less than nu x the gain.",
    reference=f"{_LIU} (FoBa-obj); {_ZHANG}",
    params=(BACKWARD, NU, DELTA, MAX_STEPS, DELETION_COST, PATH_END),
    k="optional",
    family="forward-backward",
    requires=_FOBA,
    traits=Traits(
        forward_rule="obj",
        deletion="no-refit",
        deletion_param="deletion_cost",
        backward_param="backward",
        path="best-k",
        default=True,
        compare=True,
    ),
)
def foba_obj(
    objective, rec, *, k, rng, backward, nu, delta, max_steps, deletion_cost, path_end
) -> Solution:
    """FoBa-obj: adaptive forward-backward greedy with the objective-drop forward rule.

    Parameters
    ----------
    objective : Objective
        The loss Q; any registered objective.
    rec : Recorder
        Receives ``add``, ``remove`` and ``check`` events, then ``stop``.
    k : int or None
        Target support size. The path may grow past k (a wrong feature can only be dropped
        after the right one came in); the answer is the best size-k support along it.
    rng : numpy.random.Generator
        Unused (the method is deterministic).
    backward : {"standard", "conservative", "aggressive"}
        The deletion threshold rule (module ``greedy``).
    nu : float in (0, 1]
        Backward ratio; Zhang uses 0.5.
    delta : float or None
        Stop when the best forward objective drop falls below it.
    max_steps : int or None
        Add/remove steps in the path (default 5k).
    deletion_cost : {"fixed", "refit"}
        The backward step's price of a deletion: zeroing the coefficient with the others held
        (both papers' algorithm boxes), or the increase after refitting the rest (Zhang's R
        package ``foba``). The intercept is re-optimised in both.
    path_end : {"auto", "zhang", "sparsity"}
        auto (default): Zhang's path, stopped once it holds k + max(5, ceil(k/10)) features
        (the help of ``PATH_END`` says why this keeps Zhang's answer and how it was measured);
        zhang: the full path of max_steps steps, the best size-k support along it; sparsity:
        stop as soon as the path holds k features (Liu et al. 2014, Appendix D).

    Returns
    -------
    Solution
        The best size-k support along the path, refitted (the last support without k).

    References
    ----------
    Zhang (2008), Figure 3; Liu, Fujimaki & Ye (2014), Algorithm 1.
    """
    return _foba(
        objective,
        rec,
        "obj",
        backward=backward,
        k=k,
        nu=nu,
        delta=delta,
        max_steps=max_steps,
        deletion_cost=deletion_cost,
        path_end=path_end,
    )


@register_algorithm(
    name="foba-gdt",
    title="FoBa-gdt",
    summary="Forward-backward greedy with gradient selection: add the feature of largest "
    "|gradient|, refit, delete while a deletion costs less than nu x the gain.",
    reference=f"{_LIU} (FoBa-gdt)",
    params=(BACKWARD, NU, EPSILON, MAX_STEPS, DELETION_COST, PATH_END),
    k="optional",
    family="forward-backward",
    requires=_FOBA,
    traits=Traits(
        forward_rule="gdt",
        deletion="no-refit",
        deletion_param="deletion_cost",
        backward_param="backward",
        path="best-k",
        compare=True,
    ),
)
def foba_gdt(
    objective, rec, *, k, rng, backward, nu, epsilon, max_steps, deletion_cost, path_end
) -> Solution:
    """FoBa-gdt: FoBa with the |gradient| forward rule.

    Parameters are those of :func:`foba_obj`, with ``epsilon`` (stop when the largest
    |gradient| falls below it) in place of ``delta``.

    Returns
    -------
    Solution
        The best size-k support along the path, refitted.

    References
    ----------
    Liu, Fujimaki & Ye (2014), Algorithm 1 (FoBa-gdt).
    """
    return _foba(
        objective,
        rec,
        "gdt",
        backward=backward,
        k=k,
        nu=nu,
        epsilon=epsilon,
        max_steps=max_steps,
        deletion_cost=deletion_cost,
        path_end=path_end,
    )


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
    requires=_FOBA,
    traits=Traits(
        forward_rule="refit",
        deletion="no-refit",
        deletion_param="deletion_cost",
        backward_param="backward",
        path="best-k",
    ),
)
def foba_refit(
    objective, rec, *, k, rng, backward, nu, delta, max_steps, deletion_cost, path_end
) -> Solution:
    """FoBa with forward stepwise's exact refit gain as its forward rule.

    Parameters are those of :func:`foba_obj`; ``delta`` bounds the exact refit gain.

    Returns
    -------
    Solution
        The best size-k support along the path, refitted.

    References
    ----------
    Elenberg et al. (2016), Section 5 (their FoBa baseline); Zhang (2008), Figure 3.
    """
    return _foba(
        objective,
        rec,
        "refit",
        backward=backward,
        k=k,
        nu=nu,
        delta=delta,
        max_steps=max_steps,
        deletion_cost=deletion_cost,
        path_end=path_end,
    )


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
    requires=_FOBA,
    traits=Traits(forward_rule="obj", deletion="no-refit", path="best-k"),
)
def fb_threshold(objective, rec, *, k, rng, eps_back, delta, max_steps) -> Solution:
    """The forward-backward heuristic with a fixed backward threshold.

    Parameters
    ----------
    objective, rec, k, rng, delta, max_steps
        As in :func:`foba_obj`.
    eps_back : float
        Delete a feature whenever its deletion cost (no refit) is below this constant.

    Returns
    -------
    Solution
        The best size-k support along the path, refitted. The path stops when it would cycle
        (add and at once delete the same feature), as SAS does.

    References
    ----------
    Zhang (2008), Section 3.
    """
    cfg = PathConfig(
        rule="obj", backward="fixed", k=k, eps_back=eps_back, delta=delta, max_steps=max_steps
    )
    return _run(objective, rec, cfg)
