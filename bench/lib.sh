# Helpers the bench scripts share (sourced, not run): reading a daemon's
# HTTP endpoint and a process's CPU time and memory from /proc.

# HTTP GET with bash alone (no curl needed): prints the body.
http_get() {  # http_get PORT PATH
  local port=$1 path=$2
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' \
    "$path" >&3
  sed '1,/^\r$/d' <&3
  exec 3<&-
}
# utime + stime of process PID, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# The same per kind of thread of a rankwatch daemon, on one line: the main
# thread (the consumer: every event, the join, scoring, checkpoints), the
# librdkafka threads ("rdk:..."), and the others (the HTTP server's I/O
# thread and workers, serving scrapes). Threads ended before are in none.
thread_ticks() {  # thread_ticks PID: "MAIN RDKAFKA OTHER"
  local pid=$1 f rest comm ticks main=0 rdk=0 other=0
  for f in /proc/"$pid"/task/*/stat; do
    rest=$(cat "$f" 2>/dev/null) || continue
    comm=${rest#*(}
    comm=${comm%)*}
    # Fields after the comm: state is field 3, utime and stime 14 and 15.
    ticks=$(awk '{ print $12 + $13 }' <<<"${rest##*) }")
    if [[ $f == /proc/$pid/task/$pid/stat ]]; then
      main=$((main + ticks))
    elif [[ $comm == rdk:* ]]; then
      rdk=$((rdk + ticks))
    else
      other=$((other + ticks))
    fi
  done
  echo "$main $rdk $other"
}
# A memory figure of PID from /proc/PID/status (VmRSS, VmHWM...), in KiB.
rss_kib() { awk -v k="$2" '$1 == k ":" { print $2 }' "/proc/$1/status"; }
