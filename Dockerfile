# The app as README's install commands set it up (scripts/setup.sh, then ./run.sh), run as the
# non-root user `studyapp`; the SQLite database and exports live on the volume /data (or set
# DATABASE_URL to a PostgreSQL server; see docs/operations.md). The pinned runtime requirements
# are installed in a layer of their own before the source is copied, so an edit to the source
# reuses that layer; the test tools (requirements-dev.txt) are not in the image.
FROM python:3.11-slim
RUN useradd --create-home --uid 10001 studyapp \
 && mkdir -p /app /data \
 && chown studyapp:studyapp /app /data
WORKDIR /app
USER studyapp
COPY --chown=studyapp:studyapp requirements.txt /app/
RUN python3 -m venv .venv \
 && .venv/bin/python -m pip install --no-cache-dir --disable-pip-version-check -r requirements.txt
COPY --chown=studyapp:studyapp . /app
RUN PYTHON=python3 ./scripts/setup.sh
ENV STUDYAPP_ADDRESS=0.0.0.0 \
    STUDYAPP_DB=/data/studyapp.sqlite \
    STUDYAPP_EXPORTS=/data/exports
VOLUME ["/data"]
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s \
  CMD python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"
CMD ["./run.sh"]
