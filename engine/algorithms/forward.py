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
from ..registry import Param, Requirements, Traits, register_algorithm
from ..trace import Recorder
from .common import Solution, emit_stop
from .greedy import PathConfig, greedy_path
from .params import DELTA, EPSILON, MAX_REPLACEMENTS, REPLACEMENT
from .replacement import post_process


def _needs_an_end(k, params) -> None:
    if k is None and params.get("delta") is None and params.get("epsilon") is None:
        raise ValueError("give k or a stopping threshold (delta / epsilon)")


_FORWARD = Requirements(check=_needs_an_end)


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
    cfg = PathConfig(rule=rule, k=k, delta=delta, epsilon=epsilon)
    solution, state = greedy_path(objective, rec, cfg)
    if replacement != "none":
        state, reason = post_process(
            state,
            rec,
            variant=replacement,
            max_replacements=max_replacements,
            reason=solution.stop_reason,
        )
        solution = Solution.of(state, reason)
    emit_stop(rec, state, solution.stop_reason)
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
    requires=_FORWARD,
    traits=Traits(
        forward_rule="obj",
        rule_param="selection",
        path="prefix",
        path_param="replacement",
        compare=True,
    ),
)
def forward_obj(objective, rec, *, k, rng, selection, delta, replacement, max_replacements):
    """Fully corrective forward greedy selection.

    Parameters
    ----------
    objective : Objective
    rec : Recorder
        Receives one ``add`` per step (``swap``/``check`` from replacement steps), then ``stop``.
    k : int or None
        Stop at k features.
    rng : numpy.random.Generator
        Unused.
    selection : {"obj", "quad"}
        Forward score: exact one-coordinate objective drop, or its quadratic approximation.
    delta : float or None
        Stop when the best forward score falls below it.
    replacement : {"none", "full", "simple"}
        Replacement steps after the forward phase (Shalev-Shwartz et al., Algorithm 4).
    max_replacements : int or None
        Most replacement steps (default 10k).

    Returns
    -------
    Solution
        The final support, refitted.

    References
    ----------
    Zhang (2008), Figure 1; Shalev-Shwartz, Srebro & Zhang (2010), Algorithm 3.
    """
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
    requires=_FORWARD,
    traits=Traits(forward_rule="gdt", path="prefix", path_param="replacement", compare=True),
)
def omp(objective, rec, *, k, rng, epsilon, replacement, max_replacements):
    """Orthogonal matching pursuit (Forward-gdt): add the largest |gradient|, refit.

    Parameters are those of :func:`forward_obj`, with ``epsilon`` (stop when the largest
    |gradient| falls below it) in place of ``selection`` and ``delta``.

    Returns
    -------
    Solution
        The final support, refitted.

    References
    ----------
    Liu et al. (2014) (Forward-gdt); Elenberg et al. (2016), Algorithm 3.
    """
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
    requires=_FORWARD,
    traits=Traits(forward_rule="refit", path="prefix", path_param="replacement"),
)
def stepwise(objective, rec, *, k, rng, delta, replacement, max_replacements):
    """Forward stepwise selection: add the candidate whose full refit lowers Q most.

    Parameters are those of :func:`forward_obj` without ``selection``; ``delta`` bounds the
    exact refit gain.

    Returns
    -------
    Solution
        The final support, refitted.

    References
    ----------
    Elenberg et al. (2016), Algorithm 2.
    """
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
    # Replacement steps always run (``variant`` has no "none"): the answer at k is not the
    # path's k-th prefix.
    traits=Traits(forward_rule="obj", path="prefix", path_param="variant"),
)
def replacement(objective, rec, *, k, rng, variant, max_replacements):
    """Fully corrective greedy to k features, then replacement steps.

    Parameters
    ----------
    objective, rec, rng
        As in :func:`forward_obj`.
    k : int
        Support size kept throughout the replacements.
    variant : {"full", "simple"}
        Algorithm 4 proper, or its gradient / smallest-weight swap.
    max_replacements : int or None
        Most replacement steps (default 10k).

    Returns
    -------
    Solution
        The support after the last accepted swap, refitted.

    References
    ----------
    Shalev-Shwartz, Srebro & Zhang (2010), Algorithms 3 and 4 (Theorem 2.9).
    """
    return forward_run(
        objective, rec, k=k, rule="obj", replacement=variant, max_replacements=max_replacements
    )
