#!/usr/bin/env bash
# run.sh BRAID: distributed execution under mpirun (dist/, docs/dist.md).
# Every test runs a script locally (plain braid) and under
# `mpirun --oversubscribe -np N` with a memory budget forced small
# (sysds.local.memory.budget), so that its matrices are distributed, and
# compares the written results (tests/mpi/cmp.py: 1e-10 relative to the
# result's largest magnitude, as distributed sums add in another order).
# -stats shows that the operators did run distributed. Prints
# "N passed, M failed".
set -u
braid=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL mpi: $*"; fail=$((fail + 1)); }
if ! command -v mpirun >/dev/null 2>&1; then
  echo "mpi tests: skipped: mpirun not found (tools/deps.sh installs openmpi-bin)"
  echo "0 passed, 0 failed"; exit 0
fi
# san: braid is the sanitizer build (ASan+UBSan, CI's second pass),
# where each run costs several times its plain CPU: runs whose paths
# other cases cover are left out there (named where they are)
san=; if ldd "$braid" 2>/dev/null | grep -q libasan; then san=1; fi
# python3 resolved once to its interpreter: a pyenv shim starts about 40
# processes per call (6-8 s each under a load of 20, with about 150
# calls here: a third of the suite's time)
py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ] || py=python3
# CI runs as root; 2 cores hold up to 4 ranks
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# MPI's libraries keep their allocations to the end (sanitizer builds)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# MPIRUN_EXTRA: more mpirun options of a launch (go, two_hosts)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Batches: several runs in one mpirun launch (braid's -then: MPI starts
# once, and between runs every rank resets its distributed state and
# statistics, dist_reset, so each run starts as in a new process; a
# launch costs seconds of CPU under the load CI runs at). q BATCH OUT
# ARGS...: queues a run whose output (rank 0's stdout and stderr) goes to
# OUT ("-": the launch's own output); go BATCH NP [VAR=VALUE...]: runs
# the batch's runs in order in one launch (with those variables), its
# status mpirun's (1 when any run failed); gone BATCH WHAT: go, and a
# failed launch reported (its runs' checks then report what is missing)
mkdir -p "$tmp/q"
later=()   # checks of runs in the batches launched at the end (i2, i4)
q() {
  local b=$1 o=$2; shift 2
  { if [ -s "$tmp/q/$b" ]; then printf '%s\0' -then; fi
    printf '%s\0' "$@"; if [ "$o" != - ]; then printf '%s\0' -out "$o"; fi; } >> "$tmp/q/$b"
}
go() {   # (GO_NP=braid: braid's own launcher, braid -np NP, instead of mpirun; GO_WRAP=W: mpirun runs W BRAID ARGS)
  local b=$1 np=$2 a; shift 2
  [ -s "$tmp/q/$b" ] || return 0
  mapfile -d '' a < "$tmp/q/$b"; rm -f "$tmp/q/$b"
  if [ "${GO_NP:-}" = braid ]; then env "$@" BRAID_MPIRUN_OPTS=--oversubscribe timeout 1500 "$braid" -np "$np" "${a[@]}"
  else env "$@" timeout 1500 mpirun --oversubscribe ${MPIRUN_EXTRA:-} -np "$np" ${GO_WRAP:-} "$braid" "${a[@]}"; fi
}
gone() {
  local b=$1 np=$2 what=$3; shift 3
  go "$b" "$np" "$@" > "$tmp/q/$b.out" 2>&1 || bad "$what (batch $b, $np ranks): mpirun failed: $(tail -n 5 "$tmp/q/$b.out")"
}
# join FROM TO: batch FROM's runs first in batch TO (one launch for both:
# same rank count and variables)
join() {
  [ -s "$tmp/q/$1" ] || return 0
  { cat "$tmp/q/$1"; if [ -s "$tmp/q/$2" ]; then printf '%s\0' -then; cat "$tmp/q/$2"; fi; } > "$tmp/q/$2.j"
  mv "$tmp/q/$2.j" "$tmp/q/$2"; rm -f "$tmp/q/$1"
}
# a rank killed in the middle of a job, under braid's launcher (-np):
# every rank ends (no hang), the status is 1 and the launcher names the
# dead rank, its signal and rank 0's instruction. The script prints once
# a distributed instruction has run (so rank 0 names one) and the rank is
# killed after that line appears.
cat > "$tmp/loop.dml" <<'DML'
X = rand(rows=2000, cols=10, seed=1)
s = sum(X)
print("started " + s)
for (i in 1:1000000) { s = s + sum(X * i) }
print(s)
DML
# kill_rank2 OUT CMD...: runs CMD in the background, SIGKILLs its rank 2
# (victim_rank=R: rank R; victim_sig=S: signal S) once OUT shows the
# script started (within KILL_WAIT seconds, default 60); sets victim
# (empty: not found) and rc. A batch's launch (go) can end with the
# loop's run (queued last, its output the launch's): the batch's runs
# run first, each to its own output, and the launch's status is 1 by
# design (KILL_WAIT then covers the runs before the loop)
kill_rank2() {
  local out=$1; shift
  local tag="braid-mpi-test-$$-$RANDOM"
  BRAID_TEST_TAG=$tag "$@" > "$out" 2>&1 &
  local mpid=$!
  victim=""
  local end=$((SECONDS + ${KILL_WAIT:-60}))
  while [ "$SECONDS" -lt "$end" ] && kill -0 "$mpid" 2>/dev/null; do
    sleep 0.1
    grep -q '^started' "$out" || continue
    for p in $(pgrep -f "$tmp/loop.dml"); do
      if env=$( { tr '\0' '\n' < "/proc/$p/environ"; } 2>/dev/null) && printf '%s\n' "$env" | grep -qx "BRAID_TEST_TAG=$tag" &&
         printf '%s\n' "$env" | grep -qx "OMPI_COMM_WORLD_RANK=${victim_rank:-2}"; then
        victim=$p
      fi
    done
    [ -n "$victim" ] && break
  done
  # (not found: the launch ends; CMD may be a function of this shell,
  # run by a subshell whose child is the launch)
  if [ -n "$victim" ]; then kill -"${victim_sig:-9}" "$victim"; else kill $(pgrep -P "$mpid") "$mpid" 2>/dev/null; fi
  wait "$mpid"; rc=$?
  # a stopped victim mpirun left behind
  if [ -n "$victim" ] && [ "${victim_sig:-9}" = STOP ]; then kill -9 "$victim" 2>/dev/null; fi
}
# killed NAME OUT RANK HOW [STATUSES]: the killed rank was found, the
# run's status is one of STATUSES (default 1 or mpirun's 137) and rank
# 0's line names RANK and HOW (an extended regex)
killed() {
  local name=$1 out=$2 rank=$3 how=$4 codes=${5:-"1 137"}
  if [ -z "$victim" ]; then bad "$name: rank $rank not found: $(tail -n 5 "$out")"
  elif [[ " $codes " != *" $rc "* ]]; then bad "$name: status $rc, not $codes (124: hung)"
  elif ! grep -qE "^braid: error: rank $rank died \(($how)\) during instruction '[^']*' \(line [0-9]*\)$" "$out"; then
    bad "$name: no clear error naming rank $rank: $(tail -n 8 "$out")"
  else ok; fi
}
sig9="signal 9: [A-Za-z]*"
config() {   # config NAME BUDGET BLOCKSIZE [PIGGYBACK]: NAME.xml, and NAME-nocg.xml without fusion
  local f='<root><sysds.local.memory.budget>%s</sysds.local.memory.budget><sysds.defaultblocksize>%s</sysds.defaultblocksize><sysds.dist.piggyback>%s</sysds.dist.piggyback><sysds.dist.netrate>1e9</sysds.dist.netrate>%s</root>\n'
  printf "$f" "$2" "$3" "${4:-true}" "" > "$tmp/$1.xml"
  printf "$f" "$2" "$3" "${4:-true}" "<sysds.codegen.enabled>false</sysds.codegen.enabled>" > "$tmp/$1-nocg.xml"
}
# rand() seeds each block of sysds.defaultblocksize rows and columns (as
# SystemDS's LibMatrixDatagen does), so a run's random matrices follow
# the configured block size: a local run is the reference of a
# distributed one only at the same block size. lb N ARGS: braid run
# locally with block size N (lN.xml sets nothing else); bs_of CONFIG: the
# block size of $tmp/CONFIG.xml
for n in 3 7 100 1000; do
  printf '<root><sysds.defaultblocksize>%s</sysds.defaultblocksize></root>\n' "$n" > "$tmp/l$n.xml"
done
lb() { local n=$1; shift; "$braid" -config "$tmp/l$n.xml" "$@"; }
bs_of() { sed -n 's/.*<sysds.defaultblocksize>\([0-9]*\)<.*/\1/p' "$tmp/$1.xml"; }
config bs7 20000 7
config bs1000 20000 1000
config bs3 20000 3
config bs3solo 20000 3 false   # every reduce operator its own job
# (the configurations give the network rate, so that the cost model
# picks the same plans on every run; a run without it measures the rate)

# The comparisons are queued and run by one cmp.py at the end (flush):
# one interpreter start, not one per case (about 60 starts, each seconds
# under the load CI runs this suite at). A compared folder stays until
# then.
cmpq="$tmp/cmp.queue"
queue() {   # queue CASE REF OUT NAME...: cmp.py REF OUT NAME..., later
  local IFS=$'\t'
  printf '%s\n' "$*" >> "$cmpq"
}
flush() {   # runs the queued comparisons: one ok or FAIL per case
  [ -s "$cmpq" ] || return 0
  local want got line
  want=$(wc -l < "$cmpq")
  got=0
  while IFS= read -r line; do
    got=$((got + 1))
    case $line in
      "ok "*) ok ;;
      *) bad "${line#FAIL }" ;;
    esac
  done < <("$py" "$here/cmp.py" --batch "$cmpq" 2>&1)
  [ "$got" -eq "$want" ] || bad "cmp.py answered $got of $want comparisons"
  : > "$cmpq"
}
compare() {   # compare NAME REF OUT [FILES]: FILES or every file REF holds
  local name=$1 ref=$2 out=$3
  local files=${4:-}
  [ -n "$files" ] || files=$(cd "$ref" && ls | grep -v '\.mtd$')
  if [ -z "$files" ]; then bad "$name: the local run wrote nothing"; return; fi
  queue "$name" "$ref/" "$out/" $files
}

# Several scripts as the parts of one run (one mpirun, not one per
# script): part NAME FILE [SED] prints FILE after a line "run.sh: part
# NAME" that the script prints in a block of its own, with SED (the
# parts' other arguments renumbered) and then every $1 (the output
# prefix) made $1 + "NAME_", so that the parts write apart. Under
# BRAID_DIST_TRACE=1, part_jobs OUT NAME PATTERN counts the jobs of part
# NAME whose trace line ("dist job TYPE [MEMBERS [FUSED]]") matches the
# extended regex PATTERN; check_jobs CASE OUT NAME PATTERN WANT WHAT
# wants WANT of them (a number, or "+": at least one).
part() {
  printf '\nwhile (FALSE) {}\nprint("run.sh: part %s")\nwhile (FALSE) {}\n' "$1"
  sed -e "${3:-s/^//}" -e 's/\$1\b/$1 + "'"$1"'_"/g' "$2"
}
part_jobs() {
  awk -v p="run.sh: part $2" -v re="$3" '$0 == p { on = 1; next } /^run\.sh: part / { on = 0 }
    on && /^dist job / && $0 ~ re { n++ } END { print n + 0 }' "$1"
}
check_jobs() {
  local n
  n=$(part_jobs "$2" "$3" "$4")
  if [ "$5" = + ] && [ "$n" -gt 0 ] || [ "$n" = "$5" ]; then ok
  else bad "$1: part $3: $n jobs of '$4', not $5 ($6)"; fi
}
compare_part() {   # compare_part CASE REF OUT NAME: part NAME's files
  local files
  files=$(cd "$2" 2>/dev/null && ls | grep "^$4_" | grep -v '\.mtd$')
  if [ -n "$files" ]; then compare "$1" "$2" "$3" "$files"; else bad "$1: the local run wrote no $4_ files"; fi
}

