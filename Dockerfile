# The app, run as the non-root user `studyapp`; the SQLite database and exports live on the volume
# /data (or set DATABASE_URL to a PostgreSQL server; see docs/operations.md).
#
# Layers, slowest-changing first, so that an edit to the source rebuilds only the last ones:
#   1. the pinned runtime requirements (requirements.txt), in /opt/venv;
#   2. WordNet 3.0 (scripts/install_wordnet.py --data-only, standard library only), in /opt/nltk_data;
#   3. the project itself, built as a wheel in a separate stage and installed (not editable), then
#      the WordNet index built by the installed package.
# The test tools, tests/ and benchmarks/ are not in the image (.dockerignore).
FROM python:3.11-slim AS wheel
WORKDIR /build
COPY pyproject.toml README.md ./
COPY metrics metrics
COPY studyapp studyapp
RUN python3 -m pip wheel --no-cache-dir --disable-pip-version-check --no-deps -w /wheels .

FROM python:3.11-slim
ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    HOI_NLTK_DATA=/opt/nltk_data \
    PYTHONDONTWRITEBYTECODE=1
RUN useradd --create-home --uid 10001 studyapp \
 && mkdir -p /app /data \
 && chown studyapp:studyapp /app /data
COPY requirements.txt /build/requirements.txt
RUN python3 -m venv /opt/venv \
 && pip install --no-cache-dir --disable-pip-version-check -r /build/requirements.txt
COPY scripts/install_wordnet.py /build/scripts/install_wordnet.py
RUN python3 /build/scripts/install_wordnet.py --data-only && rm -rf /build/.data
COPY --from=wheel /wheels /wheels
RUN pip install --no-cache-dir --disable-pip-version-check --no-deps /wheels/*.whl \
 && python3 /build/scripts/install_wordnet.py --index-only \
 && rm -rf /wheels
WORKDIR /app
COPY --chown=studyapp:studyapp studies /app/studies
USER studyapp
ENV STUDYAPP_ADDRESS=0.0.0.0 \
    STUDYAPP_DB=/data/studyapp.sqlite \
    STUDYAPP_EXPORTS=/data/exports \
    STUDYAPP_STUDIES=/app/studies \
    STUDYAPP_UPLOADS=/data/uploads
VOLUME ["/data"]
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s \
  CMD python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"
CMD ["python3", "-m", "studyapp", "serve"]
