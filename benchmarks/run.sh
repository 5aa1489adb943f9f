#!/usr/bin/env bash
# Runs every benchmark comparison side by side and writes benchmarks/results/latest.md.
#
#   benchmarks/run.sh [--quick]
#
# Needs: Java 17+, redis-server on the PATH, and the build (`mvn -DskipTests install` or
# `mvn -DskipTests package`; this script builds what is missing). Starts its own redis-server
# and sample apps on free ports and stops them when it ends, however it ends.
# Prints one `RATIO <comparison> <ours/theirs>` line per comparison (higher is better),
# `P99_ADDED_MS <comparison>-c<connections>` (ms of p99 latency limiting adds) and `BYTES` for Redis memory per key.
# --quick: short trials, under 5 minutes; figures are noisier.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=false
case "${1:-}" in
  --quick) quick=true ;;
  "") ;;
  *) echo "Usage: benchmarks/run.sh [--quick]" >&2; exit 2 ;;
esac

results=benchmarks/results
csv=$results/latest.csv
app_jar=sample-app/target/sample-app-0.1.0-SNAPSHOT.jar
mkdir -p "$results"
rm -f "$csv" "$results"/*.log "$results"/jmh.log.*

command -v redis-server >/dev/null || { echo "redis-server is not on the PATH (Debian: apt-get install redis-server)" >&2; exit 1; }
if [[ ! -f benchmarks/target/classpath.txt || ! -d benchmarks/target/classes || ! -f "$app_jar" ]]; then
  echo "Building the benchmarks and the sample app (mvn -DskipTests package)..."
  mvn -q -DskipTests -pl benchmarks,sample-app -am package
fi
cp="benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A port nothing listens on, away from 6379 and 8080.
free_port() {
  local port
  for _ in $(seq 100); do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  echo "no free port found" >&2
  exit 1
}

await_port() {
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
      return
    fi
    sleep 0.1
  done
  echo "nothing listens on port $1 after 10s" >&2
  exit 1
}

if $quick; then
  redis_trials=(--trial=1s --trials=3 --warmup=2s --count=1s)
  http_trials=(--trial=1s --trials=3 --warmup=4s)
else
  redis_trials=(--trial=3s --trials=7 --warmup=5s --count=3s)
  http_trials=(--trial=3s --trials=7 --warmup=10s)
fi

bench() {
  java -Xms1g -Xmx1g -cp "$cp" io.github.ratelimit.benchmarks.Main "$@" --quick=$quick --csv="$csv"
}

redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --logfile "$PWD/$results/redis.log" &
pids+=($!)
await_port "$redis_port"
redis_version=$(redis-server --version | sed -E 's/.* v=([^ ]+).*malloc=([^ ]+).*/\1 (\2)/')

echo "== in-memory store vs Bucket4j local and Resilience4j (JMH; log in $results/jmh.log.t*)"
bench memory --jmh-log="$results/jmh.log"

echo "== Redis store vs plain Lettuce EVALSHA and Bucket4j Lettuce (Redis $redis_version on port $redis_port)"
bench redis --redis-port="$redis_port" "${redis_trials[@]}"

echo "== Redis memory per key"
bench redis-memory --redis-port="$redis_port"

echo "== HTTP: sample app limited vs unlimited"
# A limit never reached (every request is decided, none rejected); keep-alive connections;
# a Redis timeout that a loaded two-core machine does not hit (the default 100ms can be, and
# then the failure mode's in-memory fallback would be measured instead of Redis).
app_args=(--server.tomcat.max-keep-alive-requests=-1 --logging.level.root=WARN
  --ratelimit.buckets.api.limit=1000000000 --ratelimit.buckets.api.window=1h --ratelimit.redis.timeout=1s)
start_app() {
  local port=$1 name=$2
  shift 2
  java -Xms512m -Xmx512m -jar "$app_jar" --server.port="$port" "${app_args[@]}" "$@" >"$results/app-$name.log" 2>&1 &
  pids+=($!)
}
unlimited_port=$(free_port); start_app "$unlimited_port" unlimited --ratelimit.enabled=false
memory_port=$(free_port); start_app "$memory_port" memory
redis_app_port=$(free_port); start_app "$redis_app_port" redis --spring.profiles.active=redis \
  --spring.data.redis.host=127.0.0.1 --spring.data.redis.port="$redis_port"
bench http "${http_trials[@]}" \
  --unlimited="http://127.0.0.1:$unlimited_port/api/greeting" \
  --limited-memory="http://127.0.0.1:$memory_port/api/greeting" \
  --limited-redis="http://127.0.0.1:$redis_app_port/api/greeting"

echo "== Pictures and report"
bench pictures --svg=docs/algorithms.svg
bench report --redis-version="$redis_version" --svg=docs/throughput.svg
echo "Wrote $results/latest.md, $csv, docs/algorithms.svg, docs/throughput.svg"
