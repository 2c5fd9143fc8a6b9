"""How stable is a selection, in Chromium: from the data set page's form to the stability
page (progress, then the path, the heatmap and the methods), and a heatmap cell's click to
that feature's 'why not' answer. Screenshots at a laptop's and a projector's size go to
test-output/screenshots."""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser_helpers import CHROMIUM, SHOTS, SIZES, api, new_page, wait_done

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed (/usr/bin/chromium)"
)


@pytest.fixture(scope="module")
def dataset(server: str) -> dict[str, Any]:
    return api(
        server,
        "POST",
        "/api/datasets/generate",
        json={
            "generator": "gaussian_regression",
            "params": {"n": 120, "d": 20, "k_true": 4, "rho": 0.5},
            "random_state": 3,
            "name": "stability demo",
        },
    )


@pytest.mark.parametrize("size", list(SIZES))
def test_from_the_data_set_page_to_the_stability_page_and_a_why_not(
    server: str, browser: Any, dataset: dict[str, Any], size: str
) -> None:
    width, height = SIZES[size]
    with new_page(browser, width, height) as page:
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.set_default_timeout(60_000)
        page.goto(f"{server}/datasets/{dataset['id']}")
        form = page.locator("#stability-form")
        assert "How stable is this selection?" in form.inner_text()
        page.fill("#st-k-max", "8")
        page.fill("#st-pairs", "10")
        page.fill("#st-compare", "omp, lasso")
        form.screenshot(path=str(SHOTS / f"browser-stability-form-{size}.png"))
        form.locator("button[type=submit]").click()
        page.wait_for_url(re.compile(r"/stability/\d+$"))
        study_id = int(page.url.rsplit("/", 1)[1])

        # The half samples finish (the page follows them, then draws the figures).
        page.wait_for_function(
            "document.getElementById('chart-stability-index')?.layout !== undefined"
            " && document.querySelector('#st-live') === null"
        )
        study = api(server, "GET", f"/api/stability/{study_id}")
        assert study["status"] == "done" and study["parts_total"] == 3 * 20
        names = page.evaluate(
            "document.getElementById('chart-stability-path').data.map((t) => t.name)"
        )
        assert "threshold π = 0.6" in names
        rows = page.locator("#st-table tbody tr").count()
        assert rows >= 20
        page.screenshot(path=str(SHOTS / f"browser-stability-page-{size}.png"), full_page=True)
        page.locator("#chart-stability-path").screenshot(
            path=str(SHOTS / f"browser-stability-path-{size}.png")
        )

        # A click on a heatmap cell: that feature's answer at that k.
        page.locator("#chart-stability-heatmap .nsewdrag").first.click()
        page.wait_for_url(re.compile(r"/why-not\?"))
        assert page.locator("#why-answer").inner_text().strip()
        page.screenshot(path=str(SHOTS / f"browser-stability-why-not-{size}.png"), full_page=True)
        assert not errors, errors


def test_the_run_page_offers_it(server: str, browser: Any, dataset: dict[str, Any]) -> None:
    run = api(
        server, "POST", "/api/runs", json={"dataset_id": dataset["id"], "algorithm": "omp", "k": 4}
    )
    wait_done(server, run["id"])
    with new_page(browser, 1366, 768) as page:
        page.set_default_timeout(60_000)
        page.goto(f"{server}/runs/{run['id']}")
        card = page.locator("#stability-run")
        card.locator("#st-run-pairs").fill("5")
        card.locator("#st-run-compare").fill("")
        card.screenshot(path=str(SHOTS / "browser-stability-run-offer-laptop.png"))
        card.locator("button[type=submit]").click()
        page.wait_for_url(re.compile(r"/stability/\d+$"))
        page.wait_for_function(
            "document.getElementById('chart-stability-path')?.layout !== undefined"
            " && document.querySelector('#st-live') === null"
        )
        assert "the run's k = 4" in page.evaluate(
            "JSON.stringify(document.getElementById('chart-stability-path').layout.annotations)"
        )
