"""The database tables and the API's model families, one module per entity.

Each entity keeps its family together: the table, what clients send (``Create``, ``Update``)
and what they get back (``Public``). A data set row names its arrays by a key its array store
chose (``app.storage``). Timestamps are aware UTC datetimes. Tables whose ids appear in links
never reuse an id (AUTOINCREMENT on SQLite; PostgreSQL sequences never go back). A change to a
table is a new migration in ``app/migrations`` (see its docstring).

Importing this package registers every table with SQLModel's metadata (Alembic and
``create_all`` read it), so callers may import the names from here or from the modules.
"""

from app.models.array_chunk import ArrayChunk
from app.models.classroom import ClassQuestion, ClassSession, ClassVote
from app.models.common import (
    ACTIVE,
    NO_ID_REUSE,
    Message,
    RunStatus,
    ServerError,
    Task,
    stored_id,
    utcnow,
)
from app.models.comparison import (
    Comparison,
    ComparisonCreate,
    ComparisonFromRuns,
    ComparisonPublic,
    ComparisonRun,
)
from app.models.cv import CVCreate, CVCurve, CVFinalCreate, CVFold, CVPublic, CVStudy
from app.models.dataset import (
    ColumnSummary,
    Dataset,
    DatasetGenerate,
    DatasetPreview,
    DatasetPublic,
    DatasetSummary,
    DatasetUpdate,
    ReferenceCreate,
    UploadOptions,
)
from app.models.fields import MAX_ID, MAX_K, MAX_SEED, STRICT, Fraction
from app.models.idempotency import IdempotencyKey
from app.models.judge import NamedExchange, WhyNot
from app.models.run import (
    MAX_TAG_CHARS,
    MAX_TAGS,
    FitMetrics,
    Run,
    RunBase,
    RunConfig,
    RunCreate,
    RunPublic,
    RunResult,
    RunUpdate,
    SelectedFeature,
    SplitOptions,
    StudyPart,
    SupportRecovery,
    part_of,
    seconds_left,
    standalone,
)
from app.models.saved_lesson import (
    LessonQuestion,
    SavedLesson,
    SavedLessonCreate,
    SavedLessonPublic,
)
from app.models.stability import (
    StabilityCreate,
    StabilityMethod,
    StabilityPart,
    StabilityPublic,
    StabilityStudy,
)
from app.models.trace import TraceEvent, TracePage
from app.models.web_session import WebSession

__all__ = [
    "ACTIVE",
    "MAX_ID",
    "MAX_K",
    "MAX_SEED",
    "MAX_TAGS",
    "MAX_TAG_CHARS",
    "NO_ID_REUSE",
    "STRICT",
    "ArrayChunk",
    "CVCreate",
    "CVCurve",
    "CVFinalCreate",
    "CVFold",
    "CVPublic",
    "CVStudy",
    "ClassQuestion",
    "ClassSession",
    "ClassVote",
    "ColumnSummary",
    "Comparison",
    "ComparisonCreate",
    "ComparisonFromRuns",
    "ComparisonPublic",
    "ComparisonRun",
    "Dataset",
    "DatasetGenerate",
    "DatasetPreview",
    "DatasetPublic",
    "DatasetSummary",
    "DatasetUpdate",
    "FitMetrics",
    "Fraction",
    "IdempotencyKey",
    "LessonQuestion",
    "Message",
    "NamedExchange",
    "ReferenceCreate",
    "Run",
    "RunBase",
    "RunConfig",
    "RunCreate",
    "RunPublic",
    "RunResult",
    "RunStatus",
    "RunUpdate",
    "SavedLesson",
    "SavedLessonCreate",
    "SavedLessonPublic",
    "SelectedFeature",
    "ServerError",
    "SplitOptions",
    "StabilityCreate",
    "StabilityMethod",
    "StabilityPart",
    "StabilityPublic",
    "StabilityStudy",
    "StudyPart",
    "SupportRecovery",
    "Task",
    "TraceEvent",
    "TracePage",
    "UploadOptions",
    "WebSession",
    "WhyNot",
    "part_of",
    "seconds_left",
    "standalone",
    "stored_id",
    "utcnow",
]
