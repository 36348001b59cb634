# The students' image (one pod per student, Zero to JupyterHub: z2jh-values.yaml singleuser.image).
# Build from the repository root:
#   docker build -f deploy/kubernetes/singleuser.Dockerfile -t registry.example.edu/attnlab-singleuser:2026.11 .
# A learner's course environment (the distribution attnlab: the course library, `attnlab check` with the
# grader's judging and sandbox, the students' commands; not attnlab-grader) from the project's locks
# (constraints/py3.11.txt, torch 2.13.0 CPU), plus
# jupyterhub-singleuser (same JupyterHub as the hub) and nbgrader's student extensions with the
# course's exchange settings.  The lessons are copied into /opt/attnlab/public and into each home
# on start (singleuser.lifecycleHooks).  NOT in this image: solutions/, grading specs, the grader's instructor code
# and its dependencies.
FROM docker.io/library/python:3.11-slim-bookworm

ARG NB_USER=jovyan
ARG NB_UID=1000
RUN apt-get update && apt-get install -y --no-install-recommends git tini \
    && rm -rf /var/lib/apt/lists/* \
    && useradd -m -u ${NB_UID} -s /bin/bash ${NB_USER}

COPY pyproject.toml README.md /opt/attnlab/src-tree/
COPY constraints/py3.11.txt /opt/attnlab/constraints.txt
COPY src /opt/attnlab/src-tree/src
COPY autograder/attnlab_grader /opt/attnlab/src-tree/autograder/attnlab_grader
COPY data /opt/attnlab/src-tree/data
COPY deploy/jupyterhub/requirements-singleuser.txt /opt/attnlab/requirements-singleuser.txt
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu \
       "torch==2.13.0+cpu" \
    && /opt/venv/bin/pip install --no-cache-dir -c /opt/attnlab/constraints.txt /opt/attnlab/src-tree \
       -r /opt/attnlab/requirements-singleuser.txt \
    && rm -rf /opt/attnlab/src-tree \
    && /opt/venv/bin/python -m ipykernel install --sys-prefix --name python3 \
    && /opt/venv/bin/jupyter server extension enable --sys-prefix nbgrader
COPY deploy/jupyterhub/nbgrader_config_global.py /opt/venv/etc/jupyter/nbgrader_config.py
COPY lessons/*.ipynb /opt/attnlab/public/lessons/

ENV PATH=/opt/venv/bin:$PATH OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
USER ${NB_UID}
WORKDIR /home/${NB_USER}
EXPOSE 8888
ENTRYPOINT ["tini", "--"]
CMD ["jupyterhub-singleuser"]
