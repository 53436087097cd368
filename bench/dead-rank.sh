#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# dead-rank.sh: how long a job takes to end once one of its ranks is killed (SIGKILL) in the
# middle of a transfer. One sample is one 4-rank job of the robust tests' dead_peer program
# (tests/integration/robust/dead_peer.c): the victim prints its clock just before it raises
# SIGKILL, and the sample is the time from there to the launcher's exit. The table shows the
# median, min and max per launcher, provider and case; repeats are interleaved so that noise
# on the machine hits every row alike. Whether the job ends correctly (non-zero, the rank
# named, nothing left behind) is the robust suite's business; this only times it. See
# bench/README.md.
#
# usage: bench/dead-rank.sh [-r N] [--launchers L,...] [--providers P,...] [--build DIR]
set -euo pipefail

usage() {
  cat <<'EOF'
usage: dead-rank.sh [options]
  -r N              jobs per row (default 7)
  --launchers L,... any of run (fastmsg-run), fake (tests' fake PMI-1 server, which ends no
                    rank: fastmsg's own detection ends the job), openmpi (mpirun.openmpi),
                    mpich (mpiexec.mpich); default run,fake,openmpi,mpich
  --providers P,... shm, tcp (default shm,tcp)
  --build DIR       meson build directory (default $BUILD_DIR, else build/ in the repository)
  -h                this text
Cases: stream (rank 1 dies half way through writing a 64 MiB message to rank 2) and mcast
(rank 2, an inner member of a binomial tree, dies a quarter of the way into an 8 MiB
multicast from rank 0).
EOF
}

repo=$(cd "$(dirname "$0")/.." && pwd)
repeats=7 launchers=run,fake,openmpi,mpich providers=shm,tcp
build=${BUILD_DIR:-$repo/build}
while [ $# -gt 0 ]; do
  case $1 in
    -r) repeats=$2; shift ;;
    --launchers) launchers=$2; shift ;;
    --providers) providers=$2; shift ;;
    --build) build=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "dead-rank: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

fm_run=$build/runtime/launcher/fastmsg-run
prog=$build/tests/integration/robust/dead_peer
fake_pmi1=$repo/tests/integration/pmi/fake_pmi1.py
for f in "$fm_run" "$prog"; do
  [ -x "$f" ] || { echo "dead-rank: $f not built (meson compile -C $build)" >&2; exit 1; }
done
IFS=, read -ra launchers <<<"$launchers"
IFS=, read -ra providers <<<"$providers"
declare -A case_args=(
  [stream]="--mode stream --victim 1"
  [mcast]="--mode mcast --victim 2 --tree binomial --size 8M"
)
cases=(stream mcast)
n=4
guard=60 # seconds before a job counts as hung
slow=5   # seconds from the kill past which a job's output is kept

launcher_cmd() { # LAUNCHER: sets cmd, the command line before the program
  case $1 in
    run) cmd=("$fm_run" -n "$n") ;;
    fake) cmd=(python3 "$fake_pmi1" -n "$n" --) ;;
    openmpi)
      command -v mpirun.openmpi >/dev/null || { echo "dead-rank: no mpirun.openmpi" >&2; exit 1; }
      cmd=(mpirun.openmpi --oversubscribe -n "$n" -x FM_PROVIDER -x FI_TCP_IFACE -x FM_TIMEOUT
           -x FM_VERBOSE --mca btl self --mca pml ob1 --mca oob_tcp_if_include lo) ;;
    mpich)
      command -v mpiexec.mpich >/dev/null || { echo "dead-rank: no mpiexec.mpich" >&2; exit 1; }
      cmd=(mpiexec.mpich -n "$n") ;;
    *) echo "dead-rank: unknown launcher '$1'" >&2; exit 2 ;;
  esac
}
for l in "${launchers[@]}"; do launcher_cmd "$l"; done # unknown or missing: stop before any job

