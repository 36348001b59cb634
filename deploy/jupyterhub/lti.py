"""JupyterHub for one attnlab class with LTI 1.3 login from the LMS instead of PAM.

Start the hub with this file (``jupyterhub -f deploy/jupyterhub/lti.py``) in place of
``jupyterhub_config.py``: it loads that production configuration unchanged and replaces only who
may log in and how (``attnlab_lti.configure``: the platform's course roles become the hub's
instructor, grader and student; see deploy/jupyterhub/README.md, "LTI 1.3 login").  Needs the hub
environment to have ``requirements-lti.txt`` installed and the ``ATTNLAB_LTI_*`` settings.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))  # noqa: F821 - traitlets defines __file__
load_subconfig(os.path.join(HERE, "jupyterhub_config.py"))  # noqa: F821 - provided by traitlets
c = get_config()  # noqa: F821 - provided by JupyterHub
# PAM's Unix-group allow list means nothing to LTI users: the launch's course role decides
c.Authenticator.allowed_groups = set()
# the authenticator manages group membership (JupyterHub then refuses static groups); the groups
# named in load_roles are created by JupyterHub itself
c.JupyterHub.load_groups = {}
# the platform posts the launch back cross-site: the hub's cookies (OIDC state and nonce, then the
# login) must be SameSite=None, which browsers accept only with Secure, i.e. the hub behind HTTPS
settings = c.JupyterHub.tornado_settings  # a dict, or traitlets' lazy value when the main config left it
cookies = dict((settings.get("cookie_options") if isinstance(settings, dict) else None) or {})
settings.update({"cookie_options": {**cookies, "SameSite": "None", "Secure": True}})

sys.path.insert(0, HERE)
import attnlab_lti  # noqa: E402 - after its folder is on the path

attnlab_lti.configure(c, os.environ)
