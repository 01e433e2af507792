#!/usr/bin/env bash
# tests/cluster/slurm-sweep.sh — `gmsim sweep --slurm` on a real one-node
# Slurm cluster.
#
# As root, starts a private munged and a one-node Slurm (slurmctld and
# slurmd from Debian's slurm-wlm) whose state, spool, sockets, pid and log
# files all live in one temporary folder, on free ports, then checks:
#   1. a sweep of 50 synthetic traces x 4 policies (200 runs) split over 4
#      array tasks by `gmsim sweep --slurm --tasks 4`, merged by the job
#      that depends on the array, equals the same sweep run in one local
#      process row for row: the runs (trace digest, policy, parameters,
#      device, version, metrics less the measured sim_ns_per_event) and
#      each run's timeline, with no run stored twice;
#   2. with task 2 killed mid-way (its shard holding some runs), `gmsim
#      merge` refuses the shards, naming shard 2/4, and writes nothing;
#      resubmitting task 2 and then the merge job, as the generated scripts
#      say, gives complete results, equal to the local ones, no duplicates.
# The local sweep runs in one process (-j 1); the first cluster sweep's
# tasks run one at a time (--sbatch-arg=--exclusive), the second's two at a
# time.  It prints the sum of the first's task times against the local
# sweep's time (not checked: a shared machine's load makes it noisy).
#
# Skips (exit 77, one line on stderr saying why) when not root, when
# slurm-wlm or munge is missing, or when munged or Slurm cannot be started.
# Every daemon it started is stopped, and the folder removed, on every exit
# (set GM_SLURM_KEEP=1 to keep the folder).  Exit 1 on a failed check, with
# what differed and the Slurm and task logs on stderr.
#
# Usage: slurm-sweep.sh GMSIM
set -euo pipefail

POLICIES=caching,bfc,buddy,tlsf
TASKS=4
KILLED=2          # the task killed mid-way
# Bound on waiting for a job: 120 s, more where gmsim runs slower (the
# sanitized build sets GM_SLURM_WAIT_S, tests/CMakeLists.txt).
WAIT_S=${GM_SLURM_WAIT_S:-120}

say()  { printf 'slurm-sweep: %s\n' "$*" >&2; }
skip() { say "skipped: $*"; exit 77; }
fail() { say "FAILED: $*"; dump_logs; exit 1; }

# ---------------------------------------------------------------- set-up

check_tools() {
  [ "$(id -u)" = 0 ] || skip "not root (the test starts munged and Slurm's daemons as root)"
  local t
  for t in slurmctld slurmd sbatch squeue scancel scontrol sinfo munged munge unmunge mungekey python3; do
    command -v "$t" >/dev/null 2>&1 ||
      skip "$t not installed (as root, 'scripts/deps slurm-wlm munge' installs slurm-wlm and munge)"
  done
  python3 -c 'import sqlite3, json' 2>/dev/null || skip "python3 has no sqlite3 module"
}

DIR=""           # the temporary folder: cluster state, logs, stores
MUNGED_PID="" CTLD_PID="" SLURMD_PID="" KILLER_PID=""

stop_pid() {     # stop_pid PID: TERM, then KILL after 10 s; reap it
  local pid=$1 i
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || return 0
  for i in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  stop_pid "$KILLER_PID"
  if [ -n "$CTLD_PID" ] && kill -0 "$CTLD_PID" 2>/dev/null; then
    # Cancel what is left so slurmd ends the job steps it started.
    scancel --user=root >/dev/null 2>&1
    local i
    for i in $(seq 50); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  stop_pid "$SLURMD_PID"
  stop_pid "$CTLD_PID"
  stop_pid "$MUNGED_PID"
  if [ -n "$DIR" ]; then
    if [ "${GM_SLURM_KEEP:-0}" = 1 ]; then say "kept $DIR"; else rm -rf "$DIR"; fi
  fi
  exit "$rc"
}

