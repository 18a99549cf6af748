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
# A memory figure of PID from /proc/PID/status (VmRSS, VmHWM...), in KiB.
rss_kib() { awk -v k="$2" '$1 == k ":" { print $2 }' "/proc/$1/status"; }
