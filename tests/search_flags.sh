#!/bin/sh
# paraplan search and every estimate flag (the cli_only_flags table of
# cli/options.c and the fields of src/spec/fields.c, read from the source so a
# new flag cannot be missed):
#   - the flag is applied (the search's output differs from the same search
#     without it) or refused (exit 2, one line "paraplan: search: --FLAG ...");
#   - given twice, the last one wins (--F ALT --F VALUE == --F VALUE);
#   - its abbreviation (the name less its last letter) is an unknown option.
# A flag with no row in the table below fails the test: add one.
#   usage: search_flags.sh PARAPLAN SOURCE_DIR
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1 # whatever a broken flag writes lands here

common="--model llama3-8b --system dgx-h100 --gpus 16 --gbs 64 --seq 4096 --tp 1,2 --pp 1,2 --top 3 --threads 1"
moe="--model mixtral-8x7b --gbs 32"

# flag | value | alternative value (for "last wins") | context | applied or refused
table() {
	cat <<ROWS
model|llama2-7b|llama3-70b||applied
system|dgx-a100-80g|dgx-h100||applied
gpus|8|32||applied
gbs|32|128||applied
seq|2048|8192||applied
tokens|1T|2T||applied
precision|fp8|fp16||applied
fp8-recipe|rowwise|current|--precision fp8|applied
fp8-params|on|off|--precision fp8|applied
tp|2|1||applied
tp2|2|4||applied
summa|on|off|--tp2 2|applied
summa-nb|2|4|--tp2 2 --summa on|applied
pp|2|1||applied
first-stage-layers|15|17|--pp 2|applied
last-stage-layers|15|17|--pp 2|applied
embedding-as-layer|on|off|--pp 1,2,3 --gpus 24|applied
loss-as-layer|on|off|--pp 1,2,3 --gpus 24|applied
dp|4|8||applied
cp|2|1||applied
ep|2|8|$moe|applied
etp|1|2|$moe|applied
vp|2|4||applied
mbs|1|2||applied
zero|1|2||applied
recompute|full|none||applied
sp|on|off||applied
schedule|zb|1f1b||applied
si|on|off||refused
overlap|$src/tests/data/dhelix-overlap-perfect.json|h100|--schedule 1f1b,wshape|applied
order|pp-dp-cp-ep-tp|tp-cp-ep-dp-pp||applied
grad-dtype|bf16|fp32||applied
grad-reduce-dtype|bf16|fp32|--framework llm-foundry --zero 3|applied
optimizer|sgd|adam||applied
flash|off|on||applied
tp-overlap|on|off||applied
ep-overlap|on|off|$moe|applied
moe-routing|zipf:1.5|zipf:0.5|$moe --ep 8|applied
moe-dispatcher|deepep|alltoall|$moe --ep 8|applied
freeze|layers:8|embeddings||applied
lora-rank|8|64||applied
lora-targets|qkv|fc1|--lora-rank 16|applied
base-weights|nf4|train|--lora-rank 16|applied
offload-optimizer|on|off||applied
offload-params|on|off||applied
offload-activations|on|off||applied
offload-layers|2|4|--offload-activations on|applied
recompute-modules|mla_up_proj|core_attn||refused
compile|on|off|--framework torchtitan --gpu-profile $src/../shared/measurements/h100-sxm|applied
framework|deepspeed|llm-foundry||applied
gpu-profile|$src/../shared/measurements/h100-sxm|$src/tests/data/kernel/h100-subset||applied
usd-per-gpu-hour|1|2|--tokens 1T|applied
json|||--top 1|applied
format|text|json|--top 1|applied
output|$tmp/out.json|$tmp/alt.json||applied
help|||--top 1|applied
from-megatron|--seq-length=2048|--seq-length=8192||applied
from-torchtitan|$src/tests/data/torchtitan/llama3_8b.toml|$src/tests/data/torchtitan/llama3_8b_fsdp16.toml||applied
energy|on|off||applied
pue|1.2|1.5||applied
grid-gco2-per-kwh|400|200|--pue 1.2 --tokens 1T|applied
usd-per-kwh|0.1|0.2|--pue 1.2 --tokens 1T|applied
power-cap-mw|0.019|0.0185|--pue 1.2|applied
objective|energy|time|--pue 1.2|applied
ROWS
}

flags=$({
	grep -o 'CLI_ROW("[a-z0-9-]*"' "$src/cli/options.c"
	grep -o '\(PLAN\|JOB\)_[A-Z]*("[a-z0-9-]*"' "$src/src/spec/fields.c"
} | cut -d'"' -f2)
# search's own: its table's rows and the groups of rows of cli/options.h it uses
all=$(printf '%s\n' $flags && grep -ho 'CLI_ROW("[a-z0-9-]*"' "$src/cli/search.c" "$src/cli/options.h" | cut -d'"' -f2)
[ -n "$flags" ] || { echo "no flags found in $src/cli/options.c"; exit 1; }

