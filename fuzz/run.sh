#!/bin/bash
# Build the libFuzzer targets with clang and run each for N seconds.
#
#   fuzz/run.sh [SECONDS] [BUILD_DIR]      (defaults: 60, build-fuzz)
#
# Every fuzz/fuzz_*.c becomes a target.  Its corpus starts from the JSON files
# of data/, tests/data/ and the end-to-end cases in tests/cli/, and grows in
# BUILD_DIR/corpus/<target>; crashes are written to BUILD_DIR/artifacts/.
# Exits non-zero if a target fails to build or finds a crash.
set -euo pipefail

seconds=${1:-60}
here=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$here/build-fuzz}
jobs=$(nproc 2>/dev/null || echo 2)

CC=${CC:-clang}
if [[ $CC != *clang* ]]; then
	echo "fuzz/run.sh: libFuzzer needs clang, CC is '$CC'" >&2
	exit 2
fi
CC=$CC cmake -S "$here" -B "$build" -DPARAPLAN_FUZZ=ON -DPARAPLAN_TESTS=OFF \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs" >/dev/null

# Seeds for a target: the JSON files its input format is likely to be.
seeds() {
	local name=$1
	case $name in
	fuzz_model_json | fuzz_hf) ls "$here"/data/models/*.json "$here"/tests/data/hf/*.json \
		"$here"/tests/cli/*/model*.json "$here"/tests/cli/*/moe*.json ;;
	fuzz_system_json) ls "$here"/data/systems/*.json "$here"/data/gpus/*.json \
		"$here"/tests/cli/*/system*.json ;;
	fuzz_schedule_json) ls "$here"/tests/cli/*schedule_file*/*.json ;;
	fuzz_nccl) ls "$here"/tests/data/nccl/*.txt "$here"/tests/data/nccl/*.json ;;
	fuzz_megatron) ls "$here"/tests/cli/*megatron*/*.sh "$here"/tests/cli/emit_megatron*/stdout ;;
	fuzz_torchtitan) ls "$here"/tests/data/torchtitan/*.toml "$here"/tests/cli/*torchtitan*/*.toml ;;
	*) find "$here/data" "$here/tests/data" -name '*.json' 2>/dev/null ;;
	esac 2>/dev/null || true
}

mkdir -p "$build/artifacts"
status=0
shopt -s nullglob
for src in "$here"/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c)
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
	[[ -f $here/fuzz/json.dict ]] && dict=(-dict="$here/fuzz/json.dict")
	echo "== $name: ${seconds}s, $(ls "$seed" | wc -l) seeds, corpus $(ls "$corpus" | wc -l)"
	log=$build/$name.log
	if "$bin" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-max_len=16384 -print_final_stats=1 -artifact_prefix="$build/artifacts/$name-" \
		"$corpus" "$seed" >"$log" 2>&1; then
		grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$log" | sed 's/^/   /'
	else
		echo "fuzz/run.sh: $name FAILED (log: $log)" >&2
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -20 >&2 || true
		status=1
	fi
done
exit $status
