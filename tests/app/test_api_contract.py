"""The OpenAPI schema (the contract for other services), the catalog routes, health and the
API key; and a check that every route in the schema has a test."""

from __future__ import annotations

import importlib

import pytest
from openapi_spec_validator import validate
from service_helpers import make_settings, serve

import engine

# A test that exercises each operation of the schema.
COVERED = {
    "test_exports::test_the_prepared_data_set_and_its_column_mapping": [
        ("get", "/api/datasets/{dataset_id}/export")
    ],
    "test_exports::test_a_run_exports_one_table_per_file": [("get", "/api/cv/{cv_id}/export")],
    "test_api_contract::test_healthz_reports_database_and_workers": [("get", "/healthz")],
    "test_api_contract::test_algorithms_come_from_the_registry": [("get", "/api/algorithms")],
    "test_api_contract::test_objectives_come_from_the_registry": [("get", "/api/objectives")],
    "test_api_datasets::test_generate_lists_and_uses_the_engine_generators": [
        ("get", "/api/generators"),
        ("post", "/api/datasets/generate"),
    ],
    "test_api_datasets::test_list_and_preview": [
        ("get", "/api/datasets"),
        ("get", "/api/datasets/{dataset_id}/preview"),
    ],
    "test_api_datasets::test_upload_stores_arrays_in_a_server_named_file": [
        ("post", "/api/datasets"),
    ],
    "test_api_datasets::test_show_summarises_every_column": [
        ("get", "/api/datasets/{dataset_id}"),
    ],
    "test_api_datasets::test_delete_removes_row_file_and_finished_runs": [
        ("delete", "/api/datasets/{dataset_id}"),
    ],
    "test_api_datasets::test_patch_renames_and_describes_a_dataset": [
        ("patch", "/api/datasets/{dataset_id}"),
    ],
    "test_api_lessons::test_a_lesson_exported_and_imported_asks_the_same_questions": [
        ("get", "/api/lessons/questions"),
        ("post", "/api/lessons"),
        ("get", "/api/lessons"),
        ("get", "/api/lessons/{lesson_id}/export"),
        ("post", "/api/lessons/import"),
    ],
    "test_api_lessons::test_a_lesson_checks_its_steps_against_the_trace": [
        ("get", "/api/lessons/{lesson_id}"),
        ("delete", "/api/lessons/{lesson_id}"),
    ],
    "test_api_runs::test_list_runs_filters": [("get", "/api/runs")],
    "test_api_runs::test_rerun_builds_the_new_run_from_the_stored_one": [
        ("post", "/api/runs/{run_id}/rerun")
    ],
    "test_api_runs::test_patch_names_notes_and_tags_a_run": [("patch", "/api/runs/{run_id}")],
    "test_api_runs::test_delete_refuses_an_active_run_then_deletes_it_with_its_trace": [
        ("delete", "/api/runs/{run_id}"),
        ("post", "/api/comparisons/from-runs"),
    ],
    "test_api_runs::test_submit_queues_a_run": [("post", "/api/runs")],
    "test_api_runs::test_comparison_queues_one_run_per_configuration": [
        ("post", "/api/comparisons"),
        ("get", "/api/comparisons/{comparison_id}"),
    ],
    "test_jobs_workers::test_upload_run_poll_result_for_several_algorithms": [
        ("get", "/api/runs/{run_id}"),
        ("get", "/api/runs/{run_id}/trace"),
        ("get", "/api/runs/{run_id}/export"),
        ("get", "/api/comparisons/{comparison_id}/export"),
    ],
    "test_judging::test_why_not_answers_in_place_and_refuses_large_problems": [
        ("get", "/api/runs/{run_id}/why-not/{feature}"),
    ],
    "test_jobs_workers::test_cancel_while_running": [("post", "/api/runs/{run_id}/cancel")],
    "test_api_estimate::test_a_big_configuration_gets_the_sentence_and_faster_settings": [
        ("get", "/api/datasets/{dataset_id}/estimate"),
    ],
    "test_api_cv::test_a_study_runs_its_folds_as_runs_and_matches_the_engine": [
        ("post", "/api/cv"),
        ("get", "/api/cv/{cv_id}"),
        ("post", "/api/cv/{cv_id}/final"),
    ],
    "test_api_cv::test_unknown_and_unfinished_studies": [("post", "/api/cv/{cv_id}/cancel")],
    "test_api_stability::test_a_study_runs_its_subsamples_as_runs_and_matches_the_engine": [
        ("post", "/api/stability"),
        ("get", "/api/stability/{study_id}"),
        ("get", "/api/stability/{study_id}/frequencies"),
    ],
    "test_reference_tables::test_paths_outside_the_reference_dirs_are_refused": [
        ("post", "/api/datasets/reference"),
        ("post", "/api/datasets/{dataset_id}/pass/cancel"),
    ],
    "test_api_stability::test_an_idempotency_key_returns_the_first_study_and_cancel": [
        ("post", "/api/stability/{study_id}/cancel"),
        ("get", "/api/stability/{study_id}/why-not"),
    ],
}


def test_openapi_schema_is_valid(client) -> None:
    schema = client.get("/openapi.json").json()
    validate(schema)
    upload = schema["paths"]["/api/datasets"]["post"]["requestBody"]["content"]
    assert list(upload) == ["multipart/form-data"]


def test_every_route_has_a_test(client) -> None:
    operations = {
        (method, path) for path, item in client.app.openapi()["paths"].items() for method in item
    }
    covered = {operation for listed in COVERED.values() for operation in listed}
    assert operations == covered
    for test in COVERED:
        module, name = test.split("::")
        assert callable(getattr(importlib.import_module(module), name, None)), test


def test_algorithms_come_from_the_registry(client) -> None:
    listed = client.get("/api/algorithms").json()
    assert listed == [spec.to_dict() for spec in engine.ALGORITHMS.values()]
    foba = next(a for a in listed if a["name"] == "foba-obj")
    assert foba["schema"]["additionalProperties"] is False
    assert set(foba["schema"]["properties"]) == {p["name"] for p in foba["params"]}


def test_objectives_come_from_the_registry(client) -> None:
    listed = client.get("/api/objectives").json()
    # every registered objective for feature tables; the CRF (sequences) is engine-only
    assert {o["name"]: o["task"] for o in listed} == {
        name: spec.task
        for name, spec in engine.OBJECTIVES.items()
        if spec.task in ("regression", "classification")
    }
    assert all("schema" in o for o in listed)


def test_healthz_reports_database_and_workers(client) -> None:
    health = client.get("/healthz").json()
    assert health["status"] == "ok" and health["database"] == "ok"
    assert health["jobs"] == {"backend": "inprocess", "workers": 0, "alive": 0, "pids": []}


@pytest.fixture
def keyed_client(data_dir):
    with serve(make_settings(data_dir, api_key="s3cret")) as client:
        yield client


@pytest.mark.parametrize("header", [None, "Bearer wrong", "Basic czNjcmV0", "s3cret"])
def test_api_key_is_required_when_set(keyed_client, header) -> None:
    headers = {"Authorization": header} if header else {}
    response = keyed_client.get("/api/datasets", headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert "API key" in response.json()["detail"]


def test_api_key_opens_the_api_but_health_needs_none(keyed_client) -> None:
    ok = keyed_client.get("/api/datasets", headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200
    assert keyed_client.get("/healthz").status_code == 200
    schemes = keyed_client.app.openapi()["components"]["securitySchemes"]
    assert schemes["HTTPBearer"]["scheme"] == "bearer"
