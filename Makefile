# attnlab course commands (see autograder/README.md). Use the project venv.
PY ?= .venv/bin/python
ASSIGNMENT ?= 02_scaled_dot_product_attention
SUBMISSIONS ?= autograder/course
JOBS ?= 2

.PHONY: notebooks check-notebooks lessons check-lessons solutions check-solutions exercises check-exercises \
        grade test-autograder bench site site-fresh

notebooks: lessons solutions  ## rebuild every notebook from its text source (lessons and solutions)

check-notebooks: check-lessons check-solutions  ## fail if any notebook is not what its text source builds

lessons:              ## rebuild lessons/NN_*.ipynb from their text source lessons/src/NN_*.py
	$(PY) scripts/build_lessons.py

check-lessons:        ## fail if a lesson notebook is not what its text source builds
	$(PY) scripts/build_lessons.py --check

solutions:            ## rebuild solutions/NN_x/NN_x.ipynb from NN_x.pct.py (then: make exercises)
	$(PY) scripts/build_solutions.py

check-solutions:      ## fail if a solution notebook is not what its NN_x.pct.py builds
	$(PY) scripts/build_solutions.py --check

exercises:            ## regenerate exercises/ from solutions/ with nbgrader
	$(PY) -m attnlab_grader release

check-exercises:      ## fail if exercises/ is stale or was edited by hand
	$(PY) -m attnlab_grader check-release

grade:                ## autograde $(SUBMISSIONS)/submitted/*/$(ASSIGNMENT), feedback + grades.csv
	$(PY) -m attnlab_grader grade $(SUBMISSIONS) --assignment $(ASSIGNMENT) --jobs $(JOBS)

test-autograder:      ## the autograder's own tests (sandbox, attacks, course QA)
	OMP_NUM_THREADS=1 $(PY) -m pytest -n 2 --dist loadgroup -q autograder/attnlab_grader/tests

bench:                ## seconds per submission and a class of 100, vs plain nbgrader autograde
	OMP_NUM_THREADS=1 $(PY) -m benchmarks.autograder_bench --students 100 --out autograder/BENCHMARK.md

site:                 ## the course website in site/_build/html (strict, offline; lessons executed, cached)
	$(PY) scripts/build_site.py

site-fresh:           ## the website from scratch: every lesson executed again (after a change to src/attnlab)
	$(PY) scripts/build_site.py --fresh
