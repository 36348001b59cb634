"""attnlab's grader: nbgrader steps that grade exercise notebooks in a sandbox (``attnlab-grade``)."""
