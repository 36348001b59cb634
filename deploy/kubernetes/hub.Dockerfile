# The hub's image: chart 4.4.0's own hub image with the JupyterHub that the one-machine recipe pins
# (deploy/jupyterhub/requirements-hub.txt: jupyterhub==6.1.1), so hub, students' servers
# (jupyterhub-singleuser 6.1.1) and formgrader run one JupyterHub version.  The chart's other hub
# packages accept it by their own metadata (jupyterhub-kubespawner 7.0.0: jupyterhub>=4.0.0,
# oauthenticator 17.4.0: >=2.2, jupyterhub-ltiauthenticator 1.6.3: >=1.2, jupyterhub-idle-culler 1.4.0:
# no bound); `pip check` fails the build if any installed package declares otherwise.
#   docker build -f deploy/kubernetes/hub.Dockerfile -t registry.example.edu/attnlab-hub:2026.11 .
FROM quay.io/jupyterhub/k8s-hub:4.4.0
USER root
RUN pip install --no-cache-dir "jupyterhub==6.1.1" && pip check
USER 1000
