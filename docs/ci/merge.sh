#!/usr/bin/env bash
# Combine the shards' grades into the class's: grades.json, grades.md and a Canvas CSV.
#
#   docs/ci/merge.sh out/ ASSIGNMENT
set -euo pipefail
out="$1"
assignment="$2"
autograd-lab merge-grades "$out"/grades-*-of-*.json --json "$out/grades.json" \
    --report "$out/grades.md" --canvas "$out/canvas.csv" --assignment "${assignment%.ipynb}"
