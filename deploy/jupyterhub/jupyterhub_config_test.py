"""The production configuration with what a throwaway end-to-end test needs (tests/hub/).

Only for tests: a password authenticator (one known password), the processes spawner (no
systemd in a test container), and a test-admin service whose token creates user tokens.
Everything else -- the course environment, exchange, formgrader service, groups, roles and
limits -- is jupyterhub_config.py's.
"""
import os

c = get_config()  # noqa: F821
load_subconfig(os.path.join(os.path.dirname(os.path.abspath(__file__)), "jupyterhub_config.py"))  # noqa: F821

c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = os.environ["ATTNLAB_HUB_TEST_PASSWORD"]
c.Authenticator.allowed_users = set(os.environ["ATTNLAB_HUB_TEST_USERS"].split(","))
c.Authenticator.allowed_groups = set()
c.JupyterHub.spawner_class = "jupyterhub.spawner.LocalProcessSpawner"
c.JupyterHub.services.append({"name": "attnlab-test-admin", "api_token": os.environ["ATTNLAB_HUB_TEST_TOKEN"]})
c.JupyterHub.load_roles.append({"name": "admin", "services": ["attnlab-test-admin"]})
c.ConfigurableHTTPProxy.api_url = os.environ["ATTNLAB_PROXY_API_URL"]
c.JupyterHub.hub_port = int(os.environ["ATTNLAB_HUB_PORT"])