# ops CASE NP CONFIG EXEC ROWS COLS SPARSITY SEED [JOB TYPES THAT MUST RUN]:
# without fusion, so that every basic distributed operator runs (fused.dml
# below runs them fused). OPS_LOCAL=CASE: CASE's local run (the same
# arguments) is the reference. IEEE="JOB TYPES": ieee.dml runs after
# ops.dml in the same launch (its results under the prefix ieee_), and
# must run each of these job types itself: under BRAID_DIST_TRACE=1 the
# jobs after the line the script prints between the parts (in a block of
# its own) are ieee.dml's
ops() {
  local c=$1 np=$2 cfg=$3 ex=$4 rows=$5 cols=$6 sp=$7 seed=$8; shift 8
  local script=$here/ops.dml ref=$tmp/${OPS_LOCAL:-$c}/l t
  [ -z "${IEEE:-}" ] || script=$tmp/ops_ieee.dml
  if [ -z "${CHECK:-}" ]; then   # the runs (checked later, CHECK=1)
    mkdir -p "$tmp/$c/l" "$tmp/$c/d"
    if [ -n "${IEEE:-}" ]; then
      { cat "$here/ops.dml"; printf '\nwhile (FALSE) {}\nprint("run.sh: ieee.dml")\nwhile (FALSE) {}\n'
        sed 's/^p = \$1$/p = $1 + "ieee_"/' "$here/ieee.dml"; } > "$script"
      grep -q '^p = \$1 + "ieee_"$' "$script" || { bad "ops $c: ieee.dml's prefix line not found"; touch "$tmp/$c/skip"; return; }
    fi
    if [ -z "${OPS_LOCAL:-}" ]; then
      lb "$(bs_of "$cfg")" -f "$script" -args "$tmp/$c/l/" "$rows" "$cols" "$sp" "$seed" > "$tmp/$c/l.out" 2>&1 \
        || { bad "ops $c: local run failed: $(tail -n 3 "$tmp/$c/l.out")"; touch "$tmp/$c/skip"; return; }
    fi
    local run=(-f "$script" -config "$tmp/$cfg-nocg.xml" -exec "$ex" -stats -args "$tmp/$c/d/" "$rows" "$cols" "$sp" "$seed")
    # (OPS_QUEUE=B: queued in batch B, whose launch has mpirun options
    # of its own)
    q "${OPS_QUEUE:-b$np}" "$tmp/$c/d.out" "${run[@]}"
    return
  fi
  [ ! -f "$tmp/$c/skip" ] || return
  # (a reference run with ieee.dml also wrote ieee_*, which ops.dml alone does not)
  compare "ops $c (np $np, $cfg, $ex, ${rows}x$cols sparsity $sp)" "$ref" "$tmp/$c/d" \
    "$(cd "$ref" && ls | grep -v '\.mtd$' | if [ -n "${IEEE:-}" ]; then cat; else grep -v '^ieee_'; fi)"
  # the configuration's network rate, not a measured one
  if grep -q "^  network rate 1 GB/s (sysds.dist.netrate)" "$tmp/$c/d.out"; then ok; else bad "ops $c: the configured network rate is not used"; fi
  for t in "$@"; do
    if grep -qE "^  $t +[1-9][0-9]* jobs" "$tmp/$c/d.out"; then ok; else bad "ops $c: no distributed '$t' job ran"; fi
  done
  if [ -n "${IEEE:-}" ]; then
    local seen
    seen=$(awk '/^run\.sh: ieee\.dml$/ { on = 1 } on && /^dist job / { print $3 }' "$tmp/$c/d.out" | sort -u | tr '\n' ' ')
    for t in $IEEE; do
      case " $seen" in *" $t "*) ok ;; *) bad "ops $c: no distributed '$t' job ran in ieee.dml (its jobs: $seen)" ;; esac
    done
  fi
}
all_ops="scatter collect unary binary ternary rowagg agg colagg mapmm mapmm-left tsmm tmm mmchain colslice rowslice cbind"
# piggybacking groups the reduce operators (agg, colagg, tsmm, tmm) over
# the same partitions; the tiny case runs each as its own job
reduce_ops="agg colagg tsmm tmm"
map_ops=$(echo " $all_ops " | sed "s/ agg / /; s/ colagg / /; s/ tsmm / /; s/ tmm / /")
# (with ieee.dml: IEEE products over zeros on every rank, NaN and
# infinities meeting zeros of sparse and dense operands; cmp.py wants the
# same non-finite cells)
ops_all() {
IEEE="mapmm mapmm-left tsmm tmm mmchain cpmm rmm" ops dense 2 bs7 hybrid 203 17 1.0 7 $map_ops piggyback cpmm rmm transpose rbind write var rev leftindex diag
  ops dense3 3 bs7 distributed 203 17 1.0 8 cpmm rmm transpose rbind var rev leftindex diag
  IEEE="mapmm mapmm-left" ops sparse 3 bs7 hybrid 1003 17 0.05 9 binary rowagg mapmm tmm
  ops oneblock 4 bs1000 hybrid 203 17 1.0 11 binary mapmm piggyback
  ops tiny 3 bs3solo distributed 10 4 1.0 13 $all_ops table
  # (not under the sanitizers: mm2.dml's 4-rank run below covers its
  # paths, -exec spark and 5 x 3 operands in 2 blocks for 4 ranks, dense
  # and sparse; oneblock runs all of ops.dml with more ranks than blocks)
  [ -n "$san" ] || ops tinyranks 4 bs3 spark 5 3 0.5 15 binary agg
  [ -n "${CHECK:-}" ] || ops_tcp
}
# the network path: messages over TCP (not shared memory) between ranks
# placed on two host entries of the loopback: queued in batch h2, the
# run before the frozen machine's loop (its launch has those mpirun
# options; its checks after it, below)
# (the dense case's arguments: its local run is the reference)
ops_tcp() { OPS_LOCAL=dense OPS_QUEUE=h2 ops tcp 4 bs7 hybrid 203 17 1.0 7 cpmm rmm piggyback; }
ops_all

# fused operators (Cell, Row, MAgg, Outer) over partitions: the plan is
# shipped to the ranks, every rank runs the generated operator over its
# rows (cost-based and fuse_all selection; a sparse case; one block held
# by one rank; more ranks than blocks, rank 0 holding none)
printf '<root><sysds.local.memory.budget>100</sysds.local.memory.budget><sysds.defaultblocksize>3</sysds.defaultblocksize><sysds.codegen.optimizer>fuse_all</sysds.codegen.optimizer><sysds.dist.netrate>1e9</sysds.dist.netrate></root>\n' > "$tmp/fuseall.xml"
# fused CASE NP CONFIG "ROWS COLS SPARSITY SEED"...: each set of
# arguments a part of one run (part sK reads its set as the arguments
# 2+4K..5+4K)
fused() {
  local c=$1 np=$2 cfg=$3 k=0 a args="" sc="$tmp/f$1.dml"; shift 3
  if [ -z "${CHECK:-}" ]; then
    : > "$sc"
    for a in "$@"; do
      part "s$k" "$here/fused.dml" "s/\$5/\$$((5 + 4 * k))/g; s/\$4/\$$((4 + 4 * k))/g; s/\$3/\$$((3 + 4 * k))/g; s/\$2/\$$((2 + 4 * k))/g" >> "$sc"
      args+=" $a"; k=$((k + 1))
    done
    mkdir -p "$tmp/f$c/l" "$tmp/f$c/d"
    lb "$(bs_of "$cfg")" -f "$sc" -args "$tmp/f$c/l/" $args > "$tmp/f$c/l.out" 2>&1 \
      || { bad "fused $c: local run failed: $(tail -n 3 "$tmp/f$c/l.out")"; touch "$tmp/f$c/skip"; return; }
    q "b$np" "$tmp/f$c/d.out" -f "$sc" -config "$tmp/$cfg.xml" -stats -args "$tmp/f$c/d/" $args
    return
  fi
  [ ! -f "$tmp/f$c/skip" ] || return
  for a in "$@"; do
    compare_part "fused $c (np $np, $cfg, arguments $a)" "$tmp/f$c/l" "$tmp/f$c/d" "s$k"
    check_jobs "fused $c" "$tmp/f$c/d.out" "s$k" '^dist job fused ' + "no distributed fused operator ran"
    k=$((k + 1))
  done
}
fused_all() {
  fused sparse 2 bs1000 "203 17 0.05 9"
  fused all 4 fuseall "41 6 0.5 11" "5 3 1.0 13"
}
fused_all

# remote parfor (mode=REMOTE_SPARK): iterations on the ranks, results
# merged (row, cell and accumulator results; a parfor nested in a loop;
# variables distributed before the loop collected and shipped)
# shipped PLANS NAME OUT: every remote loop travelled as its compiled
# plan, the workers decoded plans and compiled nothing (runtime/planship.c)
shipped() {
  if grep -qE "^  \(remote parfor plans: $1 shipped, 0 not; workers decoded [1-9][0-9]* and compiled 0 programs or functions(; [0-9]+ shipped functions were copies the workers held)?(; [0-9]+ functions came from rank 0 on request)?\)" "$3"
  then ok; else bad "$2: the plans were not shipped: $(grep 'parfor plans' "$3")"; fi
}
# remote parfor loops inside functions (pffunc.dml: a specialization
# the workers compile as rank 0 did, a loop two calls down), every rank's
# share on 2 threads (-threads 2 fixes the count whatever the machine's
# cores); shipped plans (pfship.dml, runtime/planship.c): a body with
# calls (specialized, generic, nested, recursive), fused operators
# (fuse_all fuses the most) and nested control flow runs on the workers
# as rank 0 compiled it. parfor.dml, pffunc.dml and pfship.dml run as the
# parts of one script, once locally and under 2, 3 and 4 ranks
{ part parfor "$here/parfor.dml"; part pffunc "$here/pffunc.dml"; part pfship "$here/pfship.dml"; } > "$tmp/pf.dml"
# (local runs at the block sizes of the distributed ones: 3 and 7)
pf_ok=1
for n in 3 7; do
  mkdir -p "$tmp/pf/l$n"
  if ! lb $n -seed 9 -f "$tmp/pf.dml" -args "$tmp/pf/l$n/" 300 13 > "$tmp/pf/l$n.out" 2>&1; then
    pf_ok=""; bad "parfor: local run failed: $(tail -n 3 "$tmp/pf/l$n.out")"
  fi
done
pf_all() {
  local c d n
  [ -n "$pf_ok" ] || return 0
  for c in "3 fuseall" "2 bs7" "4 bs3"; do
    set -- $c
    d="$tmp/pf/d$1$2"
    if [ -z "${CHECK:-}" ]; then
      mkdir -p "$d"
      q "b$1" "$d.out" -seed 9 -f "$tmp/pf.dml" -config "$tmp/$2.xml" -threads 2 -stats -args "$d/" 300 13
      continue
    fi
    for n in parfor pffunc pfship; do compare_part "parfor $n (np $1, $2)" "$tmp/pf/l$(bs_of "$2")" "$d" $n; done
    check_jobs "parfor $c" "$d.out" parfor '^dist job parfor$' 3 "the loops did not run on the ranks"
    check_jobs "parfor in functions $c" "$d.out" pffunc '^dist job parfor$' 3 "the loops did not run on the ranks"
    check_jobs "shipped plans $c" "$d.out" pfship '^dist job parfor$' 1 "the loop did not run on the ranks"
    if grep -q "^  (remote parfor: 3 of the loops inside functions; up to 2 threads per rank)" "$d.out"; then ok
    else bad "parfor in functions $c: $(grep -E 'parfor' "$d.out" | head -n 2)"; fi
    shipped 7 "parfor $c" "$d.out"
  done
}
pf_all
# (the runs above: batches b2, b3 and b4, one launch per rank count,
# traced, BRAID_DIST_TRACE=1; they launch at the end, with the others)
# a shipped body whose sizes are known only at run time (Y's rows depend
# on the data): the DAGs travel with the plan and the workers recompile
# them as rank 0 does, to the same plans (sizes, operators, fused
# operators; rcplans.py) and the local result. The plan checks need the
# pinned machine constants (tests/run_all.sh sets BRAID_CG_MACHINE).
# Every rank's explain output, told apart by mpirun --tag-output: the run
# writes to the launch's own output in batch i4, launched with that
# option (its other runs write rank 0's output to their own files).
mkdir -p "$tmp/pfr/l" "$tmp/pfr/d"
if lb 7 -f "$here/pfrecomp.dml" -args "$tmp/pfr/l/" 2000 > "$tmp/pfr/l.out" 2>&1; then
  q i4 - -f "$here/pfrecomp.dml" -config "$tmp/bs7.xml" -threads 2 -stats -explain recompile_hops -args "$tmp/pfr/d/" 2000
  later+=(check_pfr)
else
  bad "recompiled on the workers: the local run failed: $(tail -n 3 "$tmp/pfr/l.out")"
fi
check_pfr() {
  local out=$tmp/q/i4.out
  compare "recompiled on the workers (np 4)" "$tmp/pfr/l" "$tmp/pfr/d"
  if msg=$("$py" "$here/rcplans.py" "$out" 14 4); then ok; else bad "recompiled on the workers: $(printf '%s' "$msg" | tr '\n' '|')"; fi
  if "$py" "$here/rcplans.py" --lines 0 "$out" | grep -qE "remote parfor plans: 1 shipped, 0 not; workers decoded 3 and compiled 0 "; then ok
  else bad "recompiled on the workers: $(grep 'parfor plans' "$out")"; fi
}
# rcplans.py reads a rank's line that mpirun --tag-output cut into pieces
# (it tags each piece it reads, so under load a line of rank 0 came out
# as its start, another rank's line, and its rest after a second tag: a
# plan of rank 0's that no other rank had, CI's "rank 1's plans differ
# from rank 0's"); and it still sees a real difference
rcp() {   # rcp R1 R2 R3: a tagged output; rank 1's plan line (3) is R1 R2 R3
  printf '%s\n' "[1,0]<stdout>:RECOMPILED DAG (s.dml:5):" "[1,1]<stdout>:RECOMPILED DAG (s.dml:5):" \
    "[1,0]<stdout>:  (3) *  (1,2) [11[1,1]<stdout>:  (3) *  (1,2) [$1,16,19008] 1KB/2KB DIST" \
    "[1,0]<stdout>:88,16,19008] 1KB/2KB DIST" "[1,1]<stdout>:  (4) $2  (3) [$3,1,-1] 9KB/9KB DIST" \
    "[1,0]<stdout>:  (4) sum  (3) [1188,1,-1] 9KB/9KB DIST" "[1,0]<stdout>:x = 1" "[1,1]<stdout>:x = 1"
}
rcp 1188 sum 1188 > "$tmp/rcp1"; rcp 1188 sum 1187 > "$tmp/rcp2"
if msg=$("$py" "$here/rcplans.py" "$tmp/rcp1" 1 2) && ! "$py" "$here/rcplans.py" "$tmp/rcp2" 1 2 > /dev/null; then ok
else bad "rcplans.py: a line in two pieces: $(printf '%s' "$msg" | tr '\n' '|')"; fi
# two loops calling the same specialization: each plan ships it, and
# each of the 2 workers keeps the first copy and drops the second; then
# (in the same run) the task carries the variables the body reads and
# the results, not the rest of the frame: Big (800 KB, never read in the
# loop) is not sent
pfd='f = function(Matrix[Double] A, Double s) return (Double r) { r = sum(A * s) + nrow(A) }
X = rand(rows=40, cols=5, seed=3)
R = matrix(0, rows=6, cols=2)
parfor (i in 1:6, mode=REMOTE_SPARK) { R[i, 1] = f(X, 2) + i }
parfor (i in 1:6, mode=REMOTE_SPARK) { R[i, 2] = f(X, 2) * i }
print(toString(R))
Big = rand(rows=1000, cols=100, seed=3); v = rand(rows=10, cols=1, seed=4); R = matrix(0, rows=10, cols=1)
parfor (i in 1:10, mode=REMOTE_SPARK) { R[i, 1] = v[i, 1] * 2 + i }
print(sum(R) + sum(Big))'
# (in batch i3, traced: its output less the trace lines)
if pfd_want=$("$braid" -s "$pfd" 2>&1); then
  q i3 "$tmp/pfd.out" -stats -s "$pfd"
  later+=(check_pfd)
else bad "one copy of shipped functions, parfor frame: the local run failed: $pfd_want"; fi
check_pfd() {
  local line sent
  line="  (remote parfor plans: 3 shipped, 0 not; workers decoded 6 and compiled 0 programs or functions; 2 shipped functions were copies the workers held)"
  if [ "$(grep -v '^dist job ' "$tmp/pfd.out" | head -n 8)" = "$pfd_want" ] && grep -qxF "$line" "$tmp/pfd.out"; then ok
  else bad "one copy of shipped functions: $(grep 'parfor plans' "$tmp/pfd.out"; tail -n 3 "$tmp/pfd.out")"; fi
  # (the 3 loops' tasks: X twice, v)
  sent=$(awk '$1 == "parfor" && $3 == "jobs" { print $6 }' "$tmp/pfd.out")
  if [ -n "$sent" ] && [ "$sent" -lt 100000 ]; then ok
  else bad "parfor frame: sent ${sent:-?} bytes"; fi
}
# Group A, one run of 3 ranks with bs7.xml (and its local run): the
# dense fused case (fused.dml, as above), then remote parfor bodies: one
# with an AMULET where-loop (the loop travels by its place in the
# script, so the plan ships and the workers compile nothing); one
# reading lists and frames, and one reading typed frames with missing
# cells and transformencode's metadata (the values travel with the task;
# before, such loops ran on rank 0 alone); then the mixed piggyback case
# (mixed.dml, below) at 3 ranks
mkdir -p "$tmp/ga/l" "$tmp/ga/d"
printf 'name,n,ok,x\na,1,true,2.5\n,4,false,3.5\nNA,7,true,NaN\nd,9,false,1\nb,-3,true,NaN\n' > "$tmp/ga/G.csv"
{ part fused "$here/fused.dml"; part pfwhere "$here/pfwhere.dml"; part pfvalues "$here/pfvalues.dml"
  part pfframes "$here/pfframes.dml" 's/\$2/$6/g'; part mixed "$here/mixed.dml"; } > "$tmp/ga.dml"
