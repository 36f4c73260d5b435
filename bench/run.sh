#!/usr/bin/env bash
# The benchmarks of `make bench` (docs/performance.md): kbq latency and kbc
# build time beside their floors (sqlite3, cmark-gfm), the scale runs on
# synthetic sources (bench/gen_sources.py) and peak memory. Run from
# anywhere; needs a build of kbc and kbq (default build-bench/, what make bench
# builds: the build type users run) and python3.
# Usage: bench/run.sh [--build DIR] [--runs N] [--build-runs N]
#                     [--scales "10 100 1000"] [--skip latency,build,scale]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec python3 bench/bench.py "$@"
