#!/usr/bin/env bash
# Wheels the H200 machine lacks (it has no package registry): the openai SDK and what it
# needs beyond that image's packages, for benchmarks/queue_busy.py's scripted endpoint (the
# llm method talks to it through the SDK); Starlette, uvicorn and click for `kgb serve`
# (benchmarks/serve_load.py). Run here, then name .whl in the device call's
# carry; benchmarks/h200_session.sh installs whatever is in .whl first. Versions are the ones
# this project's test venv runs; Python 3.12 is the device machine's.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .whl \
    openai==3.57.0 pydantic==2.14.4 pydantic_core==2.50.5 jiter==0.19.0 \
    annotated-types==0.8.0 typing-inspection==0.4.5 sniffio==1.3.1 httpx2==2.16.2 \
    httpcore2==2.16.2 truststore==0.10.5 anyio==4.16.0 idna==3.20 \
    typing_extensions==4.16.0 h11==0.16.0 starlette==1.10.0 uvicorn==0.55.0 click==8.5.1
ls .whl