ga_args="203 17 1.0 7 $tmp/ga/G.csv"
# check_ga CASE OUT D NP: group A's checks of a run on NP ranks whose
# trace is OUT and results are in D
check_ga() {
  local n
  for n in fused pfwhere pfvalues pfframes mixed; do compare_part "$1 $n" "$tmp/ga/l" "$3" $n; done
  check_jobs "$1" "$2" fused '^dist job fused ' + "no distributed fused operator ran"
  for n in pfwhere pfvalues pfframes; do check_jobs "$1" "$2" $n '^dist job parfor$' 1 "the loop did not run on the ranks"; done
  shipped 3 "$1: remote parfor" "$2"
  check_mixed "$1" "$2" "$4"
}
# check_mixed CASE OUT NP: the mixed piggyback case (mixed.dml) at NP
# ranks: 6 reduce operators in one job, 2 of them fused. At 4 ranks the
# pinned constants fuse X = X * 3 - 1 into the aggregates of X instead:
# those fused reduces then read the rand output, not X, and make one job
# of their own beside a job of the other reduces. Two such plans: 4
# fused column and full aggregates beside 2 basic ones, or (the model
# prices the full aggregates that share a subexpression as the one MAgg
# operator that computes it once) sum(X), sum(X ^ 2 * 3 + X) and
# max(exp(X) - X) in one MAgg and colSums(X * X + 2 * X) fused, beside
# the 3 basic ones
check_mixed() {
  if [ "$3" = 4 ] && [ "$(part_jobs "$2" mixed '^dist job fused 4$')" = 1 ]; then
    check_jobs "mixed piggyback $1" "$2" mixed '^dist job piggyback 2 0$' 1 "with 4 fused: one job of the other 2"
    check_jobs "mixed piggyback $1" "$2" mixed '^dist job (piggyback|fused) ' 2 "no other reduce job"
  elif [ "$3" = 4 ] && [ "$(part_jobs "$2" mixed '^dist job fused 2$')" = 1 ]; then
    check_jobs "mixed piggyback $1" "$2" mixed '^dist job piggyback 3 0$' 1 "with a MAgg and a Cell fused: one job of the other 3"
    check_jobs "mixed piggyback $1" "$2" mixed '^dist job (piggyback|fused) ' 2 "no other reduce job"
  else
    check_jobs "mixed piggyback $1" "$2" mixed '^dist job piggyback 6 2$' 1 "one job of 6 reduce operators, 2 fused"
    check_jobs "mixed piggyback $1" "$2" mixed '^dist job (piggyback|fused) ' 1 "no other reduce job"
  fi
}
if ! lb 7 -f "$tmp/ga.dml" -args "$tmp/ga/l/" $ga_args > "$tmp/ga/l.out" 2>&1; then
  bad "group A: the local run failed: $(tail -n 3 "$tmp/ga/l.out")"
else
  # (in batch i3, traced; checked after its launch)
  q i3 "$tmp/ga/d.out" -f "$tmp/ga.dml" -config "$tmp/bs7.xml" -stats -args "$tmp/ga/d/" $ga_args
  ga_queued=1
fi
# eval with a literal function name: the function and the functions
# computing its default parameters ship with the plan (compiled on rank
# 0), so the workers compile nothing; so do the functions an eval whose
# name is known only at run time can call (every function of the script:
# a variable of the frame, a literal of the loop, a name concatenated
# in the loop, one built from data: q1 and q2 compiled on the workers
# while the shipped candidates were the functions the task's strings
# named); and a product the AMULET template
# makes a where-loop (forced): the loop travels by its body text
# (runtime/planship.c put_where), and the workers run it from the plan
pfe='g = function(Matrix[Double] A, Double s = 3, Double t = ncol(A)) return (Double r) { r = sum(A) * s + t }
h = function(Matrix[Double] A) return (Double r) { r = max(A) + 1 }
k = function(Matrix[Double] A) return (Double r) { r = min(A) - 1 }
q1 = function(Matrix[Double] A) return (Double r) { r = sum(A * A) }
q2 = function(Matrix[Double] A) return (Double r) { r = mean(A) * 7 }
X = rand(rows=10, cols=3, seed=1)
D = round(rand(rows=4, cols=1, min=1, max=2, seed=3))
A = rand(rows=64, cols=64, min=0, max=1, seed=71)
B = rand(rows=64, cols=64, min=0, max=1, seed=72)
fn = "h"
R = matrix(0, rows=4, cols=5)
parfor (i in 1:4, mode=REMOTE_SPARK) {
  R[i, 1] = eval("g", list(X)) + i
  R[i, 2] = sum((A * i) %*% (B + i))
  f2 = ifelse(i %% 2 == 0, "k", "g")
  R[i, 3] = eval(fn, list(X)) + eval(f2, list(X)) * i
  R[i, 4] = as.scalar(eval(f2, list(X * i)))
  R[i, 5] = eval("q" + as.integer(i %% 2 + 1), list(X)) + eval("q" + as.integer(as.scalar(D[i, 1])), list(X)) * 10
}
print(toString(R))'
# (forced by the run's configuration, sysds.amulet.fuse: the run joins
# batch i3, 3 ranks, traced, whose other runs keep the template's cost;
# the local run forces it by the environment, which the key overrides)
printf '<root><sysds.amulet.fuse>force</sysds.amulet.fuse></root>\n' > "$tmp/amf.xml"
if pfe_want=$(BRAID_AMULET_FUSE=force "$braid" -s "$pfe" 2>&1); then
  q i3 "$tmp/pfe.out" -stats -config "$tmp/amf.xml" -s "$pfe"
  later+=(check_pfe)
else bad "parfor with eval: the local run failed: $(tail -n 3 <<< "$pfe_want")"; fi
check_pfe() {
  if [ "$(grep -v '^dist job ' "$tmp/pfe.out" | head -n 4)" = "$pfe_want" ]; then ok
  else bad "parfor with eval: $(head -n 4 "$tmp/pfe.out") (local: $pfe_want)"; fi
  shipped 1 "parfor with eval and an AMULET loop" "$tmp/pfe.out"
  if grep -qE "^Codegen AMULET loops \(planner\):[[:space:]]+[1-9][0-9]*\.$" "$tmp/pfe.out"; then ok
  else bad "parfor with an AMULET loop: the template made no loop: $(grep AMULET "$tmp/pfe.out")"; fi
}
# eval of a builtin library function by a name built at run time: no
# candidate ships for it (the library has hundreds of functions, loaded
# on first use), so the worker asks rank 0, while the shares run, for
# the function as rank 0 compiled it (runtime/distparfor.c fetch_func,
# serve_func; planship.c ps_pack_func): the workers compile nothing,
# -stats counts the functions they received, and the result is the
# local run's to the bit (docs/dist.md). Ranks whose libraries differ:
# "parfor, rank 1's library differs" (batch i3)
# (and a call of sigmoid: its library file travels with the script,
# for "parfor, rank 1's library differs" in batch i3, which runs this).
# eval of sigmoid.dml's s_sigmoid by its bare name, three times an
# iteration: it is first tried as a library file of its own, which rank
# 0 has not; the worker asks once per task (lang_library_forget) and
# remembers the answer: one request for that name (-stats)
pfb='X = rand(rows=10, cols=3, seed=1)
R = matrix(0, rows=4, cols=4)
parfor (i in 1:4, mode=REMOTE_SPARK) {
  f = "sig" + ifelse(i > 0, "moid", "x")
  R[i, 1] = sum(eval(f, list(X * i)))
  g = "scale" + ifelse(i > 0, "MinMax", "")
  R[i, 2] = sum(eval(g, list(X + i * X)))
  R[i, 3] = sum(sigmoid(X - i))
  h = "s_" + ifelse(i > 0, "sigmoid", "x")
  for (k in 1:3) R[i, 4] = as.scalar(R[i, 4]) + eval(h, list(i / k))
}
write(R, $1 + "R", format="csv")'
mkdir -p "$tmp/pfb/l" "$tmp/pfb/d"
printf '%s\n' "$pfb" > "$tmp/pfb.dml"
if "$braid" -f "$tmp/pfb.dml" -args "$tmp/pfb/l/" > "$tmp/pfb/l.out" 2>&1; then
  q i2 "$tmp/pfb/d.out" -stats -f "$tmp/pfb.dml" -args "$tmp/pfb/d/"
  later+=(check_pfb)
else bad "parfor eval of a builtin: the local run failed: $(tail -n 3 "$tmp/pfb/l.out")"; fi
check_pfb() {
  if cmp -s "$tmp/pfb/l/R" "$tmp/pfb/d/R"; then ok
  else bad "parfor eval of a builtin: not the local result to the bit: $(head -n 2 "$tmp/pfb/d/R" 2>&1)"; fi
  # (no copies: the request names what the worker holds, and rank 0's
  # answer names normalizeApply's generic version instead of sending it;
  # before: "1 shipped functions were copies the workers held")
  if grep -qE "^  \(remote parfor plans: 1 shipped, 0 not; workers decoded [1-9][0-9]* and compiled 0 programs or functions; [1-9][0-9]* functions came from rank 0 on request\)$" "$tmp/pfb/d.out" &&
     grep -qE "^  \(remote parfor answers with functions: [1-9][0-9]* sent whole, [1-9][0-9]* named that the worker held; [1-9][0-9]* bytes\)$" "$tmp/pfb/d.out"
  then ok; else bad "parfor eval of a builtin: not shipped, a worker compiled or dropped a copy, or no function came from rank 0 or none was named: $(grep -E 'parfor (plans|answers)' "$tmp/pfb/d.out")"; fi
  # (before lang_library_forget's cache: 6, once per lookup)
  if grep -qE "^  \(remote parfor requests to rank 0: functions [1-9][0-9]*, library files [1-9][0-9]*, names without a library file 1\)$" "$tmp/pfb/d.out"
  then ok; else bad "parfor eval of a library helper by its bare name: not asked once: $(grep 'requests to rank 0' "$tmp/pfb/d.out")"; fi
}
# -gpu under mpirun: every rank opens its own OpenCL device. A remote
# parfor body holding stitched GPU regions (a cell region with the loop
# variable as a scalar argument, a row region with a per-row input)
# travels as a plan: each region as its node array (runtime/planship.c),
# so the workers compile nothing and run the regions rank 0 formed (a
# binary without it names the region as the reason and the workers
# compile the loop); the result is the local run's (skipped without an
# OpenCL device). A second loop's body has sizes known only per
# iteration: its block is recompiled on every rank and ships its DAG,
# which holds no stitched region (cg_stitch_dag, like codegen, leaves a
# DAG to recompile alone; each rank stitches the recompiled copy, as
# rank 0 does), so it ships too and the workers compile nothing
pfg='X = rand(rows=300, cols=20, seed=1)
W = rand(rows=300, cols=20, seed=2)
R = matrix(0, rows=4, cols=2)
parfor (i in 1:4, mode=REMOTE_SPARK) {
  R[i, 1] = sum(exp(X * i) + X * 2 - abs(X))
  S = (X - rowMeans(X)) * W / i
  R[i, 2] = sum(S * S)
}
print(toString(R))
R2 = matrix(0, rows=4, cols=2)
parfor (i in 1:4, mode=REMOTE_SPARK) {
  Y = X[1:(nrow(X) - i * 7), ]
  V = W[1:nrow(Y), ]
  R2[i, 1] = sum(exp(Y * i) + Y * 2 - abs(Y))
  S = (Y - rowMeans(Y)) * V / i
  R2[i, 2] = sum(S * S)
}
print(toString(R2))'
# The GPU backend's distributed gate: an instruction over a distributed
# matrix never goes to the device. With the budget forced small X is
# distributed; the elementwise work and the row and column aggregates
# over it, which the local -gpu run stitches into GPU regions, form no
# region under mpirun (codegen/stitchpass.c on_ranks: a region takes no
# hop placed on the ranks or reading their matrix) and run as jobs, and X
# is never collected to rank 0 (before, two regions over X ran on rank
# 0's device, X collected for each); the result is the local run's
dg='X = rand(rows=2000, cols=10, seed=3)
Y = exp(X * 2) + X
s = sum(Y * Y)
Z = (X - rowMeans(X)) * 3 - abs(X)
R = rbind(matrix(s, rows=1, cols=10), colSums(Z * Z))
write(R, $1 + "R", format="csv")'
# (both -gpu runs in batch i2: -gpu is a run's option, and each run
# counts its own GPU statistics)
if ! pfg_want=$("$braid" -gpu force -s "$pfg" 2>&1); then
  case $pfg_want in
    *"no OpenCL platform"*|*"no OpenCL device"*) echo "mpi tests: the -gpu case skipped: $pfg_want" ;;
    *) bad "parfor under -gpu: the local run failed: $pfg_want" ;;
  esac
elif mkdir -p "$tmp/dg/l" "$tmp/dg/d" && printf '%s\n' "$dg" > "$tmp/dg.dml" &&
     ! lb 7 -gpu force -stats -f "$tmp/dg.dml" -args "$tmp/dg/l/" > "$tmp/dg/l.out" 2>&1; then
  bad "the GPU's distributed gate: the local run failed: $(tail -n 3 "$tmp/dg/l.out")"
else
  q i2 "$tmp/pfg.out" -gpu force -stats -s "$pfg"
  q i2 "$tmp/dg/d.out" -gpu force -config "$tmp/bs7.xml" -stats -f "$tmp/dg.dml" -args "$tmp/dg/d/"
  later+=(check_pfg)
