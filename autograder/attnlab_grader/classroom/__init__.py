"""Running a class: the grading pipeline and its shards, the instructor's commands, regrades, rubrics, exports, LMS."""