# Print the daemons' and the jobs' logs to stderr.
dump_logs() {
  local f
  for f in "$DIR"/munge/munged.log "$DIR"/slurm/slurmctld.log "$DIR"/slurm/slurmd.log \
           "$DIR"/*.shards/logs/* "$DIR"/*.log; do
    [ -f "$f" ] || continue
    printf '==== %s (last 60 lines)\n' "$f" >&2
    tail -n 60 "$f" >&2
  done
}

free_port_pair() {  # a port P such that P and P+1 are not listened on
  local p i used
  used=$(ss -Hltn 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' || true)
  for i in $(seq 50); do
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
    if ! grep -qx "$p" <<<"$used" && ! grep -qx "$((p + 1))" <<<"$used"; then
      echo "$p"; return 0
    fi
  done
  return 1
}

# A private munged: own key, socket, pid, seed and log in $DIR/munge, so a
# system munged (running or not) is left alone.
start_munge() {
  mkdir -p "$DIR/munge/key"
  chmod 755 "$DIR/munge"; chmod 700 "$DIR/munge/key"
  mungekey --create --keyfile="$DIR/munge/key/munge.key" >/dev/null 2>&1 ||
    skip "mungekey cannot create a munge key"
  MUNGE_SOCKET="$DIR/munge/munge.socket"
  munged --foreground --force --socket="$MUNGE_SOCKET" \
    --key-file="$DIR/munge/key/munge.key" --pid-file="$DIR/munge/munged.pid" \
    --seed-file="$DIR/munge/munged.seed" --log-file="$DIR/munge/munged.log" \
    >"$DIR/munge/munged.log" 2>&1 &
  MUNGED_PID=$!
  local i
  for i in $(seq 50); do
    if munge --socket="$MUNGE_SOCKET" -n 2>/dev/null |
         unmunge --socket="$MUNGE_SOCKET" >/dev/null 2>&1; then
      return 0
    fi
    kill -0 "$MUNGED_PID" 2>/dev/null || break
    sleep 0.1
  done
  skip "munged cannot be started: $(tail -n 1 "$DIR/munge/munged.log" 2>/dev/null)"
}

write_slurm_conf() {
  local host cpus mem port
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
  port=$(free_port_pair) || skip "no free port pair for slurmctld and slurmd"
  mkdir -p "$DIR/slurm/state" "$DIR/slurm/spool"
  export SLURM_CONF="$DIR/slurm/slurm.conf"
  cat >"$SLURM_CONF" <<EOF
ClusterName=gmsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$DIR/slurm/state
SlurmdSpoolDir=$DIR/slurm/spool
SlurmctldPidFile=$DIR/slurm/slurmctld.pid
SlurmdPidFile=$DIR/slurm/slurmd.pid
SlurmctldLogFile=$DIR/slurm/slurmctld.log
SlurmdLogFile=$DIR/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  NODE=$host
}

start_slurm() {
  slurmctld -D -c >>"$DIR/slurm/slurmctld.out" 2>&1 &
  CTLD_PID=$!
  slurmd -D >>"$DIR/slurm/slurmd.out" 2>&1 &
  SLURMD_PID=$!
  local i state=""
  for i in $(seq 60); do
    kill -0 "$CTLD_PID" 2>/dev/null ||
      skip "slurmctld cannot be started: $(tail -n 1 "$DIR/slurm/slurmctld.log" "$DIR/slurm/slurmctld.out" 2>/dev/null | grep -v '^==' | grep . | tail -n 1)"
    kill -0 "$SLURMD_PID" 2>/dev/null ||
      skip "slurmd cannot be started: $(tail -n 1 "$DIR/slurm/slurmd.log" "$DIR/slurm/slurmd.out" 2>/dev/null | grep -v '^==' | grep . | tail -n 1)"
    state=$(sinfo -h -n "$NODE" -o %t 2>/dev/null || true)
    [ "$state" = idle ] && return 0
    sleep 0.5
  done
  skip "Slurm's node did not become idle in 30 s (state '${state:-unknown}'; see $DIR/slurm/*.log)"
}

# ---------------------------------------------------------------- jobs

# wait_gone ID...: wait until no job (array task) of the IDs is pending,
# running or completing; fail after WAIT_S seconds.
wait_gone() {
  local ids i
  ids=$(IFS=,; echo "$*")
  local end=$((SECONDS + WAIT_S)) # wall-clock: a slow squeue does not stretch it
  while [ "$SECONDS" -lt "$end" ]; do
    [ -z "$(squeue -h -o %i -j "$ids" 2>/dev/null)" ] && return 0
    kill -0 "$CTLD_PID" 2>/dev/null || fail "slurmctld died"
    sleep 0.5
  done
  squeue -j "$ids" >&2 || true
  fail "jobs $ids still queued after ${WAIT_S} s"
}

# check_completed ID: every task of job ID ended in state COMPLETED.
check_completed() {
  local states
  states=$(scontrol -o show job "$1" | grep -o 'JobState=[A-Z_]*' | sort | uniq -c | tr -s ' ')
  [ -n "$states" ] || fail "job $1 unknown to slurmctld"
  if grep -qv 'JobState=COMPLETED' <<<"$states"; then
    scontrol show job "$1" >&2 || true
    fail "job $1 did not complete:$(tr '\n' ' ' <<<"$states")"
  fi
}

# submit OUT.db [OPTION...]: `gmsim sweep --slurm` into OUT.db; sets
# FOLDER, ARRAY and MERGE from what it prints with --json.
submit() {
  local out=$1 json tasks
  shift
  json=$("$GM" sweep in.db --policies "$POLICIES" -o "$out" --slurm --tasks "$TASKS" --json \
           "$@" 2>"$out.submit.log") ||
    fail "gmsim sweep --slurm -o $out failed: $(cat "$out.submit.log")"
  if ! read -r FOLDER ARRAY MERGE tasks < <(python3 -c '
import json, sys
o = json.loads(sys.argv[1])
print(o["folder"], o["array_job"], o["merge_job"], o["tasks"])' "$json" 2>/dev/null); then
    fail "gmsim sweep --slurm --json printed no folder, array_job, merge_job and tasks: $json"
  fi
  [ "$tasks" = "$TASKS" ] || fail "gmsim sweep --slurm says tasks=$tasks, asked for $TASKS"
  [ "$(realpath "$FOLDER")" = "$DIR/${out%.db}.shards" ] ||
    fail "gmsim sweep --slurm -o $out used the folder '$FOLDER', not '$DIR/${out%.db}.shards'"
  local f
  for f in sweep.sbatch merge.sbatch; do
    [ -f "$FOLDER/$f" ] || fail "gmsim sweep --slurm wrote no $FOLDER/$f"
  done
  say "$out: array job $ARRAY, merge job $MERGE, folder $FOLDER"
}

# ---------------------------------------------------------------- stores

# runs_in DB: how many runs DB holds (0 when it does not exist yet).
runs_in() {
  python3 - "$1" <<'EOF'
import sqlite3, sys, os
try:
    c = sqlite3.connect('file:%s?mode=ro' % sys.argv[1], uri=True, timeout=2)
    print(c.execute('select count(*) from runs').fetchone()[0])
except sqlite3.Error:
    print(0)
EOF
}

# same_runs REF GOT: GOT holds exactly REF's runs and timelines, each once;
# prints how many, or what differs (on stderr) and returns 1.
same_runs() {
  python3 - "$1" "$2" <<'EOF'
import json, sqlite3, sys

VOLATILE = {'sim_ns_per_event'}   # measured wall time, not a result

def load(path):
    c = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    runs, dups = {}, []
    for rid, *key, metrics in c.execute(
            'select id, trace_digest, policy, params, device, gmsim_version, metrics from runs'):
        key = tuple(key)
        m = json.loads(metrics)
        for k in VOLATILE:
            m.pop(k, None)
        tl = c.execute('select point, event, ts_ns, requested, allocated, reserved'
                       ' from timelines where run_id = ? order by point', (rid,)).fetchall()
        if key in runs:
            dups.append(key)
        runs[key] = (m, tl)
    return runs, dups

ref, _ = load(sys.argv[1])
got, dups = load(sys.argv[2])
bad = []
for k in dups:
    bad.append('stored twice: %s' % (k[:2],))
for k in sorted(set(ref) - set(got)):
    bad.append('missing: %s' % (k[:2],))
for k in sorted(set(got) - set(ref)):
    bad.append('extra: %s' % (k[:2],))
for k in sorted(set(ref) & set(got)):
    if ref[k][0] != got[k][0]:
        diff = {m: (ref[k][0].get(m), got[k][0].get(m))
                for m in set(ref[k][0]) | set(got[k][0]) if ref[k][0].get(m) != got[k][0].get(m)}
        bad.append('metrics differ: %s: %s' % (k[:2], diff))
    if ref[k][1] != got[k][1]:
        bad.append('timeline differs: %s (%d vs %d points)' % (k[:2], len(ref[k][1]), len(got[k][1])))
if not ref:
    bad.append('the reference holds no run')
for line in bad[:20]:
    print(line, file=sys.stderr)
if bad:
    print('%d differences' % len(bad), file=sys.stderr)
    sys.exit(1)
print('%d runs, %d timeline points' % (len(ref), sum(len(v[1]) for v in ref.values())))
EOF
}

# ---------------------------------------------------------------- steps

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# 50 gpt2 training traces: 25 sequence lengths at batch 2 and at batch 4,
# with different step counts, so the shards balance traces of two sizes.
make_traces() {
  local seqs=64,96,128,160,192,224,256,288,320,352,384,416,448,480,512,544,576,608,640,704,768,832,896,960,1024
  "$GM" synth --model gpt2 --seq "$seqs" --batch 2 --steps 80 -o in.db >/dev/null ||
    fail "gmsim synth failed"
  "$GM" synth --model gpt2 --seq "$seqs" --batch 4 --steps 120 --name gpt2b4 -o in.db >/dev/null ||
    fail "gmsim synth failed"
}

# The local reference, in one process: its time is the overhead's baseline.
run_local() {
  local t0
  t0=$(now)
  "$GM" sweep in.db --policies "$POLICIES" -o local.db -j 1 >local.log 2>&1 ||
    fail "local sweep failed: $(cat local.log)"
  ONE_S=$(secs "$t0" "$(now)")
  say "local sweep: $(runs_in local.db) runs in $ONE_S s (one process)"
}

# Sum of the task times: from the task logs ("gmsim: shard I/N took X ms",
# printed by sweep.sbatch), else by running the shards here, one after the
# other, each in one process.
task_times() {
  local sum="" i t0 how="from the task logs"
  sum=$(cat "$FOLDER"/logs/* 2>/dev/null |
        sed -nE 's|^gmsim: shard [0-9]+/'"$TASKS"' took ([0-9]+) ms$|\1|p' |
        awk '{ s += $1; n++ } END { if (n == '"$TASKS"') printf "%.2f", s / 1000 }' || true)
  if [ -z "$sum" ]; then
    t0=$(now)
    for i in $(seq "$TASKS"); do
      "$GM" sweep in.db --policies "$POLICIES" -o "shard-here-$i.db" -j 1 --shard "$i/$TASKS" \
        >/dev/null 2>"shard-here-$i.log" || fail "local shard $i/$TASKS failed: $(cat "shard-here-$i.log")"
    done
    sum=$(secs "$t0" "$(now)")
    how="no times in the task logs: the shards run here"
  fi
  say "$TASKS shards took $sum s in all, one process $ONE_S s (ratio $(awk -v a="$sum" -v b="$ONE_S" 'BEGIN { printf "%.3f", a / b }'); $how)"
}

sweep_on_cluster() {
  local t0
  t0=$(now)
  # One task at a time, each with the whole node, so that the task times
  # compare with the one-process sweep's.
  submit cluster.db --sbatch-arg=--exclusive
  wait_gone "$ARRAY" "$MERGE"
  check_completed "$ARRAY"
  check_completed "$MERGE"
  local ntasks
  ntasks=$(scontrol -o show job "$ARRAY" | grep -c 'ArrayTaskId=' || true)
  [ "$ntasks" = "$TASKS" ] || fail "array job $ARRAY has $ntasks tasks, not $TASKS"
  [ -f cluster.db ] || fail "the merge job wrote no cluster.db"
  local same
  same=$(same_runs local.db cluster.db) || fail "cluster.db differs from local.db"
  say "cluster sweep: $same equal to the local ones, in $(secs "$t0" "$(now)") s"
  task_times
}

# start_killer SHARD JOBFILE: in the background, poll SHARD every 10 ms and
# as soon as it holds a run, kill (SIGKILL, as a failing node would) the
# task named in JOBFILE, which is written once the sweep is submitted; so
# the kill follows the first stored run closely, long before the last.
# Prints the runs seen; fails when none is seen in WAIT_S seconds or the
# task ends first.  Sets KILLER_PID.
start_killer() {
  python3 - "$1" "$2" "$WAIT_S" >killer.out 2>killer.log <<'EOF' &
import os, sqlite3, subprocess, sys, time
shard, jobfile, wait_s = sys.argv[1], sys.argv[2], float(sys.argv[3])

def job():
    try:
        with open(jobfile) as f:
            return f.read().strip() or None
    except OSError:
        return None

def queued(j):
    return subprocess.run(['squeue', '-h', '-o', '%T', '-j', j], capture_output=True,
                          text=True).stdout.strip() != ''

db, i, deadline = None, 0, time.time() + wait_s
while time.time() < deadline:
    try:
        if db is None and os.path.exists(shard):
            db = sqlite3.connect('file:%s?mode=ro' % shard, uri=True, timeout=0.05)
        n = db.execute('select count(*) from runs').fetchone()[0] if db else 0
    except sqlite3.Error:
        n = 0                          # being created, or busy: try again
    if n > 0:
        while job() is None and time.time() < deadline:
            time.sleep(0.01)
        subprocess.run(['scancel', '--signal=KILL', '--full', job()], check=True)
        print(n)
        sys.exit(0)
    i += 1
    if i % 25 == 0 and job() and not queued(job()):
        sys.exit('task %s ended before a run was seen in its shard' % job())
    time.sleep(0.01)
sys.exit('no run in %s after %g s' % (shard, wait_s))
EOF
  KILLER_PID=$!
}

# Kill task KILLED mid-way through a sweep into cluster2.db.  A task can
# finish between the killer seeing its first run and the kill (a quick
# task on a quiet machine): then the sweep is cancelled, cleared and
# submitted again, up to three times.
submit_and_kill_one_task() {
  local rc attempt
  for attempt in 1 2 3; do
    rm -f killer.job killer.out killer.log
    start_killer "$DIR/cluster2.shards/shard-$KILLED.db" killer.job
    submit cluster2.db
    echo "${ARRAY}_$KILLED" >killer.job
    rc=0
    wait "$KILLER_PID" || rc=$?
    KILLER_PID=""
    if [ "$rc" -eq 0 ] && ! scontrol -o show job "${ARRAY}_$KILLED" | grep -q 'JobState=COMPLETED'; then
      say "killed task $KILLED with $(cat killer.out) runs in its shard"
      return 0
    fi
    say "attempt $attempt: task $KILLED was not killed mid-way ($(tail -n 1 killer.log 2>/dev/null)); again"
    scancel "$ARRAY" "$MERGE" 2>/dev/null || true
    wait_gone "$ARRAY" "$MERGE"
    rm -rf "$DIR/cluster2.shards" "$DIR/cluster2.db"
  done
  fail "could not kill task $KILLED mid-way in three attempts: $(cat killer.log)"
}

kill_and_resubmit() {
  local t0 out i shards=() rc=0 job
  t0=$(now)
  submit_and_kill_one_task
  scancel "$MERGE"             # afterok can never hold now
  wait_gone "$ARRAY" "$MERGE"
  [ ! -e cluster2.db ] || fail "cluster2.db exists though the merge job was cancelled"
  if scontrol -o show job "${ARRAY}_$KILLED" | grep -q 'JobState=COMPLETED'; then
    fail "task $KILLED completed though it was killed"
  fi
  local log="$FOLDER/logs/shard-$KILLED.log" planned stored
  planned=$(python3 - "$FOLDER/shard-$KILLED.db" <<'EOF'
import sqlite3, sys     # the runs the shard records as its own (shards table)
c = sqlite3.connect('file:%s?mode=ro' % sys.argv[1], uri=True)
print(c.execute('select max(runs) from shards').fetchone()[0] or '')
EOF
  ) || planned=""
  [ -n "$planned" ] || fail "task $KILLED's shard records no shard of the sweep"
  stored=$(runs_in "$FOLDER/shard-$KILLED.db")
  [ "$stored" -lt "$planned" ] ||
    fail "task $KILLED was killed too late: its shard holds all its $planned runs"
  say "task $KILLED's shard holds $stored of its $planned runs"

  for i in $(seq "$TASKS"); do shards+=("$FOLDER/shard-$i.db"); done
  out=$("$GM" merge cluster2.db "${shards[@]}" 2>&1) || rc=$?
  [ "$rc" -ne 0 ] || fail "gmsim merge accepted the shards without task $KILLED's runs: $out"
  grep -q "shard $KILLED/$TASKS has $stored of $planned runs" <<<"$out" ||
    fail "gmsim merge's message does not say shard $KILLED/$TASKS has $stored of $planned runs: $out"
  [ ! -e cluster2.db ] || fail "gmsim merge wrote cluster2.db though it refused the shards"
  say "gmsim merge refused the shards (exit $rc): $(head -n 1 <<<"$out")"

  job=$(sbatch --parsable --array="$KILLED" "$FOLDER/sweep.sbatch") ||
    fail "sbatch --array=$KILLED $FOLDER/sweep.sbatch failed"
  job=${job%%;*}
  wait_gone "$job"
  check_completed "$job"
  local done_before
  done_before=$(sed -nE 's|^([0-9]+) already done,.*|\1|p' "$log" | tail -n 1)
  if [ -z "$done_before" ] || [ "$done_before" -lt "$stored" ]; then
    fail "the resubmitted task $KILLED did not resume from its $stored stored runs: $(cat "$log")"
  fi
  job=$(sbatch --parsable "$FOLDER/merge.sbatch") || fail "sbatch $FOLDER/merge.sbatch failed"
  job=${job%%;*}
  wait_gone "$job"
  check_completed "$job"
  [ -f cluster2.db ] || fail "the resubmitted merge job wrote no cluster2.db"
  local same
  same=$(same_runs local.db cluster2.db) || fail "cluster2.db differs from local.db"
  say "killed and resubmitted: $same equal to the local ones, in $(secs "$t0" "$(now)") s"
}

main() {
  [ $# -eq 1 ] || { echo "usage: slurm-sweep.sh GMSIM" >&2; exit 2; }
  GM=$(realpath "$1")
  [ -x "$GM" ] || { echo "slurm-sweep: no gmsim at '$1'" >&2; exit 2; }
  check_tools
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  DIR=$(mktemp -d "${TMPDIR:-/tmp}/gmsim-slurm.XXXXXX")
  chmod 755 "$DIR"
  start_munge
  write_slurm_conf
  start_slurm
  say "cluster up: node $NODE, $(nproc) CPUs, SLURM_CONF=$SLURM_CONF"
  cd "$DIR"
  make_traces
  run_local
  sweep_on_cluster
  kill_and_resubmit
  say "all checks passed"
}

main "$@"
