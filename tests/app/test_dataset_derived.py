"""The data set page's column summaries are derived from the stored arrays once
(app/services/datasets.py keeps them) and its preview reads only the rows it shows: later pages
load no whole array, and what they show is what a fresh computation shows."""

from __future__ import annotations

from app.services import datasets as dataset_service


def test_summaries_and_rows_are_read_once(client, monkeypatch) -> None:
    body = {"generator": "gaussian_regression", "params": {"n": 40, "d": 5}}
    dataset_id = client.post("/api/datasets/generate", json=body).json()["id"]
    first_page = client.get(f"/datasets/{dataset_id}")
    first_preview = client.get(f"/api/datasets/{dataset_id}/preview?limit=7").json()
    first = client.get(f"/api/datasets/{dataset_id}").json()
    store = client.app.state.store
    loads: list[object] = []
    real = type(store).load

    def counting(self, *args, **kwargs):
        loads.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(store), "load", counting)
    again = client.get(f"/datasets/{dataset_id}")
    assert again.status_code == first_page.status_code == 200
    assert client.get(f"/api/datasets/{dataset_id}/preview?limit=7").json() == first_preview
    assert client.get(f"/api/datasets/{dataset_id}").json() == first
    assert loads == []  # no whole array read again (the preview reads its rows only)
    assert len(first_preview["rows"]) == 7
    other = client.get(f"/api/datasets/{dataset_id}/preview?offset=7&limit=3").json()
    assert loads == [] and len(other["rows"]) == 3


def test_a_deleted_data_sets_kept_derivations_name_nothing_new(client) -> None:
    body = {"generator": "gaussian_regression", "params": {"n": 40, "d": 5}}
    first = client.post("/api/datasets/generate", json=body).json()["id"]
    client.get(f"/datasets/{first}")
    assert client.delete(f"/api/datasets/{first}").status_code == 204
    body["params"] = {"n": 50, "d": 7}
    second = client.post("/api/datasets/generate", json=body).json()["id"]
    shown = client.get(f"/api/datasets/{second}/preview").json()
    assert len(shown["columns"]) == 8 and all(len(row) == 8 for row in shown["rows"])
    assert len(dataset_service._kept) <= dataset_service.MAX_KEPT
