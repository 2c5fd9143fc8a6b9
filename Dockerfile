# FoBa Lab: the web app with its in-process workers and a SQLite database under /data.
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
COPY templates ./templates
COPY static ./static
RUN pip install --no-cache-dir .

VOLUME ["/data"]
EXPOSE 8000
CMD ["python", "-m", "app"]
