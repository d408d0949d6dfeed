#!/bin/bash
# errcat match vs errcat --help: N (default 15) interleaved runs, medians and their ratio.
# Usage: bench/match_speed.sh DATA [MSG env]; uses .venv/bin/errcat
DATA=$(realpath "${1:?usage: bench/match_speed.sh DATA}")
cd "$(dirname "$0")/.."
H=(); M=()
for i in $(seq 1 ${N:-15}); do
  s=$(date +%s%N); .venv/bin/errcat --help >/dev/null; e=$(date +%s%N); H+=($(( (e-s)/1000000 )))
  s=$(date +%s%N); .venv/bin/errcat match --data "$DATA" "${MSG:-ValueError: Total number of attention heads (64) must be divisible by tensor parallel size (3).}" >/dev/null 2>&1; e=$(date +%s%N); M+=($(( (e-s)/1000000 )))
done
h=$(printf "%s\n" "${H[@]}" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
m=$(printf "%s\n" "${M[@]}" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
echo "errcat --help median ${h} ms; errcat match median ${m} ms; ratio $(awk -v a=$m -v b=$h 'BEGIN{printf "%.2f", a/b}')"
