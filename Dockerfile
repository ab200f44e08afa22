FROM python:3.11-slim
WORKDIR /app
COPY . /app
RUN PYTHON=python3 ./scripts/setup.sh
EXPOSE 8501
ENV STUDYAPP_ADDRESS=0.0.0.0
CMD ["./run.sh"]