# Variables of a launcher this script runs under must not reach the jobs.
for v in $(env | sed -n 's/^\(PMI[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
unset FASTMSG_RUN_ADDR FM_BOOTSTRAP
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export FI_TCP_IFACE=lo FM_TIMEOUT=60 FM_VERBOSE=0

work=$(mktemp -d "${TMPDIR:-/tmp}/dead-rank.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=$work/out
errors=0

# A killed rank leaves its shm region ("/dev/shm/<pid>:...") behind: remove those made during
# the job by processes now gone, so that repeats do not pile them up.
clean_shm() { # MARK: a file older than anything the job made
  local f p st
  for f in /dev/shm/[0-9]*:*; do
    if [ -e "$f" ] && [ "$f" -nt "$1" ]; then
      p=${f#/dev/shm/}
      st=$(awk '{ print $3 }' "/proc/${p%%:*}/stat" 2>/dev/null || true)
      case $st in "" | Z | X) rm -f "$f" ;; esac # gone, or a zombie
    fi
  done
}

sample() { # LAUNCHER PROVIDER CASE: one job; its times (us) go to files named after the row
  local l=$1 p=$2 c=$3 tag rc=0 start end t_kill left
  launcher_cmd "$l"
  tag=dead-rank-$$-$RANDOM # on every rank's command line: finds what a job leaves behind
  touch "$work/mark"
  start=$(date +%s%N)
  # shellcheck disable=SC2086 # the case's arguments are words
  FM_PROVIDER=$p timeout -k 5 "$guard" "${cmd[@]}" "$prog" ${case_args[$c]} --tag "$tag" \
    >"$out" 2>&1 || rc=$?
  end=$(date +%s%N)
  t_kill=$(sed -n 's/^dead_peer: rank [0-9]* raising SIGKILL at \([0-9]*\)$/\1/p' "$out" | head -1)
  left=$(pgrep -f -- "$tag" || true)
  # shellcheck disable=SC2086 # one pid a word
  [ -z "$left" ] || kill -KILL $left 2>/dev/null || true
  clean_shm "$work/mark"
  if [ "$rc" -eq 0 ] || [ $(((end - start) / 1000000000)) -ge "$guard" ] || [ -z "$t_kill" ]; then
    echo "dead-rank: $l $p $c: no usable sample (exit $rc$([ -n "$t_kill" ] || echo ", no kill"))" >&2
    tail -n 5 "$out" >&2
    errors=$((errors + 1))
    return
  fi
  echo $(((end - t_kill) / 1000)) >>"$work/$l-$p-$c" # us
  if [ $(((end - t_kill) / 1000000000)) -ge "$slow" ]; then # kept for a look afterwards
    local keep
    keep=$(mktemp "${TMPDIR:-/tmp}/dead-rank-slow-$l-$p-$c.XXXXXX")
    cp "$out" "$keep"
    echo "dead-rank: $l $p $c: the job ended $(((end - t_kill) / 1000000)) ms after the kill;" \
      "its output is in $keep" >&2
  fi
  # When the last survivor's blocking call failed, and when the last survivor exited: only
  # from jobs in which every survivor got that far (a launcher ending the job may kill them).
  local fails exits
  fails=$(sed -n 's/^dead_peer: rank \([0-9]*\): .* failed at \([0-9]*\): .*/\1 \2/p' "$out")
  exits=$(sed -n 's/^dead_peer: rank \([0-9]*\) exiting at \([0-9]*\)$/\1 \2/p' "$out")
  if [ "$(cut -d' ' -f1 <<<"$exits" | sort -u | grep -c .)" -eq $((n - 1)) ]; then
    echo $((($(cut -d' ' -f2 <<<"$fails" | sort -n | tail -n 1) - t_kill) / 1000)) \
      >>"$work/$l-$p-$c-failed"
    echo $((($(cut -d' ' -f2 <<<"$exits" | sort -n | tail -n 1) - t_kill) / 1000)) \
      >>"$work/$l-$p-$c-exited"
  fi
}

for ((i = 0; i < repeats; i++)); do
  for l in "${launchers[@]}"; do
    for p in "${providers[@]}"; do
      for c in "${cases[@]}"; do
        sample "$l" "$p" "$c"
      done
    done
  done
done

stats() { # FILE: median min max count, in ms
  sort -n "$1" | awk '{ v[NR] = $1 } END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%8.1f %8.1f %8.1f %5d", m / 1000, v[1] / 1000, v[NR] / 1000, NR }'
}

echo "# dead-rank: $n ranks, one killed (SIGKILL) mid-transfer; ms from the kill to the launcher's exit"
echo "# stream: rank 1 dies half way through a 64 MiB message to rank 2; mcast: rank 2 (inner"
echo "# member, binomial tree) dies a quarter of the way into an 8 MiB multicast from rank 0"
echo "# failed, exited: ms from the kill until the last survivor's blocking call failed and until"
echo "# it exited (after fm_finalize); medians over the jobs in which every survivor got that far"
echo "# (a launcher that ends the job itself often kills them first): 'all' of them"
printf "%-9s %-8s %-7s %8s %8s %8s %5s %8s %8s %5s\n" launcher provider case median min max \
  jobs failed exited all
median() { if [ -s "$1" ]; then stats "$1" | awk '{ print $1 }'; else echo -; fi; }
count() { if [ -s "$1" ]; then grep -c . "$1"; else echo 0; fi; }
for l in "${launchers[@]}"; do
  for p in "${providers[@]}"; do
    for c in "${cases[@]}"; do
      f=$work/$l-$p-$c
      [ -s "$f" ] || { printf "%-9s %-8s %-7s %8s\n" "$l" "$p" "$c" "-"; continue; }
      printf "%-9s %-8s %-7s %s %8s %8s %5d\n" "$l" "$p" "$c" "$(stats "$f")" \
        "$(median "$f-failed")" "$(median "$f-exited")" "$(count "$f-exited")"
    done
  done
done
[ "$errors" -eq 0 ] || { echo "dead-rank: $errors job(s) gave no sample" >&2; exit 1; }