fi
check_pfg() {
  # (the batch's BRAID_DIST_TRACE lines out)
  local got
  got=$(grep -v '^dist job ' "$tmp/pfg.out" | head -n 9)
  if [ "$got" = "$pfg_want" ]; then ok; else bad "parfor under -gpu: $got (local: $pfg_want)"; fi
  shipped 2 "parfor with stitched GPU regions" "$tmp/pfg.out"
  if grep -qE "^GPU stitched regions:[[:space:]]+[1-9][0-9]* runs" "$tmp/pfg.out"; then ok
  else bad "parfor under -gpu: no stitched region ran: $(grep -E 'GPU' "$tmp/pfg.out")"; fi
  compare "the GPU's distributed gate" "$tmp/dg/l" "$tmp/dg/d" R
  # the local run stitches regions; over the distributed X none forms,
  # the operators run as jobs, and X never comes to rank 0
  if grep -qE "^GPU stitched regions:[[:space:]]+[1-9][0-9]* runs" "$tmp/dg/l.out" &&
     ! grep -qE "^GPU stitched regions:[[:space:]]+[1-9]" "$tmp/dg/d.out" &&
     grep -qE "^  (rowagg|colagg|piggyback|fused) " "$tmp/dg/d.out" && ! grep -qE "^  collect " "$tmp/dg/d.out"
  then ok; else bad "the GPU's distributed gate: a region over a distributed matrix, or no job: $(grep -E '^GPU|^  [a-z]' "$tmp/dg/l.out" "$tmp/dg/d.out")"; fi
}
# the fusion plan follows the network's rate (pinned by the
# configuration, so the plans are the same on every run): at 100 B/s Z is
# materialized once (a row sum runs over it), at 1e15 B/s it is fused
# into both consumers (two fused operators over X, no row sum); both give
# the local result
mkdir -p "$tmp/nr/l"
if lb 100 -f "$here/netrate.dml" -args "$tmp/nr/l/" 3000 > "$tmp/nr/l.out" 2>&1; then
  for r in 1e2 1e15; do
    printf '<root><sysds.local.memory.budget>100000</sysds.local.memory.budget><sysds.defaultblocksize>100</sysds.defaultblocksize><sysds.dist.netrate>%s</sysds.dist.netrate></root>\n' "$r" > "$tmp/nr$r.xml"
    mkdir -p "$tmp/nr/d$r"
    q i2 "$tmp/nr/d$r.out" -f "$here/netrate.dml" -config "$tmp/nr$r.xml" -explain runtime -args "$tmp/nr/d$r/" 3000
  done
  later+=(check_netrate)
else
  bad "netrate: local run failed: $(tail -n 3 "$tmp/nr/l.out")"
fi
# (checked after batch i2 ran, with the cases below)
check_netrate() {
  local r low high
  for r in 1e2 1e15; do compare "netrate $r" "$tmp/nr/l" "$tmp/nr/d$r"; done
  low="$(grep -c 'spoofCell' "$tmp/nr/d1e2.out") $(grep -c 'uarsum' "$tmp/nr/d1e2.out")"
  high="$(grep -c 'spoofCell' "$tmp/nr/d1e15.out") $(grep -c 'uarsum' "$tmp/nr/d1e15.out")"
  if [ "$low" = "2 1" ] && [ "$high" = "2 0" ]; then ok
  else bad "netrate: spoofCell and uarsum counts: $low at 100 B/s (want 2 1), $high at 1e15 B/s (want 2 0)"; fi
}
# an error in an iteration a worker runs: its rank, line and message
# (run with the read errors below)
pferr='R = matrix(0, rows=6, cols=1)
parfor (i in 1:6, mode=REMOTE_SPARK) {
  if (i == 3) { stop("boom at 3") }
  R[i, 1] = i
}
print(sum(R))'
# -stats sets the bytes each job type sent beside the volume the plan's
# model predicts (dist_volume: broadcasts to N-1 ranks, N-1 partials of
# a reduced result; a scatter moves (N-1)/N of X): the scatter of X and
# the piggybacked tsmm + colSums agree with it up to the job headers
vs='X = rand(rows=400, cols=12, seed=5); print(sum(t(X) %*% X) + sum(colSums(X)))'
q a3 "$tmp/vol.out" -config "$tmp/bs7-nocg.xml" -stats -s "$vs"
check_vol() {
  local r
  r=$(awk '$3 == "jobs" && $9 == "predicted" && ($1 == "scatter" || $1 == "piggyback") {
             if ($8 == "-" || $8 <= 0) print $1 ": none"; else { q = $6 / $8; if (q < 0.9 || q > 1.3) print $1 ": " q } n++ }
           END { if (n != 2) print "missing" }' "$tmp/vol.out")
  if [ -z "$r" ]; then ok; else bad "predicted volumes: $r: $(grep predicted "$tmp/vol.out")"; fi
}
later+=(check_vol)
# a compared product is computed once: k-means' `D <= rowMins(D)`, where
# the distributed plan computed D from the distributed product while a Row
# operator recomputed the product for rowMins(D) by its own dot products
# (another summation order): rows whose two values differed in the last
# bit matched no centroid, and S lost them (16663.36 instead of 20024.07;
# codegen/select.c cg_split_compare)
ks='X = rand(rows=2000, cols=20, seed=7)
C = rand(rows=8, cols=20, seed=3)
i = 0
while (i < 1) {
  D = -2 * (X %*% t(C)) + t(rowSums(C^2))
  dmin = rowMins(D)
  P = D <= dmin
  P = P / rowSums(P)
  cnt = colSums(P)
  S = t(P) %*% X
  C = S / t(cnt)
  i = i + 1
  print("kmeans step " + sum(S) + " " + sum(cnt))
}'
q a3 "$tmp/kst.out" -config "$tmp/bs1000.xml" -s "$ks"
check_kst() {
  local want got
  want=$("$braid" -s "$ks" 2>&1 | grep '^kmeans step')
  got=$(grep '^kmeans step' "$tmp/kst.out")
  if [ -n "$want" ] && [ "$want" = "$got" ]; then ok
  else bad "k-means step over a distributed product: '$got', locally '$want'"; fi
}
later+=(check_kst)

# workers do not read the script: rank 0 sends its text (api/run.c), so
# a run whose workers cannot reach the script file (here: its relative
# path names nothing in their working directories, as on a machine
# without the file) runs its remote parfor (shipped plans, a where-loop;
# values) and fused jobs on the workers as before: group A's script
# (sw.dml), its local run the reference.
# Workers do not read source()d files either: rank 0 sends the texts of
# the files the script sources with the script's (api/run.c,
# LangOptions.sources). pfsource.dml (s.dml) sources pfsource/lib.dml,
# which sources inner.dml next to it; its remote parfor body calls their
# functions directly and through eval. Rank 1 runs in a folder where
# pfsource/ holds other versions of both files (other constants): a
# worker that read its own view would compute other numbers; rank 2 in
# one with no pfsource/ at all (it would fail). Both runs share one
# launch (-then), each rank in its own folder (mpirun -wdir).
mkdir -p "$tmp/so/main/pfsource" "$tmp/so/elsewhere/pfsource" "$tmp/so/l" "$tmp/so/none" "$tmp/sw/d" "$tmp/so/d"
cp "$tmp/ga.dml" "$tmp/so/main/sw.dml"
cp "$here/pfsource.dml" "$tmp/so/main/s.dml"
cp "$here/pfsource/lib.dml" "$here/pfsource/inner.dml" "$tmp/so/main/pfsource/"
sed 's/+ 3$/+ 40/' "$here/pfsource/inner.dml" > "$tmp/so/elsewhere/pfsource/inner.dml"
sed 's/X \* s, 0.25/X * s, 9/' "$here/pfsource/lib.dml" > "$tmp/so/elsewhere/pfsource/lib.dml"
so_run=1
if cmp -s "$here/pfsource/inner.dml" "$tmp/so/elsewhere/pfsource/inner.dml" || cmp -s "$here/pfsource/lib.dml" "$tmp/so/elsewhere/pfsource/lib.dml"; then
  bad "sourced files not on workers: the decoys equal the files"; so_run=
elif ! lb 7 -f "$here/pfsource.dml" -args "$tmp/so/l/" > "$tmp/so/l.out" 2>&1; then
  bad "sourced files not on workers: local run failed: $(tail -n 3 "$tmp/so/l.out")"; so_run=
fi
wd_runs=(-f sw.dml -config "$tmp/bs7.xml" -stats -args "$tmp/sw/d/" $ga_args -out "$tmp/sw/d.out"
         -then -f s.dml -config "$tmp/bs7.xml" -stats -args "$tmp/so/d/" -out "$tmp/so/d.out" -then)
# (run in the launch of the other machine's watcher's kill, at the end;
# checked after it)
check_so() {
  check_ga "script not on workers" "$tmp/sw/d.out" "$tmp/sw/d" 4
  if [ -n "$so_run" ]; then
    compare "sourced files not on workers (decoys on rank 1, none on ranks 2-3)" "$tmp/so/l" "$tmp/so/d"
    # (6 iterations on 4 ranks)
    if grep -qE "^  parfor +[1-9][0-9]* jobs" "$tmp/so/d.out"; then ok; else bad "sourced files not on workers: no parfor job ran on the workers"; fi
  fi
}

# the model prices every job's control messages (headers, and a fused
# operator's plan the first time: workers keep the plans they got), so
# that small jobs also agree with it: L2SVM and KMeans with fusion, every
# modeled job type within 0.9-1.3 of the bytes sent; fused plans sent
# once each (fewer than the fused jobs). With one plan slot on the
# workers (BRAID_DIST_PLAN_SLOTS=1) KMeans' alternating plans replace
# each other: sent again, the same results.
printf '<root><sysds.local.memory.budget>30000</sysds.local.memory.budget><sysds.dist.netrate>1e9</sysds.dist.netrate></root>\n' > "$tmp/volcg.xml"
mkdir -p "$tmp/vl" "$tmp/vd" "$tmp/vs"
if ! "$braid" -f "$here/volume.dml" -args "$tmp/vl/" 3000 8 > "$tmp/vl.out" 2>&1; then bad "volume: local run failed: $(tail -n 3 "$tmp/vl.out")"
else
  for np in 2 4; do
    mkdir -p "$tmp/vd$np"
    q "i$np" "$tmp/vol$np.out" -config "$tmp/volcg.xml" -stats -f "$here/volume.dml" -args "$tmp/vd$np/" 3000 8
  done
  # one plan slot (the variable holds for the process): in batch b3,
  # whose launch sets it for all its runs (the others check no plan sends)
  q b3 "$tmp/vols.out" -config "$tmp/volcg.xml" -stats -f "$here/volume.dml" -args "$tmp/vs/" 3000 8
  later+=(check_volume)
