#!/usr/bin/env bash
# A throwaway PostgreSQL cluster (and a PgBouncer in transaction pooling mode in front of it)
# for the test suites: `eval "$(.ci/postgres.sh start DIR)"` exports LATCHKEY_TEST_DATABASE_URL
# and, when pgbouncer is installed, LATCHKEY_TEST_PGBOUNCER_URL; `.ci/postgres.sh stop DIR`
# ends both. Runs the servers as the
# `postgres` user, since CI runs as root and PostgreSQL refuses to. Password authentication
# (scram-sha-256) over TCP on 127.0.0.1, as a real deployment would use.
set -euo pipefail

command="${1:?start or stop}"
directory="${2:?a directory for the cluster}"
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)

as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

case "$command" in
start)
  mkdir -p "$directory"
  chmod 0700 "$directory"
  [ "$(id -u)" = 0 ] && chown postgres: "$directory"
  password=$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))')
  printf '%s\n' "$password" > "$directory/.pwfile"
  [ "$(id -u)" = 0 ] && chown postgres: "$directory/.pwfile"
  as_postgres "$bin/initdb" -D "$directory/data" -U latchkey --pwfile="$directory/.pwfile" -A scram-sha-256 >/dev/null
  rm -f "$directory/.pwfile"
  port=$(free_port)
  as_postgres "$bin/pg_ctl" -D "$directory/data" -l "$directory/server.log" -w \
    -o "-p $port -k $directory -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=on" start >/dev/null
  PGPASSWORD="$password" "$bin/psql" -h 127.0.0.1 -p "$port" -U latchkey -d postgres -qc "CREATE DATABASE latchkey" >/dev/null
  echo "export LATCHKEY_TEST_DATABASE_URL='postgres://latchkey:$password@127.0.0.1:$port/latchkey'"
  if command -v pgbouncer >/dev/null; then
    bouncer_port=$(free_port)
    cat > "$directory/pgbouncer.ini" <<INI
[databases]
latchkey = host=127.0.0.1 port=$port dbname=latchkey
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bouncer_port
unix_socket_dir =
auth_type = plain
auth_file = $directory/userlist.txt
pool_mode = transaction
max_client_conn = 500
default_pool_size = 20
logfile = $directory/pgbouncer.log
pidfile = $directory/pgbouncer.pid
INI
    printf '"latchkey" "%s"\n' "$password" > "$directory/userlist.txt"
    chmod 0600 "$directory/userlist.txt"
    [ "$(id -u)" = 0 ] && chown postgres: "$directory/pgbouncer.ini" "$directory/userlist.txt"
    as_postgres pgbouncer -d "$directory/pgbouncer.ini"
    echo "export LATCHKEY_TEST_PGBOUNCER_URL='postgres://latchkey:$password@127.0.0.1:$bouncer_port/latchkey'"
    echo "PgBouncer (transaction pooling) on 127.0.0.1:$bouncer_port" >&2
  fi
  echo "PostgreSQL on 127.0.0.1:$port (data in $directory/data)" >&2
  ;;
stop)
  if [ -f "$directory/pgbouncer.pid" ]; then kill "$(cat "$directory/pgbouncer.pid")" 2>/dev/null || true; fi
  as_postgres "$bin/pg_ctl" -D "$directory/data" -m fast -w stop >/dev/null 2>&1 || true
  ;;
*)
  echo "usage: $0 start|stop DIR" >&2
  exit 2
  ;;
esac
