#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# model-check.sh: fastmsg-bench-mcast over a grid of member counts, sizes and trees (plus auto),
# repeated with the trees interleaved, then model_check.py's verdict: how close the model's
# prediction is to each tree's measured median, and whether auto's choice is as fast as the
# best tree. See bench/README.md, "Model check".
#
# Each repeat is one fastmsg-bench-mcast job per member count, covering every tree and auto,
# with -r 1 and the trees in an order shuffled per job (fixed by --seed), so that a change of
# CPU placement or load between jobs hits every tree alike; each job calibrates the model's
# costs (--calibrate) and times every member from the root's send (--common-clock: one kernel).
# Every job's CSV goes to --raw, which model_check.py --raw FILE reduces again on its own.
#
# Exits 0 when every job ran and gave every row (whatever the figures), 1 when a job failed or
# rows are missing, 2 on a bad option, 77 when --cluster cannot make its namespaces here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")

usage() {
    cat <<'EOF'
usage: bench/model-check.sh [options] [-- fastmsg-bench-mcast options]
  -n, --members LIST   member counts, one job each per repeat (default 4)
      --sizes LIST     message sizes (K, M suffixes; default --min .. --max by --step)
      --min SIZE       smallest size (default 8)
      --max SIZE       largest size (default 16M)
      --step F         each size F times the last (default 8: 8, 64, 512, ... 16M)
      --trees LIST     named trees (default flat,chain,binomial,kbinomial,postal); auto is
                       always added
  -r, --repeats N      jobs per member count, trees interleaved (default 5, at least 2)
      --runs N         each job's -r, timed runs per row (default 1)
  -i, --iterations N   each job's -i, multicasts per run (default the benchmark's)
      --seed S         the tree orders' seed (default 1): the same seed, the same orders
      --no-calibrate   jobs use the model's estimated costs instead of calibrating
      --provider P     FM_PROVIDER on this host (default shm)
      --cluster LIST   members are emulated hosts (bench/cluster, needs root): one cluster
                       of the largest count, one rank per host, FM_PROVIDER=tcp on fm0;
                       LIST replaces -n
      --rate RATE      --cluster's link rate, both ways (default 1gbit)
      --prefix P       --cluster's namespace names (default fmmc)
      --auto-bound B   auto is met within (1+B) x the best tree's median (default 0.10)
      --model-bound B  the model is met within 1 +- B of the measured median (default 0.25)
      --raw FILE       every job's CSV (default bench/results/local/model-check.csv)
      --detail         also print every tree's median, range and model per cell
      --out FILE       the reduced figures per cell and tree as CSV
      --build DIR      the meson build directory (default $BUILD_DIR or build)
      --timeout S      end a job after S seconds (default 600)
  -h, --help           this text
EOF
}

die() {
    echo "model-check: $*" >&2
    exit 2
}

# A size with an optional K/M/G suffix, in bytes.
bytes() {
    local s=$1 m=1
    case $s in
    *[kK]) m=1024 s=${s%?} ;;
    *[mM]) m=1048576 s=${s%?} ;;
    *[gG]) m=1073741824 s=${s%?} ;;
    esac
    if ! [[ $s =~ ^[0-9]+$ ]] || ((s == 0)); then die "bad size '$1'"; fi
    echo $((s * m))
}

positive() {
    if ! [[ $2 =~ ^[0-9]+$ ]] || (($2 == 0)); then die "$1 takes a positive number, not '$2'"; fi
}