fi
check_volume() {
  local np r sent fj s1 s4
  for np in 2 4; do
    compare "volume np $np" "$tmp/vl" "$tmp/vd$np"
    r=$(awk '$3 == "jobs" && $9 == "predicted" && $8 != "-" { if ($8 <= 0) print $1 ": 0 predicted"; else { q = $6 / $8; if (q < 0.9 || q > 1.3) print $1 ": " q } }
             $1 == "fused" && $3 == "jobs" { f = $2 } END { if (f < 10) print "fused jobs: " f }' "$tmp/vol$np.out")
    if [ -z "$r" ]; then ok; else bad "volume np $np: sent/predicted $r: $(grep predicted "$tmp/vol$np.out")"; fi
    sent=$(sed -n 's/^  (fused operator plans: \([0-9]*\) sent, \([0-9]*\) found on the workers)$/\1 \2/p' "$tmp/vol$np.out")
    fj=$(awk '$1 == "fused" && $3 == "jobs" { print $2 }' "$tmp/vol$np.out")
    if [ -n "$sent" ] && [ "${sent% *}" -ge 1 ] && [ "${sent#* }" -ge 1 ] && [ "${sent% *}" -lt "${fj:-0}" ]; then ok
    else bad "volume np $np: plans sent/held '${sent:-none}' for ${fj:-no} fused jobs"; fi
  done
  if grep -q '^  (fused operator plans: ' "$tmp/vols.out" 2>/dev/null; then
    compare "volume one plan slot" "$tmp/vl" "$tmp/vs"
    s1=$(sed -n 's/^  (fused operator plans: \([0-9]*\) sent, .*/\1/p' "$tmp/vols.out")
    s4=$(sed -n 's/^  (fused operator plans: \([0-9]*\) sent, .*/\1/p' "$tmp/vol4.out")
    if [ -n "$s1" ] && [ -n "$s4" ] && [ "$s1" -gt "$s4" ]; then ok; else bad "volume one plan slot: plans sent ${s1:-?} (256 slots: ${s4:-?})"; fi
  else bad "volume one plan slot: the run failed: $(tail -n 3 "$tmp/vols.out")"; fi
}

# the cost model prices a fused operator's plan as its jobs send it: in
# full while the workers do not hold it, then nothing (codegen/cgdist.c,
# by the region's key). replan.dml's loop recompiles its block at every
# iteration and places the same fused operator each time: its plan is
# sent once and priced about once (before, in full at every compile: 6
# times what was sent)
mkdir -p "$tmp/rp/l" "$tmp/rp/d"
if "$braid" -f "$here/replan.dml" -args "$tmp/rp/l/" 3000 8 > "$tmp/rp/l.out" 2>&1; then
  q a3 "$tmp/rp/d.out" -config "$tmp/volcg.xml" -stats -f "$here/replan.dml" -args "$tmp/rp/d/" 3000 8
  later+=(check_rp)
else bad "plan bytes priced: the local run failed: $(tail -n 3 "$tmp/rp/l.out")"; fi
check_rp() {
  local r
  compare "plan bytes priced" "$tmp/rp/l" "$tmp/rp/d"
  r=$(sed -n 's/^  (fused operator plan bytes: \([0-9]*\) sent, \([0-9]*\) priced by the fusion cost model, \([0-9]*\) in full)$/\1 \2 \3/p' "$tmp/rp/d.out")
  if [ -n "$r" ] && "$py" -c "import sys; s, p, f = map(float, sys.argv[1:]); sys.exit(not (p > 0 and 0.8 <= s / p <= 1.25 and f >= 3 * s))" $r; then ok
  else bad "plan bytes priced: sent, priced, in full: '${r:-none}'"; fi
}

# plan bytes priced in L2SVM (l2price.dml, 8000 x 20, the budget a tenth
# of X, 2 ranks): its line search's multi-aggregate builds its roots'
# shared region under their Cell entries, and the cost model's region key
# must walk it so (with the key stopping at the roots' inputs, two plans
# of one key were priced 0 while sent: 23638 sent, 20889 priced)
mkdir -p "$tmp/lp/l" "$tmp/lp/d"
printf '<root><sysds.local.memory.budget>128000</sysds.local.memory.budget><sysds.dist.netrate>1e9</sysds.dist.netrate></root>\n' > "$tmp/lp.xml"
if "$braid" -f "$here/l2price.dml" -args "$tmp/lp/l/" 8000 20 > "$tmp/lp/l.out" 2>&1; then
  q i2 "$tmp/lp/d.out" -config "$tmp/lp.xml" -threads 1 -stats -f "$here/l2price.dml" -args "$tmp/lp/d/" 8000 20
  later+=(check_lp)
else bad "plan bytes priced l2svm: the local run failed: $(tail -n 3 "$tmp/lp/l.out")"; fi
check_lp() {
  local r
  compare "plan bytes priced l2svm" "$tmp/lp/l" "$tmp/lp/d"
  r=$(sed -n 's/^  (fused operator plan bytes: \([0-9]*\) sent, \([0-9]*\) priced by the fusion cost model, \([0-9]*\) in full)$/\1 \2 \3/p' "$tmp/lp/d.out")
  if [ -n "$r" ] && "$py" -c "import sys; s, p, f = map(float, sys.argv[1:]); sys.exit(not (p > 0 and 0.95 <= s / p <= 1.05))" $r; then ok
  else bad "plan bytes priced l2svm: sent, priced, in full: '${r:-none}'"; fi
}

# plan bytes priced for multi-aggregates (magg.dml, 8000 x 20, the
# budget a tenth of X, 2 ranks): -stats prices each placement's plan as
# the cost model prices its roots (cgdist.c cg_dist_root_price), a MAgg's
# root by its share of the MAgg select.c forms (cg_magg_partners). A
# MAgg of two roots, then one of three with those two among them (a new
# plan), then the two regions alone over other matrices (two new Cell
# plans): with the roots priced by the shares of a MAgg placed before
# whenever its other roots' regions were in the DAG, 7608 sent, 8750
# priced (block 2's two roots and block 3's operators priced nothing)
mkdir -p "$tmp/mg/l" "$tmp/mg/d"
if "$braid" -f "$here/magg.dml" -args "$tmp/mg/l/" 8000 20 > "$tmp/mg/l.out" 2>&1; then
  q i2 "$tmp/mg/d.out" -config "$tmp/lp.xml" -threads 1 -stats -f "$here/magg.dml" -args "$tmp/mg/d/" 8000 20
  later+=(check_mg)
else bad "plan bytes priced magg: the local run failed: $(tail -n 3 "$tmp/mg/l.out")"; fi
check_mg() {
  local r ma
  compare "plan bytes priced magg" "$tmp/mg/l" "$tmp/mg/d"
  r=$(sed -n 's/^  (fused operator plan bytes: \([0-9]*\) sent, \([0-9]*\) priced by the fusion cost model, \([0-9]*\) in full)$/\1 \2 \3/p' "$tmp/mg/d.out")
  ma=$(sed -n 's/^Codegen fused ops (C, R, MA, OP):\t[0-9]*\/[0-9]*\/\([0-9]*\)\/.*/\1/p' "$tmp/mg/d.out")
  if [ "${ma:-0}" = 2 ] && [ -n "$r" ] && "$py" -c "import sys; s, p, f = map(float, sys.argv[1:]); sys.exit(not (p > 0 and 0.95 <= s / p <= 1.05))" $r; then ok
  else bad "plan bytes priced magg: sent, priced, in full: '${r:-none}', MAgg operators ${ma:-none} (not 2)"; fi
}

# a local matrix passed down calls is scattered once (kept while the
# caller's variable holds it)
mkdir -p "$tmp/calls/l" "$tmp/calls/d"
if lb 7 -f "$here/calls.dml" -args "$tmp/calls/l/" > "$tmp/calls/l.out" 2>&1; then
  q i2 "$tmp/calls/d.out" -f "$here/calls.dml" -exec distributed -config "$tmp/bs7.xml" -stats -args "$tmp/calls/d/"
  later+=(check_calls)
else
  bad "calls: the local run failed: $(tail -n 3 "$tmp/calls/l.out")"
fi
check_calls() {
  compare "calls" "$tmp/calls/l" "$tmp/calls/d"
  if grep -qE "^  scatter +1 jobs" "$tmp/calls/d.out" && grep -q "(3 scatters of a matrix already partitioned were saved)" "$tmp/calls/d.out"; then ok
  else bad "calls: X was scattered again: $(grep -E '^  (scatter|\()' "$tmp/calls/d.out")"; fi
}

# shares NAME SCRIPT: queues a read by byte shares (SCRIPT writes $N: l
# for the local run, d for 3 ranks); shares_run GROUP runs the queued
# reads as one script, once locally and once under 3 ranks (one launch,
# not one per read): each gives the local result, and each is one
# parallel read (as many read-text jobs as reads)
share_names=(); share_script=""
shares() { share_names+=("$1"); share_script+="$2"$'\n'; }
shares_run() {   # (queues the run in batch i3; shares_check GROUP NAMES... after it ran)
  local g=$1
  mkdir -p "$tmp/$g"
  # LATER=1: reads of files an earlier run of the batch writes; the local
  # run too after the batch ran (in shares_check)
  if [ -n "${LATER:-}" ]; then
    printf '%s' "${share_script//\$N/l}" > "$tmp/$g/l.dml"
    q i3 "$tmp/$g/d.out" -exec distributed -stats -s "${share_script//\$N/d}"
    shares_later+=("$g ${share_names[*]}")
  elif "$braid" -s "${share_script//\$N/l}" > "$tmp/$g/l.out" 2>&1; then
    q i3 "$tmp/$g/d.out" -exec distributed -stats -s "${share_script//\$N/d}"
    shares_later+=("$g ${share_names[*]}")
  else
    bad "read $g (${share_names[*]}): the local run failed: $(tail -n 3 "$tmp/$g/l.out")"
  fi
  share_names=(); share_script=""
}
shares_later=()
shares_check() {
  local g=$1 s; shift
  if [ -f "$tmp/$g/l.dml" ] && ! "$braid" -f "$tmp/$g/l.dml" > "$tmp/$g/l.out" 2>&1; then
    bad "read $g ($*): the local run failed: $(tail -n 3 "$tmp/$g/l.out")"
  elif [ -s "$tmp/$g/d.out" ] && ! grep -q "error" "$tmp/$g/d.out"; then
    for s in "$@"; do queue "read $s" "$tmp/${s}_l" "$tmp/${s}_d" ""; done
    if grep -qE "^  read-text +$# jobs" "$tmp/$g/d.out"; then ok
    else bad "read $g ($*): not $# parallel reads: $(grep -E '^  read' "$tmp/$g/d.out")"; fi
  else
    bad "read $g ($*): the run failed: $(tail -n 3 "$tmp/$g/d.out")"
  fi
}
# errq NAME SCRIPT MESSAGE [ARGS]: the run of SCRIPT (3 ranks; ARGS, by
# default -exec distributed) in batch i3 fails with MESSAGE (a grep
# pattern) in its output
errs=()
errq() {
  local n=${#errs[@]} name=$1 script=$2 msg=$3; shift 3
  [ $# -gt 0 ] || set -- -exec distributed
  q i3 "$tmp/err$n.out" "$@" -s "$script"
  errs+=("$name"$'\t'"$msg")
}
err_check() {
  local i name msg
  for i in "${!errs[@]}"; do
    name=${errs[$i]%%$'\t'*} msg=${errs[$i]#*$'\t'}
    if grep -q "$msg" "$tmp/err$i.out"; then ok
    else bad "$name: $(tail -n 5 "$tmp/err$i.out")"; fi
  done
}

# binary files read in parallel (each rank its rows), dense and sparse
mkdir -p "$tmp/data"
if "$braid" -f "$here/write.dml" -args "$tmp/data" 503 > "$tmp/write.out" 2>&1; then
  # read.dml (binary files), io.dml (csv and text read by byte shares,
  # written as part files) and back.dml (io.dml's outputs read back, in
  # parallel) as the parts of one script, once locally and under 2, 3
  # and 4 ranks; the part files read back by the single-node reader too
  { part read "$here/read.dml"; part io "$here/io.dml"; part back "$here/back.dml" 's/\$2/$3/g'; } > "$tmp/io.dml"
  mkdir -p "$tmp/io/l"
  if "$braid" -f "$tmp/io.dml" -args "$tmp/io/l/" "$tmp/data" "$tmp/io/l/io_" > "$tmp/io/l.out" 2>&1; then
    io_ok=1
  else io_ok=""; bad "read and io: the local run failed: $(tail -n 3 "$tmp/io/l.out")"; fi
  # (queued in batches i2, i3 and i4; io_all's checks after they ran)
  io_all() {
    local c d
    [ -n "$io_ok" ] || return 0
    for c in "2 bs7 hybrid" "3 bs1000 distributed" "4 bs3 hybrid"; do
      set -- $c
      d="$tmp/io-$1-$2"
      if [ -z "${CHECK:-}" ]; then
        mkdir -p "$d/d" "$d/b1"
        q "i$1" "$d/d.out" -f "$tmp/io.dml" -config "$tmp/$2.xml" -exec "$3" -stats -args "$d/d/" "$tmp/data" "$d/d/io_"
        continue
      fi
      compare_part "read (np $1, $2, $3)" "$tmp/io/l" "$d/d" read
      check_jobs "read $c" "$d/d.out" read '^dist job read$' + "no distributed read"
      compare "io (np $1, $2, $3)" "$tmp/io/l" "$d/d" "io_xt io_cols io_x_csv"
      check_jobs "io $c" "$d/d.out" io '^dist job read-text$' + "no distributed read-text job"
      check_jobs "io $c" "$d/d.out" io '^dist job write$' + "no distributed write job"
      if [ -d "$d/d/io_x_csv" ] && [ -f "$d/d/io_x_csv.mtd" ]; then ok; else bad "io $c: x_csv is not a folder of part files"; fi
      compare_part "io back, parallel (np $1)" "$tmp/io/l" "$d/d" back
      "$braid" -f "$here/back.dml" -args "$d/b1/back_" "$d/d/io_" > "$d/b1.out" 2>&1 \
        || { bad "io $c: the single-node reader failed on the part files: $(tail -n 3 "$d/b1.out")"; continue; }
      compare_part "io back, single node (np $1)" "$tmp/io/l" "$d/b1" back
    done
  }
  io_all
  check_io() { CHECK=1 io_all; }
  # a bad field: the error names the file and its line, from any rank
  cp "$tmp/data/X.csv" "$tmp/data/B.csv"; cp "$tmp/data/X.csv.mtd" "$tmp/data/B.csv.mtd"
  sed -i '400s/^[^,]*,/1.5,abc,/' "$tmp/data/B.csv"
  # a remote error names its place as a local one does (file:line:col,
  # rank 0's name of the file: the ranks load rank 0's files), in the
  # script or in a function of a source()d file
  errq "parfor error" "$pferr" "^<script>:3:17: error: rank 2: boom at 3$" -exec hybrid
  printf 'boom = function(Matrix[Double] X, Integer i) return (Matrix[Double] Y) {\n  Y = X + 1\n  if (i == 3) { stop("boom at " + i) }\n}\n' > "$tmp/pfe_lib.dml"
  errq "parfor error in a source()d file" "source(\"$tmp/pfe_lib.dml\") as L
X = rand(rows=4, cols=2, seed=1)
R = matrix(0, rows=3, cols=1)
parfor (i in 1:3, mode=REMOTE_SPARK) {
  R[i, 1] = sum(L::boom(X * i, i))
}
print(toString(R))" "^$tmp/pfe_lib.dml:3:17: error: rank 2: boom at 3$" -exec hybrid
  # rank 1's library differs from rank 0's: in this batch rank 1 finds
  # its library in $tmp/h1 (i3's launch runs each rank through
  # rank1lib.sh), which holds a sigmoid.dml of other parameter names and
  # body, an extraFn.dml rank 0 has not, and nothing else. A worker reads
  # no library file of its own: its program loads rank 0's texts (shipped
  # with the script, or asked for while a task runs: runtime/distparfor.c
  # rt_dist_lib_fetch), so every run of the batch gets rank 0's library
  # functions on rank 1, and an eval of extraFn fails there as in the
  # local run (docs/dist.md). Before, rank 1 compiled its own.
  mkdir -p "$tmp/h1/scripts/builtin"
  printf 'm_sigmoid = function(Matrix[Double] Z) return (Matrix[Double] Y) { Y = Z * 0 - 5 }\n' > "$tmp/h1/scripts/builtin/sigmoid.dml"
  printf 'extraFn = function(Matrix[Double] X) return (Matrix[Double] Y) { Y = X + 1 }\n' > "$tmp/h1/scripts/builtin/extraFn.dml"
  printf '#!/bin/sh\n[ "${OMPI_COMM_WORLD_RANK:-}" != 1 ] || { BRAID_HOME=%s; export BRAID_HOME; }\nexec "$@"\n' "$tmp/h1" > "$tmp/rank1lib.sh"
  chmod +x "$tmp/rank1lib.sh"
  errq "parfor eval, a function rank 0 has not" 'X = rand(rows=4, cols=2, seed=1)
R = matrix(0, rows=3, cols=1)
parfor (i in 1:3, mode=REMOTE_SPARK) {
  f = ifelse(i == 2, "extra" + "Fn", "sig" + "moid")
  R[i, 1] = sum(eval(f, list(X)))
}
print(toString(R))' "^<script>:5:[0-9]*: error: rank 1: eval: unknown function 'extraFn'$" -exec hybrid
  # the library functions rank 1 runs are rank 0's: by eval of a name
  # built at run time, and called (pfb.dml, above): the local result to
  # the bit
  if [ -s "$tmp/pfb/l/R" ]; then
    mkdir -p "$tmp/pfl"
    q i3 "$tmp/pfl/d.out" -stats -f "$tmp/pfb.dml" -args "$tmp/pfl/"
  fi
  errq "bad csv" "X = read(\"$tmp/data/B.csv\"); print(sum(X))" "B.csv: line 400: bad number \"abc\" in column 2"
  printf '1 1 2.0\n3 x 1.0\n' > "$tmp/data/B.txt"
  errq "bad text" "X = read(\"$tmp/data/B.txt\", rows=3, cols=3); print(sum(X))" "B.txt: line 2: bad column index \"x\""
  # naStrings in a parallel csv read: the same NaN cells as the local read
  awk 'BEGIN { for (i = 0; i < 600; i++) { l = ""; for (j = 0; j < 5; j++) { k = i * 5 + j
           v = k % 7 == 0 ? "NA" : k % 11 == 0 ? "null" : i * 10 + j; l = l (j ? "," : "") v }; print l } }' \
    > "$tmp/data/NA.csv"
  shares na 'X = read("'"$tmp/data/NA.csv"'", format="csv", header=FALSE, naStrings=["NA", "null"]); write(replace(target=X, pattern=NaN, replacement=-7), "'"$tmp"'/na_$N", format="csv")'
  # libsvm read by byte shares: the same matrix as the local read (the
  # columns from the largest index), and a bad line named by its number
  awk 'BEGIN { for (i = 1; i <= 500; i++) { l = (i % 3) - 1; for (j = 1; j <= 9; j++) if ((i * j) % 4 == 1) l = l " " j ":" (i + j) / 8
           print l } }' > "$tmp/data/S.libsvm"
  shares sv 'X = read("'"$tmp/data/S.libsvm"'", format="libsvm"); write(X * 2, "'"$tmp"'/sv_$N", format="csv")'
  sed '301s/ [0-9]*:/ x:/' "$tmp/data/S.libsvm" > "$tmp/data/B.libsvm"
  errq "bad libsvm" "X = read(\"$tmp/data/B.libsvm\", format=\"libsvm\"); print(sum(X))" "B.libsvm: line 301: bad index in \"x:"
  # Matrix Market coordinate files read by byte shares after the header
  # (rank 0 reads it): general with a duplicate (the later entry wins),
  # symmetric and skew-symmetric (entries mirrored to the ranks holding
  # the mirrored rows), pattern; a short file and a bad entry named by
  # their lines
  mm_error() {   # mm_error WHAT NAME MESSAGE: reading data/NAME.mtx fails with MESSAGE
    errq "$1" "X = read(\"$tmp/data/$2.mtx\", format=\"mm\"); print(sum(X))" "$3"
  }
  mmfile() {   # mmfile NAME FIELD SYMMETRY ROWS COLS AWK-CONDITION
    awk -v f="$2" -v s="$3" -v R="$4" -v C="$5" 'BEGIN { n = 0
      for (i = 1; i <= R; i++) for (j = 1; j <= C; j++) if ('"$6"') { n++; e[n] = i " " j (f == "pattern" ? "" : " " (i * 3 + j) / 4) }
      if (s == "general") { n++; e[n] = "2 3" (f == "pattern" ? "" : " 99.5") }
      print "%%MatrixMarket matrix coordinate " f " " s; print "% written by the mpi tests"; print R " " C " " n
      for (k = 1; k <= n; k++) print e[k] }' > "$tmp/data/$1.mtx"
  }
  mmfile G real general 400 9 '(i * j) % 5 == 1 || (i == 2 && j == 3)'
  mmfile Y real symmetric 300 300 'i >= j && (i + 2 * j) % 23 == 0'
  mmfile K real skew-symmetric 300 300 'i > j && (i * j) % 31 == 2'
  mmfile P pattern general 350 7 '(i + j) % 4 == 0'
  for m in G Y K P; do
    shares "mm$m" 'X = read("'"$tmp/data/$m.mtx"'", format="mm"); write(X * 2, "'"$tmp"'/mm'"$m"'_$N", format="csv")'
  done
  # the array layout (column-major values) by shares too: every share's
  # values are placed by their index in the file (an exclusive scan of the
  # shares' counts); general with zeros, a comment line and several
  # values on some lines, symmetric (lower triangle) and skew-symmetric
  # (without the diagonal); a short one named by its count
  mmarray() {   # mmarray NAME SYMMETRY ROWS COLS
    awk -v s="$2" -v R="$3" -v C="$4" 'BEGIN {
      print "%%MatrixMarket matrix array real " s; print "% column-major"; print R " " C
      k = 0
      for (j = 1; j <= C; j++) for (i = (s == "general" ? 1 : s == "symmetric" ? j : j + 1); i <= R; i++) {
        v = (i * 7 + j * 3) % 11 == 0 ? 0 : (i * 5 - j * 2) / 8; k++
        if (k % 100 == 2) print "% a comment among the values"
        if (k % 5 == 0) printf "%s ", v; else print v
      }
      print "" }' > "$tmp/data/$1.mtx"
  }
  mmarray AG general 301 7
  mmarray AY symmetric 120 120
  mmarray AK skew-symmetric 97 97
  for m in AG AY AK; do
    shares "mm$m" 'X = read("'"$tmp/data/$m.mtx"'", format="mm"); write(X * 2, "'"$tmp"'/mm'"$m"'_$N", format="csv")'
  done
  head -n 900 "$tmp/data/AG.mtx" > "$tmp/data/AT.mtx"
  mm_error "short mm array" AT "AT.mtx: expected 2107 entries (from the size line), found [0-9]* (truncated file?)"
  # the network rate: measured at startup (a ping-pong of ranks 0 and 1)
  # without sysds.dist.netrate, which the configurations give
  shares_run shares
  head -n 200 "$tmp/data/G.mtx" > "$tmp/data/T.mtx"
  mm_error "short mm" T "T.mtx: expected [0-9]* entries (from the size line), found 197 (truncated file?)"
  sed '250s/^[0-9]* /x /' "$tmp/data/G.mtx" > "$tmp/data/B.mtx"
  mm_error "bad mm" B "B.mtx: line 250: bad row index \"x\""
  # mm and libsvm written by parts (mm: part 0 carries the whole matrix's
  # header), read back by shares and by the single-node reader, against
  # the local write
  W='X = rand(rows=1003, cols=11, sparsity=0.3, seed=5) * 4 - 1; X[, 11] = round(rand(rows=1003, cols=1, seed=6))
     write(X, "'"$tmp"'/pw_$N_mm", format="mm"); write(X, "'"$tmp"'/pw_$N_sv", format="libsvm")'
  if lb 7 -s "${W//\$N/l}" > "$tmp/pwl.out" 2>&1; then
    q i3 "$tmp/pw.out" -config "$tmp/bs7.xml" -stats -s "${W//\$N/d}"
    ref=""
    for f in mm:mm sv:libsvm; do
      n=${f%%:*} fmt=${f#*:}
      shares "pw$n" 'X = read("'"$tmp/pw_d_$n"'", format="'"$fmt"'"); write(X, "'"$tmp"'/pw'"$n"'_$N", format="csv")'
      ref+='X = read("'"$tmp/pw_l_$n"'", format="'"$fmt"'"); write(X, "'"$tmp/pwref_$n"'", format="csv")'$'\n'
    done
    LATER=1 shares_run pwshares
    pw_ok=1
  else
    pw_ok=""; bad "mm/libsvm writes: the local run failed: $(tail -n 3 "$tmp/pwl.out")"
  fi
  # a write over a folder that is not part files: refused, nothing left
  mkdir -p "$tmp/keep"; echo precious > "$tmp/keep/notes"
  q i3 "$tmp/kp.out" -exec distributed -s "X = rand(rows=50, cols=3); write(X, \"$tmp/keep\", format=\"csv\")"
  # a truncated file: the error names it, every rank ends
  # (X.bin is a folder of part files when written by several threads)
  if [ -d "$tmp/data/X.bin" ]; then
    mkdir -p "$tmp/data/T.bin"; head -c 1000 "$tmp/data/X.bin/0-m-00000" > "$tmp/data/T.bin/0-m-00000"
  else head -c 1000 "$tmp/data/X.bin" > "$tmp/data/T.bin"; fi
  cp "$tmp/data/X.bin.mtd" "$tmp/data/T.bin.mtd"
  errq "truncated binary file" "X = read(\"$tmp/data/T.bin\"); print(sum(X))" "T.bin[^:]*: not a valid SystemDS binary-block file: truncated record"
  # the runs above: batch i3 (3 ranks) in one launch, some failing on
  # purpose; i2 and i4 with the later cases. The launch ends with a
  # rank killed under a plain mpirun (below; its status 1 by design)
  q i3 - -f "$tmp/loop.dml" -config "$tmp/bs7.xml"
  KILL_WAIT=1400 GO_WRAP="$tmp/rank1lib.sh" kill_rank2 "$tmp/killp.out" go i3 3 BRAID_DIST_TRACE=1
  kill_victim=$victim kill_rc=$rc
  if [ -s "$tmp/pfb/l/R" ]; then
    if cmp -s "$tmp/pfb/l/R" "$tmp/pfl/R"; then ok
    else bad "parfor, rank 1's library differs: not the local result to the bit: $(head -n 2 "$tmp/pfl/R" 2>&1) $(tail -n 3 "$tmp/pfl/d.out")"; fi
    if grep -qE "^  \(remote parfor plans: 1 shipped, 0 not; workers decoded [1-9][0-9]* and compiled 0 programs or functions; [1-9][0-9]* functions came from rank 0 on request\)$" "$tmp/pfl/d.out"
    then ok; else bad "parfor, rank 1's library differs: a worker compiled or dropped a copy, or no function came from rank 0: $(grep 'parfor plans' "$tmp/pfl/d.out")"; fi
  fi
  if [ -n "${ga_queued:-}" ]; then check_ga "group A (np 3, bs7)" "$tmp/ga/d.out" "$tmp/ga/d" 3; fi
  # the same under a plain mpirun: rank 0 traces the ranks on its machine
  # (ptrace), so it sees rank 2's end, and its signal, before mpirun's
  # daemon can collect it. Where this machine does not allow tracing
  # (rank 0's -stats says so), a pidfd tells the end and the signal is read
  # while mpirun has not collected it (else the line says mpirun has it).
  # mpirun's status is OpenMPI's choice: the first failed rank it records,
  # 137 (rank 2's SIGKILL) or 1 (rank 0's exit)
  # (the watch line of a 3-rank run with bs7.xml and -stats: group A's, in
  # the same launch)
  watch=$(grep '^  rank watch:' "$tmp/ga/d.out")
  case "$watch" in
    "  rank watch: 2 ranks on this machine traced, 0 by pidfd; 0 other machines reporting") how="$sig9"; ok ;;
    "  rank watch: 0 ranks on this machine traced, 2 by pidfd; 0 other machines reporting")
      how="$sig9|mpirun collected its status first, as braid may not trace its ranks here: mpirun names the signal"; ok ;;
    *) how="$sig9"; bad "rank watch: '$watch'" ;;
  esac
  victim=$kill_victim rc=$kill_rc
  killed "kill (mpirun)" "$tmp/killp.out" 2 "$how"
  later+=(check_io)
  err_check
  for g in "${shares_later[@]}"; do shares_check $g; done
  # the network rate: measured at startup (a ping-pong of ranks 0 and 1)
  # without sysds.dist.netrate, which the configurations give (measured
  # again after the batch's reset)
  rate=$(grep '^  network rate' "$tmp/shares/d.out")
  case $rate in
    *"GB/s (measured at startup)") ok ;;
    *) bad "network rate not measured: $rate" ;;
  esac
  if [ -n "$pw_ok" ]; then
    if grep -qE "^  write +2 jobs" "$tmp/pw.out" && [ -f "$tmp/pw_d_mm/part-00002" ] && [ -f "$tmp/pw_d_sv/part-00002" ]; then ok
    else bad "mm/libsvm writes: not written by parts: $(ls "$tmp/pw_d_mm"; tail -n 5 "$tmp/pw.out")"; fi
    if "$braid" -s "$ref" > "$tmp/pwr.out" 2>&1; then
      for f in mm:mm sv:libsvm; do
        queue "${f#*:} written by parts differs from the local write" "$tmp/pwref_${f%%:*}" "$tmp/pw${f%%:*}_l" ""
      done
    else bad "written by parts: the local read failed: $(tail -n 3 "$tmp/pwr.out")"; fi
  fi
  if grep -q "cannot write $tmp/keep" "$tmp/kp.out" && [ "$(cat "$tmp/keep/notes")" = precious ] &&
     [ -z "$(ls "$tmp" | grep 'keep\.')" ]; then ok
  else bad "write over a foreign folder: $(tail -n 3 "$tmp/kp.out"; ls "$tmp")"; fi
