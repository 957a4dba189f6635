#!/usr/bin/env bash
# Feedback on a learner's push: the checks the learner can see, nothing more.
#
#   docs/ci/feedback.sh exercises/01_graphs.ipynb checks/01_graphs.ipynb [REPORT]
#
# Grades the learner's notebook against the STUDENT version of the lesson (made by
# `autograd-lab make-exercises`, which holds no solutions and no hidden tests), so this runs in a
# workflow the learner can edit without anything there to steal. The grade of record is another
# job (grade_class.sh), in the instructor's own repository. REPORT (default: the job summary, or
# feedback.md) gets the markdown report.
set -euo pipefail
notebook="$1"
checks="$2"
report="${3:-${GITHUB_STEP_SUMMARY:-feedback.md}}"
autograd-lab grade "$notebook" --against "$checks" --sandbox auto --report "$report"
