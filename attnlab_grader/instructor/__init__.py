"""Instructor features around the grader: the merged grades sheet, honest Autograde and
feedback release, deadlines and extensions, regrade requests and grade history, and LMS
grade exports.  One concept per module; the command line is ``attnlab-grade`` (see
``autograder/README.md``)."""
