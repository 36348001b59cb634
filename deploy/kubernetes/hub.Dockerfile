# The hub's image: chart 4.4.0's own hub image with the JupyterHub that the one-machine recipe pins
# (deploy/jupyterhub/requirements-hub.txt: jupyterhub==6.1.1), so hub, students' servers
# (jupyterhub-singleuser 6.1.1) and formgrader run one JupyterHub version.
#   docker build -f deploy/kubernetes/hub.Dockerfile -t registry.example.edu/attnlab-hub:2026.11 .
FROM quay.io/jupyterhub/k8s-hub:4.4.0
USER root
RUN pip install --no-cache-dir "jupyterhub==6.1.1"
USER 1000
