"""nbgrader's steps: one preprocessor, plugin or exporter per module, and the configuration that names them."""