# The output of `paraplan search ARGS`, without the wall-clock time, into $1;
# standard error into $1.err, the exit code into $1.rc.
run() {
	o=$1
	shift
	"$bin" search "$@" >"$tmp/raw" 2>"$o.err" </dev/null
	echo $? >"$o.rc"
	grep -v -e '"wall_s"' -e '^search: ' "$tmp/raw" >"$o"
}

fail=0
bad() { echo "--$f: $*"; fail=1; }
n=0
for f in $flags; do
	row=$(table | grep "^$f|" | head -n 1)
	if [ -z "$row" ]; then
		bad "no row in tests/search_flags.sh: say how search treats it (applied or refused)"
		continue
	fi
	n=$((n + 1))
	IFS='|' read -r _ value alt ctx want <<ROW
$row
ROW
	fmt=--json
	[ "$f" = json ] && fmt=
	# The same search without the flag (one per context and format).
	key=$(echo "$ctx $fmt" | cksum | cut -d' ' -f1)
	if [ ! -f "$tmp/base.$key" ]; then
		# shellcheck disable=SC2086
		run "$tmp/base.$key" $common $ctx $fmt
	fi
	cp "$tmp/base.$key" "$tmp/base"
	[ "$(cat "$tmp/base.$key.rc")" = 0 ] || { bad "the search without it fails: $(cat "$tmp/base.$key.err")"; continue; }
	# shellcheck disable=SC2086
	run "$tmp/with" $common $ctx $fmt --$f $value
	rc=$(cat "$tmp/with.rc")
	if [ "$want" = refused ]; then
		if [ "$rc" != 2 ] || [ "$(wc -l <"$tmp/with.err")" != 1 ] ||
			! grep -q "^paraplan: search: --${f}[ :]" "$tmp/with.err"; then
			bad "expected a refusal (exit 2, 'paraplan: search: --$f ...'), got exit $rc: $(cat "$tmp/with.err")"
		fi
		continue
	fi
	if [ "$rc" != 0 ]; then
		bad "expected it applied, got exit $rc: $(cat "$tmp/with.err")"
		continue
	fi
	if [ "$f" = output ]; then
		# The result goes to the file instead of standard output.
		grep -v '"wall_s"' "$value" >"$tmp/file"
		{ [ ! -s "$tmp/with" ] && cmp -s "$tmp/file" "$tmp/base"; } ||
			bad "the file does not hold the search's output, or stdout is not empty"
		rm -f "$value"
		# shellcheck disable=SC2086
		run "$tmp/twice" $common $ctx $fmt --$f $alt --$f $value
		{ [ -s "$value" ] && [ ! -e "$alt" ]; } || bad "given twice, the last file does not win"
		continue
	fi
	cmp -s "$tmp/base" "$tmp/with" && bad "accepted, but the output is the same as without it"
	# Given twice, the last wins; ALT must give another answer for that to show.
	if [ -n "$alt" ]; then
		# shellcheck disable=SC2086
		run "$tmp/alt" $common $ctx $fmt --$f $alt
		# shellcheck disable=SC2086
		run "$tmp/twice" $common $ctx $fmt --$f $alt --$f $value
		cmp -s "$tmp/alt" "$tmp/with" && bad "'$alt' and '$value' give the same output; pick another alternative"
		cmp -s "$tmp/twice" "$tmp/with" || bad "given twice, the last value ('$value') does not win"
	fi
done
# Abbreviations are unknown options (estimate's flags and search's own).
nabbr=0
for f in $all; do
	p=${f%?}
	[ -z "$p" ] && continue
	echo "$all" | grep -qx -- "$p" && continue # itself a flag (tp2 -> tp)
	nabbr=$((nabbr + 1))
	# shellcheck disable=SC2086
	run "$tmp/abbr" $common --$p 1
	if [ "$(cat "$tmp/abbr.rc")" != 2 ] || [ "$(wc -l <"$tmp/abbr.err")" != 1 ] ||
		! grep -qF "paraplan: search: unknown option '--$p'" "$tmp/abbr.err"; then
		echo "--$p (abbreviating --$f): expected an unknown option, got exit $(cat "$tmp/abbr.rc"): $(cat "$tmp/abbr.err")"
		fail=1
	fi
done
echo "search_flags: $n estimate flags, $nabbr abbreviations checked"
exit $fail