else
  bad "write.dml failed: $(tail -n 3 "$tmp/write.out")"
fi

# algorithms of the builtin library with their data over the budget, all
# in one run (one mpirun, not one per algorithm): each part's results
# equal the local run's, and each part ran distributed jobs of its own
# (BRAID_DIST_TRACE=1 prints every job in order with algos.dml's lines
# after the data and after each part; the frees a part's end leaves to
# the next are not counted). Under BRAID_NO_PTRACE=1: its rank watch is
# checked below.
algos="l2svm lm kmeans mlogreg glm pca alscg autoencoder"
mkdir -p "$tmp/algos/l" "$tmp/algos/d"
if ! lb 7 -f "$here/algos.dml" -args "$tmp/algos/l/" all > "$tmp/algos/l.out" 2>&1; then
  bad "algorithms: the local run failed: $(tail -n 3 "$tmp/algos/l.out")"
else
  q a3 "$tmp/algos/d.out" -f "$here/algos.dml" -config "$tmp/bs7.xml" -stats -args "$tmp/algos/d/" all
  later+=(check_algos)
fi
check_algos() {
  local a f got
  for a in $algos; do
    case $a in   # the files algos.dml writes for $a
      lm) f="lm lmcg" ;; kmeans) f="kmeans_c kmeans_y" ;; autoencoder) f="ae_w1 ae_h" ;; *) f=$a ;;
    esac
    compare "$a" "$tmp/algos/l" "$tmp/algos/d" "$f"
  done
  # the parts in order, each with the count of its jobs (not frees)
  got=$(awk '/^algos\.dml: data / { on = 1; n = 0; next }
             /^algos\.dml: done / { if (on) printf "%s:%d ", $3, n; n = 0; next }
             on && /^dist job / && $3 != "free" { n++ }' "$tmp/algos/d.out")
  for a in $algos; do
    case " $got" in
      *" $a:0 "*) bad "$a: nothing ran distributed" ;;
      *" $a:"[1-9]*) ok ;;
      *) bad "$a: no part in the trace: '$got'" ;;
    esac
  done
}

# plan bytes priced in multiLogReg (algos.dml's part, 2 ranks, bs7.xml):
# a Cell operator alone whose region was a MAgg's root before has a plan
# of its own, priced as such (codegen/cgdist.c: a root is priced by the
# MAgg's share only where the MAgg's other roots are there again; before,
# by the share the workers held: 25631 sent, 24600 priced, 1.042)
mkdir -p "$tmp/mlp"
if [ -f "$tmp/algos/l/mlogreg" ]; then
  q i2 "$tmp/mlp.out" -f "$here/algos.dml" -config "$tmp/bs7.xml" -stats -args "$tmp/mlp/" mlogreg
  later+=(check_mlp)
else bad "plan bytes priced mlogreg: no local result"; fi
check_mlp() {
  local r
  compare "plan bytes priced mlogreg" "$tmp/algos/l" "$tmp/mlp" mlogreg
  r=$(sed -n 's/^  (fused operator plan bytes: \([0-9]*\) sent, \([0-9]*\) priced by the fusion cost model, \([0-9]*\) in full)$/\1 \2 \3/p' "$tmp/mlp.out")
  if [ -n "$r" ] && "$py" -c "import sys; s, p, f = map(float, sys.argv[1:]); sys.exit(not (p > 0 and 0.95 <= s / p <= 1.05))" $r; then ok
  else bad "plan bytes priced mlogreg: sent, priced, in full: '${r:-none}'"; fi
}

