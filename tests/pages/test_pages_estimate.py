"""The run form warns of a long run before it starts (engine.estimate through HTMX)."""

from __future__ import annotations

HX = {"HX-Request": "true"}
# What the form sends (hx-include="closest form"): its own fields besides the run's settings.
FORM = "dataset_id={id}&seed=0&test_fraction=0.2&record_candidates=on&standardize=on"


def _fragment(site, query: str) -> str:
    ds = site.logistic
    url = f"/datasets/{ds['id']}/run-estimate?{FORM.format(id=ds['id'])}&{query}"
    response = site.client.get(url, headers=HX)
    assert response.status_code == 200, response.text
    assert "<html" not in response.text
    return response.text


def test_the_run_form_asks_for_the_estimate_when_a_field_changes(site) -> None:
    ds = site.logistic
    page = site.client.get(f"/datasets/{ds['id']}/run-params?algorithm=foba-obj", headers=HX)
    assert f'hx-get="/datasets/{ds["id"]}/run-estimate"' in page.text
    assert "change from:closest form" in page.text and 'hx-include="closest form"' in page.text


def test_no_sentence_for_a_small_configuration(site) -> None:
    html = _fragment(site, "algorithm=foba-obj&objective=logistic&k=3&params.path_end=auto")
    assert "predicted" not in html and "Faster" not in html


def test_the_sentence_for_a_big_configuration(site) -> None:
    html = _fragment(
        site,
        "algorithm=foba-refit&objective=logistic&k=3&params.path_end=zhang"
        "&params.max_steps=100000000&params.lam=0.0001&params.nu=0.5",
    )
    assert "This run is predicted to take about" in html
    assert "path_end = sparsity" in html and "max_steps = 6" in html
    assert "first size-k support" in html  # what the faster setting changes


def test_values_that_are_no_run_yet_show_nothing(site) -> None:
    for query in (
        "algorithm=foba-obj&k=",  # blank k: the algorithm's own stopping rule; not long here
        "algorithm=foba-obj&k=abc",
        "algorithm=foba-obj&k=999",
        "algorithm=foba-obj&k=3&params.max_steps=-4",
        "algorithm=nope",
    ):
        assert "predicted" not in _fragment(site, query), query