members=4 sizes='' min=8 max=16M step=8
trees=flat,chain,binomial,kbinomial,postal
repeats=5 runs=1 iters='' seed=1 calibrate=1 provider=shm
cluster='' rate=1gbit prefix=fmmc
auto_bound=0.10 model_bound=0.25 raw='' detail='' out=''
build=${BUILD_DIR:-$top/build} tmo=600
extra=()
while (($#)); do
    opt=$1
    case $opt in
    -h | --help)
        usage
        exit 0
        ;;
    --no-calibrate) calibrate=0 ;;
    --detail) detail=1 ;;
    --)
        shift
        extra=("$@")
        break
        ;;
    -n | --members | --sizes | --min | --max | --step | --trees | -r | --repeats | --runs | \
        -i | --iterations | --seed | --provider | --cluster | --rate | --prefix | \
        --auto-bound | --model-bound | --raw | --out | --build | --timeout)
        (($# > 1)) || die "$opt needs a value"
        v=$2
        shift
        case $opt in
        -n | --members) members=$v ;;
        --sizes) sizes=$v ;;
        --min) min=$v ;;
        --max) max=$v ;;
        --step) step=$v ;;
        --trees) trees=$v ;;
        -r | --repeats) repeats=$v ;;
        --runs) runs=$v ;;
        -i | --iterations) iters=$v ;;
        --seed) seed=$v ;;
        --provider) provider=$v ;;
        --cluster) cluster=$v ;;
        --rate) rate=$v ;;
        --prefix) prefix=$v ;;
        --auto-bound) auto_bound=$v ;;
        --model-bound) model_bound=$v ;;
        --raw) raw=$v ;;
        --out) out=$v ;;
        --build) build=$v ;;
        --timeout) tmo=$v ;;
        esac
        ;;
    *)
        usage >&2
        die "unknown option '$opt'"
        ;;
    esac
    shift
done

positive --repeats "$repeats"
((repeats >= 2)) || die "--repeats: at least 2, or there is no range"
positive --runs "$runs"
[ -z "$iters" ] || positive --iterations "$iters"
positive --timeout "$tmo"
positive --step "$step"
((step >= 2)) || die "--step: at least 2"
for b in "$auto_bound" "$model_bound"; do
    [[ $b =~ ^[0-9]*\.?[0-9]+$ ]] || die "a bound is a number such as 0.25, not '$b'"
