"""The suite's tiers and the test-only blocking algorithm (docs/TESTING.md).

Markers (registered in pyproject.toml, ``--strict-markers``) are given here, by path and by
fixture, rather than on each test: ``python -m pytest -m "not slow"`` is the fast loop, and a
plain ``python -m pytest`` still runs everything.

- ``browser``: drives Chromium (every ``tests/pages/test_browser*.py``); also ``slow``.
- ``postgres``: needs the PostgreSQL at 127.0.0.1:5432 (a PostgreSQL fixture, or a
  ``postgresql`` parameter of a database fixture); skipped when it is not reachable.
- ``slow``: the paper reproductions (``tests/bench/test_repro_*``), schemathesis, the worker
  processes killed and restarted (in-process and distributed: ``postgres`` too, by their queue
  database), the browsers, and the tests in ``SLOW`` below, each measured at several seconds
  on 2 cores (``--durations``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# Fixtures for every test directory: ``s3`` (a bucket on moto's S3 server).
pytest_plugins = ["s3_server"]

# Whole files: path (from tests/, a prefix of the file name) -> markers.
BROWSER_FILES = "pages/test_browser"
FILES: dict[str, tuple[str, ...]] = {
    BROWSER_FILES: ("browser", "slow"),
    "bench/test_repro_": ("slow",),
    "app/test_schemathesis.py": ("slow",),
    "app/test_jobs_distributed.py": ("slow",),  # worker processes killed and stopped
    "app/test_jobs_workers.py": ("slow",),  # worker processes killed, servers restarted
}

# Single tests that take several seconds: file -> test function names (all parametrisations),
# or one parametrisation by its full name (``test_x[case]``).
SLOW: dict[str, set[str]] = {
    # Seconds measured on 2 cores shared with other work (load average about 12): most of them
    # start worker processes, a server subprocess or a second database.
    "ingest/test_wide_blocks.py": {
        "test_batches_give_the_block_by_block_result",  # 3.5 s at load 6: four parses
    },
    "app/test_api_cv.py": {
        "test_a_study_runs_its_folds_as_runs_and_matches_the_engine",  # 7-28 s
        "test_a_study_on_postgresql",  # 19 s
        "test_a_failing_fold_fails_the_study_with_its_reason",  # 26 s
    },
    "app/test_api_lessons.py": {
        "test_a_lesson_exported_and_imported_asks_the_same_questions",  # 12 s, 27 s on PG
        "test_a_lesson_checks_its_steps_against_the_trace",  # 8 s
    },
    "app/test_api_runs.py": {
        "test_delete_refuses_an_active_run_then_deletes_it_with_its_trace",  # 19 s
    },
    "app/test_reference_tables.py": {
        # Two worker processes run a table's ranges, then two runs: 20-30 s per case.
        "test_a_reference_table_gives_the_in_memory_statistics_and_runs",
        "test_the_merged_statistics_do_not_depend_on_the_number_of_workers",  # 35 s: 2 servers
        "test_a_range_whose_worker_is_killed_runs_again_once",  # 21 s: a stale heartbeat
        "test_paths_outside_the_reference_dirs_are_refused",  # 4-8 s: two app starts
        "test_a_range_with_a_missing_cell_fails_the_pass_or_drops_the_row",  # 6-7 s
        "test_cv_on_a_reference_table_equals_engine_cv_on_its_row_blocks",  # pass, 3 folds, run
        # 11-14 s per database: two workers, the pass, 12 subsamples, the engine's 24 again
        "test_stability_on_a_reference_table_equals_the_engine_on_its_range_halves",
    },
    "app/test_reference_s3.py": {
        "test_an_s3_table_runs_as_the_same_file_on_a_volume",  # 4.5-13 s: two passes, two runs
        "test_s3_uris_the_server_may_not_or_cannot_read_are_refused",  # 2-4 s: 3 app starts
    },
    "app/test_reference_logistic.py": {
        "test_a_logistic_run_reads_the_table_in_passes",  # 8-9 s per database: pass, 2 runs
        "test_a_target_of_more_than_two_values_fails_the_run_saying_so",  # 7 s: pass and run
        "test_a_smoothed_loss_run_reads_the_table_in_passes",  # 8-11 s per case: pass, 2 runs
    },
    "app/test_reference_tables_distributed.py": {
        "test_the_ranges_spread_over_two_distributed_workers",  # worker processes, a queue
    },
    "app/test_defaults_across_doors.py": {
        "test_every_door_gives_the_same_defaults",  # 6 s: a worker process
    },
    "app/test_exports.py": {
        "test_a_run_exports_one_table_per_file",  # 9 s: a worker runs a run and 3 folds
    },
    "pages/test_wide_tables.py": {
        "test_a_gene_expression_table_uploads_and_its_page_stays_light",  # 6 s: 1 MB parsed
    },
    "app/test_api_standardize.py": {
        "test_boston_omp_finds_rm_once_columns_are_standardized",  # 8 s
        "test_boston_units_no_longer_change_the_choice",  # 14 s
    },
    "app/test_api_storage.py": {
        "test_database_storage_keeps_no_files",  # 11-37 s
        "test_lost_arrays_answer_410_fail_runs_plainly_and_degrade_health",  # 14 s
    },
    "app/test_app_startup.py": {"test_python_m_app_serves_with_samples"},  # 12 s
    "app/test_migrations.py": {"test_the_command_line_upgrades_the_configured_database"},  # 27 s
    "app/test_seed_range.py": {"test_the_largest_seed_is_stored_and_read_back"},  # 4-5 s each
    "app/test_no_500.py": {"test_a_wide_data_set_previews_fewer_rows"},  # 7 s
    "app/test_transient.py": {"test_a_running_run_outlives_a_lock_on_its_first_attempt"},  # 11 s
    "bench/test_cv_k.py": {
        "test_quick_run_reports_every_method_and_the_same_k_as_the_grid",  # 11 s
    },
    "engine/test_crf.py": {"test_foba_gdt_recovers_the_relevant_features"},  # 16 s
    "engine/test_sklearn.py": {"test_check_estimator_passes[SparseClassifierCV()]"},  # 16 s
    "pages/test_pages.py": {"test_a_long_run_keeps_its_page_light"},  # 13 s
    "pages/test_pages_runs.py": {"test_runs_table_stays_light_with_thousands_of_runs"},  # 10 s
    "test_readme.py": {
        "test_rest_example_runs",  # 35 s: an app process started, runs and a study
    },
    "test_cli.py": {
        "test_serve_says_where_it_listens_and_stops_cleanly_on_ctrl_c",
        "test_worker_says_what_it_needs",
    },  # 17 s each
    "test_deployment.py": {"test_each_service_command_is_one_the_image_provides"},  # 10 s
}

POSTGRES_FIXTURES = {"postgres_user", "postgres_url", "queue_db"}

# Worker processes import the engine fresh: they load this file at start (app.jobs.plugins),
# so every worker any test starts knows the test-only algorithm. The test process registers
# it only for the tests that use the ``blocking`` fixture.
os.environ["FOBA_TEST_PLUGINS"] = os.pathsep.join(
    str(TESTS / name) for name in ("blocking_algorithm.py", "gated_table_pass.py")
)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by these markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.path))
        if not path.is_relative_to(TESTS):
            continue
        relative = path.relative_to(TESTS).as_posix()
        names: set[str] = set()
        for prefix, markers in FILES.items():
            if relative.startswith(prefix):
                names.update(markers)
        function = getattr(item, "originalname", item.name)
        if {function, item.name} & SLOW.get(relative, set()):
            names.add("slow")
        params = getattr(getattr(item, "callspec", None), "params", {})
        on_postgres = any(isinstance(v, str) and v == "postgresql" for v in params.values())
        if on_postgres or POSTGRES_FIXTURES & set(item.fixturenames):
            names.add("postgres")
        for name in sorted(names):
            item.add_marker(name)
    _check_slow_names(items)
    items[:] = _in_lanes(config, items)


def _in_lanes(config: pytest.Config, items: list[pytest.Item]) -> list[pytest.Item]:
    """The order and the groups in which the two workers take the tests (pytest-xdist,
    ``--dist loadgroup --no-loadscope-reorder`` in ``addopts``).

    Every browser file goes into one group, the ``browser`` lane: one worker drives Chromium
    while the other computes. Two browser files side by side (thirty phones beside another
    page test) had the load at 14 on 2 cores. Every other file is a group of its own, so its
    module fixtures (a server, worker processes) start once. The browser lane comes first and
    the files marked slow as a whole next; the many short files at the end even out the two
    workers. Tests keep their order within a file.
    """
    files = list(dict.fromkeys(_relative(item) for item in items))
    browsers = [f for f in files if f.startswith(BROWSER_FILES)]
    heavy = [f for f in files if f.startswith(tuple(FILES)) and f not in browsers]
    rest = [f for f in files if f not in browsers and f not in heavy]
    rank = {f: i for i, f in enumerate(browsers + heavy + rest)}
    if config.pluginmanager.hasplugin("xdist"):  # its marker exists only with it
        for item in items:
            relative = _relative(item)
            lane = "browser" if relative in browsers else relative.removesuffix(".py")
            item.add_marker(pytest.mark.xdist_group(lane))
    return sorted(items, key=lambda item: rank[_relative(item)])


def _relative(item: pytest.Item) -> str:
    path = Path(str(item.path))
    return path.relative_to(TESTS).as_posix() if path.is_relative_to(TESTS) else str(path)


def _check_slow_names(items: list[pytest.Item]) -> None:
    """A renamed test must not leave the fast loop by surprise: every name in ``SLOW`` is a
    function of its module (checked for the modules collected)."""
    modules = {
        Path(str(item.path)).relative_to(TESTS).as_posix(): item.module
        for item in items
        if isinstance(item, pytest.Function) and Path(str(item.path)).is_relative_to(TESTS)
    }
    for relative, functions in SLOW.items():
        module = modules.get(relative)
        missing = sorted(
            name
            for name in functions
            if module is not None and not hasattr(module, name.split("[", 1)[0])
        )
        if missing:
            raise pytest.UsageError(f"tests/conftest.py SLOW names no test {missing} in {relative}")


# --------------------------------------------------------------------------- blocking runs


class Gate:
    """A ``test-blocking`` run's gate (tests/blocking_algorithm.py): its run configuration,
    and the file that lets it finish."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def config(self) -> dict:
        """The run's fields: ``submit(client, dataset_id, **gate.config)``."""
        return {"algorithm": "test-blocking", "params": {"gate": str(self.path)}}

    def open(self) -> None:
        """Let every run waiting at this gate (and every later one) finish."""
        self.path.touch()

    def attempts(self) -> list[int]:
        """The pid of each attempt that has reached the gate, in order."""
        started = Path(f"{self.path}.started")
        return [int(line) for line in started.read_text().split()] if started.exists() else []


@pytest.fixture
def blocking(tmp_path: Path) -> Iterator[Gate]:
    """``test-blocking`` registered in this process for the test, and a closed gate for it."""
    import blocking_algorithm

    blocking_algorithm.register()
    try:
        yield Gate(tmp_path / "gate")
    finally:
        blocking_algorithm.unregister()
