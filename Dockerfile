# FoBa Lab: one image for the web process (`python -m app`) and for job workers
# (`python -m app worker`). It runs as an unprivileged user; /data holds the SQLite database and
# the array files of the single-machine set-up (unused with STORAGE=database).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8000

WORKDIR /srv/foba-lab
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY app ./app
COPY foba_lab ./foba_lab
COPY templates ./templates
COPY static ./static
# The PostgreSQL driver is an extra: the image serves both set-ups.
RUN pip install --no-cache-dir '.[postgres]' \
    && useradd --system --uid 10001 --home-dir /srv/foba-lab --shell /usr/sbin/nologin foba \
    && mkdir -p /data && chown foba:foba /data

USER foba
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD python -c "import os, urllib.request; urllib.request.urlopen(f'http://127.0.0.1:{os.environ.get(\"PORT\", \"8000\")}/healthz', timeout=2)"
CMD ["python", "-m", "app"]
