"""The class report: built (``class_report``), then rendered (``render``)."""
