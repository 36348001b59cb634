"""The judgement: checks, comparisons and the one ``Verdict`` (imports ``sandbox`` and the course library only)."""