done
[ -z "$cluster" ] || members=$cluster
IFS=, read -ra member_list <<<"$members"
((${#member_list[@]})) || die "no member counts"
max_members=0
for n in "${member_list[@]}"; do
    if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 2)); then
        die "a multicast needs at least 2 members, not '$n'"
    fi
    ((n > max_members)) && max_members=$n
done
# The sizes in bytes, ascending, as the benchmark prints them.
size_list=()
if [ -n "$sizes" ]; then
    IFS=, read -ra given <<<"$sizes"
    for s in "${given[@]}"; do size_list+=("$(bytes "$s")"); done
    mapfile -t size_list < <(printf '%s\n' "${size_list[@]}" | sort -nu)
else
    lo=$(bytes "$min") hi=$(bytes "$max")
    ((lo <= hi)) || die "--min is larger than --max"
    for ((s = lo; s <= hi; s *= step)); do size_list+=("$s"); done
fi
((${#size_list[@]})) || die "no sizes"
size_csv=$(IFS=,; echo "${size_list[*]}")
# The named trees, then auto (once, whatever the list said).
IFS=, read -ra named <<<"$trees"
tree_list=()
for t in "${named[@]}"; do
    [ -n "$t" ] && [ "$t" != auto ] && tree_list+=("$t")
done
((${#tree_list[@]})) || die "--trees names no tree besides auto"
tree_list+=(auto)
tree_csv=$(IFS=,; echo "${tree_list[*]}")

fmrun=$build/runtime/launcher/fastmsg-run
mcast=$build/bench/fastmsg-bench-mcast
for f in "$fmrun" "$mcast"; do
    [ -x "$f" ] || die "$f not built (meson compile -C $build)"
done
py=python3
reducer=$here/model_check.py
raw=${raw:-$here/results/local/model-check.csv}
mkdir -p "$(dirname "$raw")"
tmp=$(mktemp -d)
cluster_up=
# shellcheck disable=SC2317 # (the traps call it)
cleanup() {
    if [ -n "$cluster_up" ]; then
        bash "$here/cluster/cluster.sh" down --prefix "$prefix" >/dev/null 2>&1 || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

bench_opts=(--sizes "$size_csv" -r "$runs" --common-clock --quiet 1.5 --csv --timeout 60)
[ -z "$iters" ] || bench_opts+=(-i "$iters")
((calibrate)) && bench_opts+=(--calibrate)
bench_opts+=(${extra[@]+"${extra[@]}"})

if [ -n "$cluster" ]; then
    agent=$here/cluster/netns-agent
    rc=0
    bash "$here/cluster/cluster.sh" up "$max_members" --rate "$rate" --prefix "$prefix" ||
        rc=$?
    if ((rc)); then
        bash "$here/cluster/cluster.sh" down --prefix "$prefix" >/dev/null 2>&1 || true
        echo "model-check: no emulated cluster (cluster.sh up exited $rc)" >&2
        exit "$((rc == 77 ? 77 : 1))"
    fi
    cluster_up=1
    addr0=$(bash "$here/cluster/cluster.sh" addr 0)
    where="$max_members emulated hosts ($prefix*), links $rate, FM_PROVIDER=tcp FM_IFACE=fm0"
else
    where="this host, FM_PROVIDER=$provider"
fi

# launch N CMD...: CMD under fastmsg-run with N members, here or across the cluster's first N
# hosts (one rank each, fastmsg-run in host 0 as bench/cluster/README.md shows).
launch() {
    local n=$1
    shift
    if [ -n "$cluster" ]; then
        FM_PROVIDER=tcp FM_IFACE=fm0 timeout -k 5 "$tmo" "$agent" "${prefix}0" "$fmrun" -n "$n" \
            --agent "$agent" --hosts "$(bash "$here/cluster/cluster.sh" hosts "$n" --prefix "$prefix")" \
            --addr "$addr0" "$@"
    elif [ "$provider" = shm ]; then
        FM_PROVIDER=shm timeout -k 5 "$tmo" "$fmrun" -n "$n" "$@"
    else
        FM_PROVIDER=$provider FI_TCP_IFACE=${FI_TCP_IFACE:-lo} timeout -k 5 "$tmo" "$fmrun" -n "$n" "$@"
    fi
}

{
    echo "# model-check.sh $(date -u +%FT%TZ) on $where; git $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo -)"
    echo "# grid: members=$(IFS=,; echo "${member_list[*]}") sizes=$size_csv trees=$tree_csv repeats=$repeats seed=$seed"
} >"$raw"
header= # the first job's CSV header (bench/mc.h's MC_CSV_HEADER); every job must print it

status=0
start=$SECONDS
for ((rep = 1; rep <= repeats && status == 0; rep++)); do
    for n in "${member_list[@]}"; do
        order=$("$py" "$reducer" --shuffle "$tree_csv" --seed "$seed" --key "$rep:$n")
        cmd=("$mcast" --trees "$order" "${bench_opts[@]}")
        echo "# repeat $rep, $n members: ${cmd[*]##*/}" >>"$raw"
        t0=$SECONDS
        rc=0
        launch "$n" "${cmd[@]}" >"$tmp/out" 2>"$tmp/err" || rc=$?
        got=$(head -1 "$tmp/out")
        if ((rc == 0)) && [ -z "$header" ] && [[ $got == provider,*,completion_us,* ]]; then
            header=$got
            echo "repeat,$header" >>"$raw"
        fi
        if ((rc)) || [ "$got" != "$header" ]; then
            echo "model-check: repeat $rep, $n members: the job exited $rc" \
                "$( ((rc)) || echo "but printed no CSV header")" >&2
            tail -c 4000 "$tmp/out" >&2
            tail -c 4000 "$tmp/err" >&2
            echo "# repeat $rep, $n members: FAILED, exit $rc" >>"$raw"
            status=1
            break
        fi
        # anything the job said besides its rows
        [ ! -s "$tmp/err" ] || sed "s/^/model-check: repeat $rep, $n members: /" "$tmp/err" >&2
        sed -n '2,$p' "$tmp/out" | grep -v '^#' | sed "s/^/$rep,/" >>"$raw"
        echo "model-check: repeat $rep/$repeats, $n members: $order ($((SECONDS - t0)) s)" >&2
    done
done
echo "model-check: $((SECONDS - start)) s of jobs; raw CSV in $raw" >&2
echo "# model-check: $where"
echo "# re-reduce: bench/model_check.py --raw $raw --auto-bound $auto_bound --model-bound $model_bound"
reduce=("$py" "$reducer" --raw "$raw" --auto-bound "$auto_bound" --model-bound "$model_bound")
[ -z "$detail" ] || reduce+=(--detail)
[ -z "$out" ] || reduce+=(--out "$out")
rc=0
"${reduce[@]}" || rc=$?
((status)) || status=$rc
exit "$status"
