"""The live fragment reads a running run's trace incrementally (app/web/views/live_trace.py):
what it returns is always the whole stored trace, in step order, even as steps are added and
when a new attempt starts the trace over."""

from __future__ import annotations

from sqlmodel import Session, col, delete

from app.models import Run, TraceEvent
from app.services import runs as run_service
from app.web.views import live_trace
from engine.trace import Event


def _add(session: Session, run_id: int, steps: range) -> None:
    for step in steps:
        event = Event(step, "add", 1.0 / (step + 1), step + 1, feature=step)
        session.add(TraceEvent(run_id=run_id, step=step, kind="add", data=event.to_dict()))
    session.commit()


def test_each_poll_sees_the_whole_trace_reading_only_new_steps(client, monkeypatch) -> None:
    body = {"generator": "gaussian_regression", "params": {"n": 40, "d": 10}}
    dataset = client.post("/api/datasets/generate", json=body).json()["id"]
    run_id = client.post(
        "/api/runs", json={"dataset_id": dataset, "algorithm": "omp", "k": 5}
    ).json()["id"]
    read_after: list[int] = []
    real = run_service.trace_events_after

    def spy(session, rid, step):
        read_after.append(step)
        return real(session, rid, step)

    monkeypatch.setattr(run_service, "trace_events_after", spy)
    live_trace.forget()
    with Session(client.app.state.db) as session:
        run = session.get(Run, run_id)
        assert live_trace.events_so_far(session, run) == []
        _add(session, run_id, range(0, 3))
        assert live_trace.events_so_far(session, run) == run_service.trace_events(session, run_id)
        _add(session, run_id, range(3, 5))
        so_far = live_trace.events_so_far(session, run)
        assert so_far == run_service.trace_events(session, run_id) and len(so_far) == 5
        assert read_after == [-1, -1, 2]  # each poll read only the steps after the last
        # A new attempt starts over: its trace is read afresh.
        session.exec(delete(TraceEvent).where(col(TraceEvent.run_id) == run_id))
        run.attempt += 1
        session.add(run)
        session.commit()
        _add(session, run_id, range(0, 2))
        assert live_trace.events_so_far(session, run) == run_service.trace_events(session, run_id)
        assert read_after[-1] == -1
