# attnlab course commands (see autograder/README.md). Use the project venv.
PY ?= .venv/bin/python
ASSIGNMENT ?= 02_scaled_dot_product_attention
SUBMISSIONS ?= autograder/course
JOBS ?= 2

.PHONY: lessons check-lessons exercises check-exercises grade test-autograder bench

lessons:              ## rebuild lessons/NN_*.ipynb from their text source lessons/src/NN_*.py
	$(PY) scripts/build_lessons.py

check-lessons:        ## fail if a lesson notebook is not what its text source builds
	$(PY) scripts/build_lessons.py --check

exercises:            ## regenerate exercises/ from solutions/ with nbgrader
	$(PY) -m autograder release

check-exercises:      ## fail if exercises/ is stale or was edited by hand
	$(PY) -m autograder check-release

grade:                ## autograde $(SUBMISSIONS)/submitted/*/$(ASSIGNMENT), feedback + grades.csv
	$(PY) -m autograder grade $(SUBMISSIONS) --assignment $(ASSIGNMENT) --jobs $(JOBS)

test-autograder:      ## the autograder's own tests (sandbox, attacks, course QA)
	OMP_NUM_THREADS=1 $(PY) -m pytest -n 2 --dist loadgroup -q autograder/tests

bench:                ## seconds per submission and a class of 100, vs plain nbgrader autograde
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.autograder_bench --students 100 --out autograder/BENCHMARK.md