# dynamic recompilation: unknown sizes compile to distributed operators,
# the recompiled block runs locally when the real sizes are small and
# distributed when they exceed the budget
# (n=5 and n=900 as the parts of one run: recompile.dml reads n from $2
# and $3 there)
echo 5 > "$tmp/n5"; echo 900 > "$tmp/n900"
{ part n5 "$here/recompile.dml" 's/\$1/$2/g'; part n900 "$here/recompile.dml" 's/\$1/$3/g'; } > "$tmp/rc.dml"
if ! want=$(lb 7 -f "$tmp/rc.dml" -args "$tmp/" "$tmp/n5" "$tmp/n900" 2>&1); then bad "recompile: the local run failed: $want"
else
  q i2 "$tmp/rc.out" -f "$tmp/rc.dml" -config "$tmp/bs7.xml" -stats -explain recompile_hops -args "$tmp/" "$tmp/n5" "$tmp/n900"
  later+=(check_rc)
fi
check_rc() {
  local n w jobs got
  for n in 5 900; do
    # part n's lines: its blocks in the compiled plan (from the marker's
    # literal on), then its run: the recompiled block, its result
    awk -v p="run.sh: part n$n" '$0 == p || index($0, "LIT \"" p "\"") { on = 1; next }
      /^run\.sh: part / || /LIT "run\.sh: part / { on = 0 } on' "$tmp/rc.out" > "$tmp/rc$n.out"
    w=$(printf '%s\n' "$want" | awk -v p="run.sh: part n$n" '$0 == p { on = 1; next } /^run\.sh: part / { on = 0 } on && /^-?[0-9]/' | head -n 1)
    jobs=$(grep -c '^dist job ' "$tmp/rc$n.out")
    if ! grep -qE "ua\(sumsq\) +\(1\) \[scalar\] 8B/- DIST" "$tmp/rc$n.out"; then bad "recompile n=$n: the unknown-size plan is not distributed"
    elif ! got=$(grep -E '^-?[0-9]' "$tmp/rc$n.out" | head -n 1) || [ -z "$w" ] ||
         ! "$py" -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-10 * max(1, abs(a)))" "$w" "$got"; then
      bad "recompile n=$n: result $got differs from the local run's $w"
    elif [ $n = 5 ] && [ "$jobs" != 0 ]; then bad "recompile n=5: $jobs jobs ran (small data: local)"
    elif [ $n = 900 ] && [ "$jobs" = 0 ]; then bad "recompile n=900: nothing ran distributed"
    else ok; fi
  done
}
# -explain runtime: the reduce operators over X expected to share one
# piggybacked job, led by the first (r1); the job then runs
q i2 "$tmp/explain.out" -exec distributed -explain runtime -stats -config "$tmp/bs7-nocg.xml" -s 'X = rand(rows=400, cols=12, seed=1)
X = X + 1
while (FALSE) {}
a = sum(X)
b = colSums(X)
c = t(X) %*% X
print(a + sum(b) + sum(c))'
check_explain() {
  if [ "$(grep -cE '(uasum|uacsum|tsmm)\(r0\)  DIST \[piggyback job r1\]' "$tmp/explain.out")" = 3 ] &&
   grep -qE "^  piggyback +1 jobs" "$tmp/explain.out"; then ok
  else bad "explain piggyback: $(grep -E 'DIST|piggyback' "$tmp/explain.out")"; fi
}
later+=(check_explain)
# the reset between the runs of one process (-then: dist_reset,
# cg_dist_reset): the same script twice in a row in batch i2 (each after
# other runs) gives the same -stats of its jobs (counts, bytes sent and
# predicted), its fused plans sent again (the workers' plan caches were
# emptied) and priced alike, not counts that go on from the runs before
rs='X = rand(rows=400, cols=12, seed=5); print(sum(t(X) %*% X) + sum(colSums(exp(X) * 2)))'
q i2 "$tmp/rs1.out" -config "$tmp/bs7.xml" -stats -s "$rs"
q i2 "$tmp/rs2.out" -config "$tmp/bs7.xml" -stats -s "$rs"
check_reset() {
  local a b
  a=$(awk '/^Distributed jobs/ { on = 1 } on' "$tmp/rs1.out" | sed 's/[0-9.]* sec//g')
  b=$(awk '/^Distributed jobs/ { on = 1 } on' "$tmp/rs2.out" | sed 's/[0-9.]* sec//g')
  if [ -n "$a" ] && [ "$a" = "$b" ] && grep -q "^  (fused operator plans: [1-9][0-9]* sent, " "$tmp/rs2.out"; then ok
  else bad "reset between runs: $(diff <(printf '%s\n' "$a") <(printf '%s\n' "$b") | head -n 8)"; fi
}
later+=(check_reset)
# fused reduce operators over the same partitions piggybacked: all three
# share one job with sum(X) (the rewrites split it off a's sum) (one
# agreement, one reduction per combine operator: sum and min here; the
# first scatters X before it leads, and a number literal the block
# computes later is ready), marked by -explain runtime; results as the
# local run
fg='X = rand(rows=400, cols=12, min=-1, max=1, seed=1)
a = sum(X^2 * 3 + X)
b = colSums(exp(X) * 2 - X)
c = colMins(X * 3 + 1)
write(as.matrix(a), "$P/a", format="csv"); write(b, "$P/b", format="csv"); write(c, "$P/c", format="csv")'
# Group B: this script, the weighted table and the mixed piggyback case
# as the parts of one run each with 2 ranks and bs7.xml, 4 and bs3.xml,
# and 3 and bs1000.xml (one rank holds all rows), against one local run.
# The weighted table over distributed vectors (wtable.dml): weights by
# vector and by number, dimensions found and given (pairs beyond them
# dropped), the one-hot rows kept distributed, and outputEmptyBlocks;
# every one a distributed table job. Basic and fused reduce operators
# over the same partitions in one job (mixed.dml: one agreement, one
# reduction per operator for both kinds): 2 fused and 4 basic
mkdir -p "$tmp/gb/l3" "$tmp/gb/l7" "$tmp/gb/l1000"
{ part fg <(printf '%s\n' "${fg//\"\$P\//\$1 + \"}"); part wtable "$here/wtable.dml" 's/\$2/$4/g'; part mixed "$here/mixed.dml"; } > "$tmp/gb.dml"
# (local runs at the distributed runs' block sizes)
if lb 3 -f "$tmp/gb.dml" -args "$tmp/gb/l3/" 203 17 3000 > "$tmp/gb/l.out" 2>&1 &&
   lb 7 -f "$tmp/gb.dml" -args "$tmp/gb/l7/" 203 17 3000 > "$tmp/gb/l.out" 2>&1 &&
   lb 1000 -f "$tmp/gb.dml" -args "$tmp/gb/l1000/" 203 17 3000 > "$tmp/gb/l.out" 2>&1; then
  for c in "2 bs7 i2" "4 bs3 i4" "3 bs1000 a3"; do
    set -- $c
    d="$tmp/gb/d$1$2"; mkdir -p "$d"
    q "$3" "$d.out" -f "$tmp/gb.dml" -config "$tmp/$2.xml" -stats -args "$d/" 203 17 3000
  done
  later+=(check_gb)
else bad "group B: the local run failed: $(tail -n 3 "$tmp/gb/l.out")"; fi
check_gb() {
  local c d n
  for c in "2 bs7" "4 bs3" "3 bs1000"; do
    set -- $c
    d="$tmp/gb/d$1$2"
    for n in fg wtable mixed; do compare_part "group B (np $1, $2) $n" "$tmp/gb/l$(bs_of "$2")" "$d" $n; done
    # fused piggyback: one job, 3 of its reduce operators fused
    check_jobs "fused piggyback $c" "$d.out" fg '^dist job piggyback [0-9]+ 3$' 1 "one job with 3 fused reduce operators"
    check_jobs "fused piggyback $c" "$d.out" fg '^dist job (piggyback|fused) ' 1 "no other reduce job"
    check_jobs "weighted table $c" "$d.out" wtable '^dist job table$' 5 "a table job each"
    check_mixed "$c" "$d.out" "$1"
  done
}
# (-explain runtime shows the fused operators of a block that prints its
# results; with the writes it shows the plan before fusion)
fg=${fg%%write*}'print(a + sum(b) + sum(c))'
q i2 "$tmp/gb/e.out" -exec distributed -explain runtime -stats -config "$tmp/bs7.xml" -s "$fg"
check_gbe() {
  if [ "$(grep -cE 'spoofCell\([^)]*\)  DIST \[piggyback job r[0-9]+\]' "$tmp/gb/e.out")" = 3 ] &&
   grep -q "(fused jobs ran 3 piggybacked fused reduce operators)" "$tmp/gb/e.out"; then ok
  else bad "explain fused piggyback: $(grep -E 'spoof|fused|rror' "$tmp/gb/e.out")"; fi
}
later+=(check_gbe)

# The products of two distributed operands and the reduce products, with
# the map and reduce operators, reorgs, appends, indexing and tables, over
# shapes and sparsity (mm2.dml, its parts: 5 x 3 dense and sparse, 40 x 6
# sparse X, 203 x 17 sparse X and W, 203 x 17 dense X with sparse W),
# with every operand distributed (a budget of 100 bytes), piggybacking
# off: 2 ranks with 3-row blocks (hybrid); 3 ranks with one block of 1000
# rows (two ranks hold nothing; distributed); 4 ranks with 3-row blocks
# (5 rows: 2 blocks for 4 ranks; spark). Under the sanitizers the 2-rank
# run is left out (ops dense runs hybrid at 2 ranks; the 3- and 4-rank
# runs cover the sparse cpmm and the ranks without rows). Each part runs W %*% X and X %*% W as cpmm or rmm (by
# their volume; X %*% v too where v exceeds the budget) and its tsmm
# and tmm jobs; the sparse 203 x 17 part's W %*% X is cpmm at every
# rank count
config tiny3 100 3 false; config tiny1000 100 1000 false
mm2_shapes=("5 3 1.0 1.0 31" "5 3 0.2 0.2 32" "40 6 0.05 0.7 33" "203 17 0.05 0.05 34" "203 17 1.0 0.05 35")
mkdir -p "$tmp/mm2/l3" "$tmp/mm2/l1000"
: > "$tmp/mm2.dml"
for k in 0 1 2 3 4; do
  part "s$k" "$here/mm2.dml" "$(for a in 6 5 4 3 2; do printf 's/\\$%d\\b/$%d/g;' $a $((a + 5 * k)); done)" >> "$tmp/mm2.dml"
done
# (local runs at the distributed runs' block sizes)
if lb 3 -f "$tmp/mm2.dml" -args "$tmp/mm2/l3/" ${mm2_shapes[*]} > "$tmp/mm2/l.out" 2>&1 &&
   lb 1000 -f "$tmp/mm2.dml" -args "$tmp/mm2/l1000/" ${mm2_shapes[*]} > "$tmp/mm2/l.out" 2>&1; then
  for c in "2 tiny3 i2 hybrid" "3 tiny1000 a3 distributed" "4 tiny3 i4 spark"; do
    set -- $c
    [ -z "$san" ] || [ "$1" != 2 ] || continue
    mkdir -p "$tmp/mm2/d$1"
    echo "$2" > "$tmp/mm2/d$1.cfg"
    q "$3" "$tmp/mm2/d$1.out" -f "$tmp/mm2.dml" -config "$tmp/$2-nocg.xml" -exec "$4" -stats -args "$tmp/mm2/d$1/" ${mm2_shapes[*]}
  done
  later+=(check_mm2)
else bad "products sweep: the local run failed: $(tail -n 3 "$tmp/mm2/l.out")"; fi
check_mm2() {
  local np k d t
  for np in $([ -n "$san" ] || echo 2) 3 4; do
    d="$tmp/mm2/d$np"
    for k in 0 1 2 3 4; do
      compare_part "products sweep (np $np, ${mm2_shapes[$k]})" "$tmp/mm2/l$(bs_of "$(cat "$d.cfg")")" "$d" "s$k"
      # (X %*% v too where v is over the budget: 6 or 17 rows of 8 bytes)
      check_jobs "products sweep np $np" "$d.out" "s$k" '^dist job (cpmm|rmm)$' $((k < 2 ? 2 : 3)) "W %*% X and X %*% W each a product of two distributed operands"
      check_jobs "products sweep np $np" "$d.out" "s$k" '^dist job tsmm$' 1 "t(X) %*% X distributed"
      check_jobs "products sweep np $np" "$d.out" "s$k" '^dist job tmm$' 1 "t(X) %*% Y distributed"
      for t in binary rowagg colagg agg transpose rev cbind rbind rowslice colslice leftindex table; do
        check_jobs "products sweep np $np" "$d.out" "s$k" "^dist job $t\$" + "no distributed $t job"
      done
    done
    check_jobs "products sweep np $np" "$d.out" s3 '^dist job cpmm$' 1 "the sparse operands' W %*% X by cpmm"
  done
}

# -exec under mpirun: singlenode runs no job (the same sum), the
# default (hybrid) distributes the product over the budget
ex_s='X = rand(rows=400, cols=12, seed=1); print("sum " + sum(t(X) %*% X))'
q i2 "$tmp/ex_single.out" -exec singlenode -config "$tmp/bs7.xml" -stats -s "$ex_s"
q i2 "$tmp/ex_default.out" -config "$tmp/bs7.xml" -stats -s "$ex_s"
check_exec() {
  local a b
  a=$(grep '^sum ' "$tmp/ex_single.out"); b=$(grep '^sum ' "$tmp/ex_default.out")
  if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad "-exec singlenode under mpirun: '$a', the default: '$b'"; fi
  if grep -q '^Distributed jobs (2 ranks):	0 ' "$tmp/ex_single.out"; then ok
  else bad "-exec singlenode under mpirun ran jobs: $(grep '^Distributed jobs' "$tmp/ex_single.out")"; fi
  if grep -qE '^  tsmm +1 jobs' "$tmp/ex_default.out"; then ok
  else bad "the default -exec under mpirun (hybrid) did not distribute t(X) %*% X: $(grep -A3 '^Distributed jobs' "$tmp/ex_default.out")"; fi
}
later+=(check_exec)

# rank 0 refuses to collect what does not fit its memory (br_mem_physical:
# 70% of RAM, lowered here to 100 KB by BRAID_MEM_BUDGET, read once per
# process: its own launch): a local operation over a distributed 300 x 100
# matrix (dist_collect) and a row range of it (dist_rix) end with a clear
# error at the statement, status 1; the next run of the launch, whose row
# range fits, runs (the row range's refusal used to be taken for a result:
# "expected a matrix, got a none")
big='X = rand(rows=300, cols=100, seed=3); Z = X * 2 + 1; if (sum(Z) > 0) { print("z") }; '
q c2 "$tmp/coll1.out" -config "$tmp/bs7.xml" -s "${big}Y = cumsum(Z); print(sum(Y))"
q c2 "$tmp/coll2.out" -config "$tmp/bs7.xml" -s "${big}Y = Z[1:200, ]; print(sum(Y))"
q c2 "$tmp/coll3.out" -config "$tmp/bs7.xml" -s "${big}Y = Z[1:100, ]; print(\"fits \" + sum(Y))"
if go c2 2 BRAID_MEM_BUDGET=100000 > "$tmp/c2.out" 2>&1; then bad "collect over rank 0's memory: the launch ended with status 0"; else ok; fi
if grep -qE '^<script>:1:[0-9]+: error: a local operation needs the distributed 300 x 100 matrix on rank 0 \(0\.0002 GB\), more than its memory \(0\.0001 GB\)$' "$tmp/coll1.out"; then ok
else bad "collect over rank 0's memory: $(tail -n 3 "$tmp/coll1.out")"; fi
if grep -qE '^<script>:1:[0-9]+: error: rows 1:200 of a distributed matrix need 0\.0002 GB on rank 0, more than its memory \(0\.0001 GB\)$' "$tmp/coll2.out"; then ok
else bad "row range over rank 0's memory: $(tail -n 3 "$tmp/coll2.out")"; fi
if grep -q '^fits ' "$tmp/coll3.out" && ! grep -q 'error' "$tmp/coll3.out"; then ok
else bad "a row range that fits, after two refusals: $(tail -n 3 "$tmp/coll3.out")"; fi

