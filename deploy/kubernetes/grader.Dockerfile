# The grader's image: formgrader (formgrader.yaml) and every grading pod (grading-job.yaml).
# Build from the repository root (the course repository, solutions included: push it to a registry
# that only the cluster's nodes can pull from, never a public one):
#   docker build -f deploy/kubernetes/grader.Dockerfile -t registry.example.edu/attnlab-grader:2026.11 .
# The course environment with the grader's distribution (attnlab and attnlab-grader: the instructor's
# commands, PostgreSQL gradebook, similarity, LTI) from the project's locks (constraints/py3.11.txt,
# torch 2.13.0 CPU) in /opt/venv, the repository at /opt/attnlab (both installed editable, so the sandbox
# hides the whole repository, solutions/ and attnlab's source, from student code; the grader's in
# setuptools' compat mode, as scripts/setup.sh does), the grader account uid 10001.
FROM docker.io/library/python:3.11-slim-bookworm

RUN apt-get update && apt-get install -y --no-install-recommends git tini \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd -g 10001 grader && useradd -m -d /home/grader -u 10001 -g 10001 -s /bin/bash grader

COPY pyproject.toml README.md nbgrader_config.py /opt/attnlab/
COPY constraints/py3.11.txt /opt/attnlab/constraints/py3.11.txt
COPY src /opt/attnlab/src
COPY autograder/pyproject.toml autograder/README.md /opt/attnlab/autograder/
COPY autograder/attnlab_grader /opt/attnlab/autograder/attnlab_grader
COPY solutions /opt/attnlab/solutions
COPY data /opt/attnlab/data
COPY deploy/jupyterhub/requirements-singleuser.txt /opt/attnlab/deploy/jupyterhub/requirements-singleuser.txt
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu \
       "torch==2.13.0+cpu" \
    && /opt/venv/bin/pip install --no-cache-dir -c /opt/attnlab/constraints/py3.11.txt -e /opt/attnlab \
       -r /opt/attnlab/deploy/jupyterhub/requirements-singleuser.txt \
    && /opt/venv/bin/pip install --no-cache-dir -c /opt/attnlab/constraints/py3.11.txt \
       --config-settings editable_mode=compat -e /opt/attnlab/autograder \
    && /opt/venv/bin/python -m ipykernel install --sys-prefix --name python3 \
    && /opt/venv/bin/jupyter server extension enable --sys-prefix nbgrader \
    && /opt/venv/bin/python -m compileall -q /opt/attnlab/src /opt/attnlab/autograder/attnlab_grader
# formgrader's nbgrader settings (course root, exchange, the grading steps; ATTNLAB_DB -> gradebook)
COPY deploy/jupyterhub/grader_nbgrader_config.py /opt/venv/etc/jupyter/nbgrader_config.py

ENV PATH=/opt/venv/bin:$PATH ATTNLAB_CLONE=/opt/attnlab ATTNLAB_SOLUTIONS=/opt/attnlab/solutions \
    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONDONTWRITEBYTECODE=1
USER 10001:10001
WORKDIR /home/grader
ENTRYPOINT ["tini", "--"]
CMD ["python", "-m", "attnlab_grader.classroom.podjob", "--help"]
