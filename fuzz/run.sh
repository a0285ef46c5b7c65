#!/bin/bash
# Build the libFuzzer targets with clang and run each for N seconds.
#
#   fuzz/run.sh [SECONDS] [BUILD_DIR] [TARGET...]   (defaults: 60, build-fuzz, all)
#
# PARAPLAN_FUZZ_RUNS=N also stops each target after N executions (whichever
# comes first: N runs or SECONDS), for "each target >= 10M executions";
# PARAPLAN_FUZZ_TIMEOUT=S sets libFuzzer's per-input -timeout (wall clock,
# default 10 s; raise it on a loaded machine); PARAPLAN_FUZZ_MAX_LEN=BYTES the
# largest input (-max_len, default 1 MiB: the readers' bounds are about what a
# large input does, issue 23).
#
# Every fuzz/fuzz_*.c becomes a target.  Its corpus starts from the JSON files
# of data/, tests/data/ and the end-to-end cases in tests/cli/ (fuzz_runs: the
# cases' run records; fuzz_cli: the cases' args files) and fuzz/seeds/<target>/,
# and grows in BUILD_DIR/corpus/<target>; crashes are
# written to BUILD_DIR/artifacts/.  A target's dictionary is fuzz/<target>.dict,
# else fuzz/json.dict.
# Exits non-zero if a target fails to build or finds a crash.
set -euo pipefail

seconds=${1:-60}
here=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$here/build-fuzz}
shift $(($# < 2 ? $# : 2))
only=" $* "
jobs=$(nproc 2>/dev/null || echo 2)

shopt -s nullglob
CC=${CC:-clang}
if [[ $CC != *clang* ]]; then
	echo "fuzz/run.sh: libFuzzer needs clang, CC is '$CC'" >&2
	exit 2
fi
CC=$CC cmake -S "$here" -B "$build" -DPARAPLAN_FUZZ=ON -DPARAPLAN_TESTS=OFF \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs" >/dev/null

# Seeds for a target: the files its input format is likely to be (printf, not
# ls: with nullglob a pattern that matches nothing is no argument at all).
seeds() {
	local name=$1
	case $name in
	fuzz_model_json | fuzz_hf) printf '%s\n' "$here"/data/models/*.json \
		"$here"/tests/data/hf/*.json "$here"/tests/cli/*/model*.json \
		"$here"/tests/cli/*/moe*.json ;;
	fuzz_system_json) printf '%s\n' "$here"/data/systems/*.json "$here"/data/gpus/*.json \
		"$here"/tests/cli/*/system*.json ;;
	fuzz_schedule_json) ls "$here"/tests/cli/*schedule_file*/*.json ;;
	fuzz_nccl) ls "$here"/tests/data/nccl/*.txt "$here"/tests/data/nccl/*.json ;;
	fuzz_megatron) ls "$here"/tests/cli/*megatron*/*.sh "$here"/tests/cli/emit_megatron*/stdout ;;
	fuzz_torchtitan) ls "$here"/tests/data/torchtitan/*.toml "$here"/tests/cli/*torchtitan*/*.toml ;;
	fuzz_runs) printf '%s\n' "$here"/tests/cli/*/runs.json "$here"/tests/cli/*validate*/stdin ;;
	fuzz_bandwidth) printf '%s\n' "$here"/tests/cli/*mpigraph*/*.mpigraph \
		"$here"/tests/cli/*pipette*/bw.json ;;
	fuzz_overlap) printf '%s\n' "$here"/data/overlap/*.json "$here"/tests/data/dhelix-overlap*.json \
		"$here"/tests/cli/*overlap*/*.json ;;
	fuzz_gpu_profile) ;; # fuzz/seeds/fuzz_gpu_profile: a profile directory in one file
	fuzz_steps) printf '%s\n' "$here"/tests/data/steps/* "$here"/tests/cli/*steps*/steps.csv ;;
	fuzz_cli) printf '%s\n' "$here"/tests/cli/*/args ;;
	*) find "$here/data" "$here/tests/data" -name '*.json' 2>/dev/null ;;
	esac
	# Seeds kept for the target (fuzz_runs: single records of
	# shared/validation/public-runs.json, trimmed to the fields read).
	printf '%s\n' "$here"/fuzz/seeds/"$name"/*
}

mkdir -p "$build/artifacts"
status=0
for src in "$here"/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c)
	[[ $only == "  " || $only == *" $name "* ]] || continue
	bin=$build/fuzz/$name
	if [[ ! -x $bin ]]; then
		echo "fuzz/run.sh: $name was not built" >&2
		status=1
		continue
	fi
	corpus=$build/corpus/$name
	seed=$build/seed/$name
	rm -rf "$seed"
	mkdir -p "$corpus" "$seed"
	seeds "$name" | sort -u | while read -r f; do
		[[ -f $f ]] && cp "$f" "$seed/$(echo "$f" | sed "s|^$here/||; s|/|_|g")"
	done
	dict=()
	if [[ -f $here/fuzz/$name.dict ]]; then
		dict=(-dict="$here/fuzz/$name.dict")
	elif [[ -f $here/fuzz/json.dict ]]; then
		dict=(-dict="$here/fuzz/json.dict")
	fi
	echo "== $name: ${seconds}s, $(ls "$seed" | wc -l) seeds, corpus $(ls "$corpus" | wc -l)"
	log=$build/$name.log
	runs=()
	[[ -n ${PARAPLAN_FUZZ_RUNS:-} ]] && runs=(-runs="$PARAPLAN_FUZZ_RUNS")
	start_s=$(date +%s)
	if "$bin" "${dict[@]}" "${runs[@]}" -max_total_time="$seconds" -timeout="${PARAPLAN_FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
		-max_len="${PARAPLAN_FUZZ_MAX_LEN:-1048576}" -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-" \
		"$corpus" "$seed" >"$log" 2>&1; then
		grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$log" | sed 's/^/   /'
		echo "   wall_s: $(($(date +%s) - start_s))"
	else
		echo "fuzz/run.sh: $name FAILED (log: $log)" >&2
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -20 >&2 || true
		status=1
	fi
done
exit $status