# the batches of the cases above: i2, i4, and a3 (without ptrace: the
# algorithms' run gives the rank watch line of that path, below); then
# their checks
# b3's runs, then a rank killed in the middle of a job under braid's
# launcher (-np): every rank ends (no hang), the status is 1 and the
# launcher names the dead rank, its signal and rank 0's instruction.
# This loop writes a distributed matrix as part files to the same
# target at every iteration, so the kill mostly lands in a write: the
# target is then the last whole version (X * i for one i, as a local
# read finds it after recovery) or absent, and nothing else is left
# next to it
mkdir -p "$tmp/kw"
sed 's|^for (i in 1:1000000) .*|write(X, $1 + "0", format="binary")\nfor (i in 1:1000000) { write(X * i, $1, format="binary") }|' "$tmp/loop.dml" > "$tmp/loop.dml-w.dml"
q b3 - -f "$tmp/loop.dml-w.dml" -config "$tmp/bs7.xml" -args "$tmp/kw/P"
KILL_WAIT=1400 GO_NP=braid kill_rank2 "$tmp/kill.out" go b3 3 BRAID_DIST_TRACE=1 BRAID_DIST_PLAN_SLOTS=1
killed "kill" "$tmp/kill.out" 2 "$sig9" 1
# (temporaries of the dead writers may stay until the next read or
# write of the target: the read below removes them, docs/durability.md)
if [ ! -e "$tmp/kw/P" ] && [ ! -e "$tmp/kw/P.mtd" ]; then ok
elif "$braid" -s "X0 = read(\"$tmp/kw/P0\"); X = read(\"$tmp/kw/P\"); k = round(as.scalar(X[1, 1] / X0[1, 1]))
  print(\"whole \" + (nrow(X) == 2000 & k >= 1 & sum(X != X0 * k) == 0))" > "$tmp/kw.out" 2>&1 &&
  grep -qx "whole TRUE" "$tmp/kw.out"; then
  if [ "$(ls -A "$tmp/kw" | sort | tr '\n' ' ')" = "P P.mtd P0 P0.mtd " ]; then ok
  else bad "a rank killed during distributed writes: left after a read: $(ls -A "$tmp/kw" | tr '\n' ' ')"; fi
else bad "a rank killed during distributed writes: the target is not a whole version: $(cat "$tmp/kw.out")"; fi
# a library file rank 0's script writes between two remote parfor loops:
# the first loop's eval of s_sigmoid by its bare name finds no file of
# that name on rank 0 (the worker remembers the miss, then finds
# sigmoid.dml's helper); the script then writes s_sigmoid.dml (another
# body) into rank 0's library folder, and the second loop's eval must
# find it on the workers as locally: a worker forgets its misses at the
# start of each task (lang/load.c lang_library_forget). The batch i2
# runs with a library folder of links to the builtin files (BRAID_HOME:
# $tmp/h0; the local run $tmp/h0l), this run last in it, as it adds a
# file there
pff='X = rand(rows=10, cols=3, seed=1)
R = matrix(0, rows=4, cols=2)
parfor (i in 1:4, mode=REMOTE_SPARK) {
  g = "sig" + ifelse(i > 0, "moid", "x")
  h = "s_" + ifelse(i > 0, "sigmoid", "x")
  R[i, 1] = sum(eval(g, list(X * i)))
  R[i, 1] = as.scalar(R[i, 1]) + eval(h, list(i / 4))
}
write("s_sigmoid = function(Double x) return (Double y) { y = x * 1000 }", $1 + "s_sigmoid.dml", format="text")
parfor (i in 1:4, mode=REMOTE_SPARK) {
  h = "s_" + ifelse(i > 0, "sigmoid", "x")
  R[i, 2] = eval(h, list(i / 4))
}
write(R, $2 + "R", format="csv")'
for h in h0 h0l; do
  mkdir -p "$tmp/$h/scripts/builtin"; ln -s "$here"/../../scripts/builtin/*.dml "$tmp/$h/scripts/builtin/"
  for d in "$here"/../../scripts/*/; do [ "$(basename "$d")" = builtin ] || ln -s "$d" "$tmp/$h/scripts/"; done
done
mkdir -p "$tmp/pff/l" "$tmp/pff/d"
printf '%s\n' "$pff" > "$tmp/pff.dml"
if BRAID_HOME=$tmp/h0l "$braid" -f "$tmp/pff.dml" -args "$tmp/h0l/scripts/builtin/" "$tmp/pff/l/" > "$tmp/pff/l.out" 2>&1 &&
   [ "$(sed -n 2p "$tmp/pff/l/R")" = "$(sed -n 2p "$tmp/pff/l/R" | sed 's/,.*//'),500.0" ]; then
  q i2 "$tmp/pff/d.out" -stats -f "$tmp/pff.dml" -args "$tmp/h0/scripts/builtin/" "$tmp/pff/d/"
  later+=(check_pff)
else bad "a library file written between parfor loops: the local run failed or did not see it: $(tail -n 3 "$tmp/pff/l.out"; cat "$tmp/pff/l/R")"; fi
check_pff() {
  if cmp -s "$tmp/pff/l/R" "$tmp/pff/d/R"; then ok
  else bad "a library file written between parfor loops: not the local result (a worker kept its miss?): $(cat "$tmp/pff/d/R" 2>&1)"; fi
  # (sigmoid.dml in the first loop, s_sigmoid.dml in the second; one
  # miss: the first loop's)
  if grep -qE "^  \(remote parfor requests to rank 0: functions [1-9][0-9]*, library files 2, names without a library file 1\)$" "$tmp/pff/d.out"
  then ok; else bad "a library file written between parfor loops: $(grep 'requests to rank 0' "$tmp/pff/d.out")"; fi
}
# the ops, fused operators and parfor runs of 2 and 4 ranks (b2, b4)
# first in the launches of i2 and i4 (their runs write to their own
# files; i4's --tag-output marks only the launch's own output)
join b2 i2; join b4 i4
gone i2 2 "2-rank cases" BRAID_DIST_TRACE=1 BRAID_HOME="$tmp/h0"
MPIRUN_EXTRA=--tag-output gone i4 4 "4-rank cases" BRAID_DIST_TRACE=1
CHECK=1 ops_all; CHECK=1 fused_all; CHECK=1 pf_all
# a3's runs, then a rank killed where tracing is not allowed
# (BRAID_NO_PTRACE=1 takes that path): the watch uses pidfds, and a
# killed rank is still named (its signal read from its zombie, or
# mpirun's collecting it first said)
q a3 - -f "$tmp/loop.dml" -config "$tmp/bs7.xml"
KILL_WAIT=1400 kill_rank2 "$tmp/killnt.out" go a3 3 BRAID_DIST_TRACE=1 BRAID_NO_PTRACE=1
killed "kill (no ptrace)" "$tmp/killnt.out" 2 "$sig9|mpirun collected its status first, as braid may not trace its ranks here: mpirun names the signal"
for f in "${later[@]}"; do "$f"; done

# an unknown -exec mode
if "$braid" -exec cluster -s 'print(1)' > "$tmp/exec.out" 2>&1; then bad "-exec cluster accepted"
elif grep -q "expects singlenode, hybrid, distributed or spark" "$tmp/exec.out"; then ok
else bad "-exec cluster: $(cat "$tmp/exec.out")"; fi

# -exec distributed without mpirun: a clear error, not a wrong budget
if "$braid" -exec distributed -s 'X = rand(rows=100, cols=10, seed=1); print(sum(X %*% t(X)))' > "$tmp/nompi.out" 2>&1; then
  bad "-exec distributed ran without mpirun"
elif grep -q "runs distributed (-exec distributed), and distributed execution is not available (run under mpirun)" "$tmp/nompi.out"; then ok
else bad "-exec distributed without mpirun: $(cat "$tmp/nompi.out")"; fi

# ranks on another machine (simulated: BRAID_HOST_ID gives ranks 2 and 3
# a host of their own): that machine's lowest rank traces the others and
# tells rank 0 over its TCP line before mpirun can learn of a death; the
# line's end tells that the watching rank itself died
how=${how:-$sig9}   # (set by the rank watch of group A, batch i3)
# two_hosts OUT [RUNS...]: RUNS (each ending in -then) before the loop
# (MPIRUN_EXTRA: more mpirun options)
two_hosts() { local out=$1; shift; kill_rank2 "$out" timeout 600 mpirun --oversubscribe ${MPIRUN_EXTRA:-} -np 2 "$braid" "$@" -f "$tmp/loop.dml" -config "$tmp/bs7.xml" \
  : -np 2 -x BRAID_HOST_ID=braid-test-host "$braid" "$@" -f "$tmp/loop.dml" -config "$tmp/bs7.xml"; }
# a worker's recompiled parfor body that calls a function with sizes
# known only there (pfspec.dml): the specialization comes from rank 0
# (the workers compile nothing), in the launch of the other machine's
# kill
mkdir -p "$tmp/pfs/l" "$tmp/pfs/d"
pfs=()
if lb 7 -f "$here/pfspec.dml" -args "$tmp/pfs/l/" 2000 > "$tmp/pfs/l.out" 2>&1; then
  pfs=(-f "$here/pfspec.dml" -config "$tmp/bs7.xml" -threads 2 -stats -args "$tmp/pfs/d/" 2000 -out "$tmp/pfs.out" -then)
else bad "specialized on request: the local run failed: $(tail -n 3 "$tmp/pfs/l.out")"; fi
# (the watch line of a run on the two machines: before the loop of the
# first kill's launch)
KILL_WAIT=240 victim_rank=3 two_hosts "$tmp/kill3.out" "${pfs[@]}" -config "$tmp/bs7.xml" -stats \
  -s 'X = rand(rows=50, cols=3, seed=1); print(sum(X %*% t(X)))' -out "$tmp/watch2h.out" -then
if [ ${#pfs[@]} -gt 0 ]; then
  compare "specialized on request (np 4)" "$tmp/pfs/l" "$tmp/pfs/d"
  if grep -qE "^  \(remote parfor plans: 1 shipped, 0 not; workers decoded 3 and compiled 0 programs or functions; [1-9][0-9]* functions came from rank 0 on request\)$" "$tmp/pfs.out"
  then ok; else bad "specialized on request: $(grep -E 'parfor plans|rror' "$tmp/pfs.out")"; fi
fi
watch=$(grep '^  rank watch:' "$tmp/watch2h.out")
if [ "$watch" = "  rank watch: 1 ranks on this machine traced, 0 by pidfd; 1 other machines reporting" ] ||
   [ "$watch" = "  rank watch: 0 ranks on this machine traced, 1 by pidfd; 1 other machines reporting" ]; then ok
else bad "rank watch (two hosts): '$watch'"; fi
killed "kill (other machine)" "$tmp/kill3.out" 3 "$how"
# the workers' folder runs (above) first in this launch: each rank in a
# folder of its own (mpirun -wdir): rank 0 the scripts, rank 1 the
# decoys, ranks 2-3 (the other machine) none
KILL_WAIT=500 kill_rank2 "$tmp/kill2h.out" timeout 600 mpirun --oversubscribe \
  -np 1 -wdir "$tmp/so/main" -x BRAID_DIST_TRACE=1 "$braid" "${wd_runs[@]}" -f "$tmp/loop.dml" -config "$tmp/bs7.xml" \
  : -np 1 -wdir "$tmp/so/elsewhere" -x BRAID_DIST_TRACE=1 "$braid" "${wd_runs[@]}" -f "$tmp/loop.dml" -config "$tmp/bs7.xml" \
  : -np 2 -wdir "$tmp/so/none" -x BRAID_DIST_TRACE=1 -x BRAID_HOST_ID=braid-test-host "$braid" "${wd_runs[@]}" \
    -f "$tmp/loop.dml" -config "$tmp/bs7.xml"
check_so
killed "kill (other machine's watcher)" "$tmp/kill2h.out" 2 "on another machine, with the rank that watched it"

# a frozen machine: its leader (rank 2) stopped (SIGSTOP) sends no
# heartbeat over its line; after 10 s of silence rank 0 names it and the
# run ends (status 1, no hang), though the kernel still answers TCP
# keep-alive probes for a stopped process. The launch's ranks talk over
# TCP (MPI's tcp transport, two host entries of the loopback), and the
# TCP ops case (batch h2) runs first in it
h2=()
if [ -s "$tmp/q/h2" ]; then mapfile -d '' h2 < "$tmp/q/h2"; h2+=(-then); fi
rm -f "$tmp/q/h2"
KILL_WAIT=500 MPIRUN_EXTRA="--mca btl tcp,self --host localhost:2,127.0.0.1:2" victim_rank=2 victim_sig=STOP \
  two_hosts "$tmp/stop2.out" "${h2[@]}"
CHECK=1 ops_tcp
if [ -z "$victim" ]; then bad "frozen machine: rank 2 not found: $(tail -n 5 "$tmp/stop2.out")"
elif [ "$rc" != 1 ] && [ "$rc" != 137 ]; then bad "frozen machine: status $rc, not 1 or 137 (124: hung)"
elif ! grep -qE "^braid: error: rank 2 stopped answering \(no heartbeat from its machine for 10 s: frozen, stopped or cut off\) during instruction '[^']*' \(line [0-9]*\)$" "$tmp/stop2.out"; then
  bad "frozen machine: no clear error naming rank 2: $(tail -n 8 "$tmp/stop2.out")"
else ok; fi
# where tracing is not allowed (BRAID_NO_PTRACE=1): the watch line of
# the algorithms' run in batch a3 (its kill above)
watch=$(grep '^  rank watch:' "$tmp/algos/d.out")
if [ "$watch" = "  rank watch: 0 ranks on this machine traced, 2 by pidfd; 0 other machines reporting" ]; then ok
else bad "rank watch without ptrace: '$watch'"; fi

flush
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
