#!/usr/bin/env bash
# The grade of record for one shard of a class: every submission in its own sandboxed worker.
#
#   docs/ci/grade_class.sh solutions/01_graphs.ipynb submissions/ 1/4 out/
#
# Runs in the instructor's private repository (a job no learner can edit). --sandbox required:
# it refuses to grade where bubblewrap cannot isolate the learners' code (see docs/grading.md,
# "Isolation", for the one sysctl a GitHub-hosted Ubuntu 24.04 runner needs). Writes
# OUT/grades-I-of-N.json for merge.sh.
set -euo pipefail
lesson="$1"
submissions="$2"
shard="$3"
out="$4"
mkdir -p "$out"
name="grades-${shard/\//-of-}.json"
autograd-lab grade "$submissions" --against "$lesson" --sandbox required -j "${JOBS:-2}" \
    --shard "$shard" --json "$out/$name"
