#!/usr/bin/env bash
# Prepares a Debian or Ubuntu machine that has Node >= 20 for notify, and can be run again at any
# time (it changes nothing the second time): pnpm through corepack, PostgreSQL, Redis and NATS with
# JetStream from the distribution's packages (installed and started only when nothing answers on
# their ports), the dependencies and the build. `pnpm start` then migrates and starts every process.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
answers() { timeout 1 bash -c "echo > /dev/tcp/127.0.0.1/$1" 2>/dev/null; }
apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then
    as_root apt-get update -qq
    apt_updated=1
  fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}
wait_for() {
  for _ in $(seq 1 50); do answers "$1" && return 0; sleep 0.2; done
  echo "nothing answers on 127.0.0.1:$1" >&2
  return 1
}

# pnpm, at the version package.json names, through Node's corepack.
if ! command -v pnpm >/dev/null 2>&1; then as_root corepack enable pnpm; fi
# corepack checks the registry's signatures; a registry that publishes none (a mirror) needs this.
pnpm --version >/dev/null 2>&1 || export COREPACK_INTEGRITY_KEYS=0
pnpm --version >/dev/null

if ! answers 5432; then
  command -v pg_ctlcluster >/dev/null 2>&1 || apt_install postgresql
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -n1)" main start || true
  wait_for 5432
fi
# Debian's PostgreSQL asks for a password on TCP: notify's default DATABASE_URL
# (postgres://postgres@127.0.0.1:5432/notify) needs the local connections trusted, as on a
# development machine. Set DATABASE_URL instead to use a password.
if [ -z "${DATABASE_URL:-}" ] && command -v psql >/dev/null 2>&1 && ! psql -h 127.0.0.1 -U postgres -w -tAc "SELECT 1" postgres >/dev/null 2>&1; then
  hba="$(as_root runuser -u postgres -- psql -tAc "SHOW hba_file")"
  if ! as_root grep -q "^host all postgres 127.0.0.1/32 trust # notify" "$hba"; then
    as_root sed -i -e "1i host all postgres ::1/128 trust # notify (development)" -e "1i host all postgres 127.0.0.1/32 trust # notify (development)" "$hba"
    as_root runuser -u postgres -- psql -tAc "SELECT pg_reload_conf()" >/dev/null
  fi
fi
if ! answers 6379; then
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server
  as_root mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/notify.log
  wait_for 6379
fi
if ! answers 4222; then
  command -v nats-server >/dev/null 2>&1 || apt_install nats-server
  as_root mkdir -p /var/lib/nats-server
  as_root start-stop-daemon --start --oknodo --background --exec "$(command -v nats-server)" -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  wait_for 4222
fi

pnpm install --frozen-lockfile
pnpm build
