# Sourced by the bench scripts that run services themselves (not a command of its own).

# A port for a service to listen on (the scripts use it and the next few).
random_port() { echo $(( 20000 + RANDOM % 20000 )); }

# Waits until something accepts connections on 127.0.0.1:PORT; fails the script after 100 s.
wait_for_port() {
  for _ in $(seq 1 400); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), timeout=1)" 2>/dev/null && return 0
    sleep 0.25
  done
  echo "nothing listens on port $1" >&2
  exit 1
}

# One load plays many users from one address: lift the abuse limits it would trip (exported,
# so the verification started next reads them).
lift_verification_send_limits() {
  for limit in PER_NUMBER_10M PER_NUMBER_DAY PER_CLIENT_10M PER_CLIENT_DAY GLOBAL_HOUR GLOBAL_DAY; do
    export "LATCHKEY_VERIFICATION_SENDS_$limit=100000000"
  done
}
