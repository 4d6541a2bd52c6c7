"""Runs verification.start + verification.check pairs straight to verification, the code read
back from its outbox like the user reading the SMS: a load whose size is exact, for counting
instructions per pair. Each connection runs its pairs one after another, on its own thread.
Usage: verify_load.py PORT OUTBOX PAIRS [CONNECTIONS [FIRST_NUMBER]]"""
import json
import socket
import sys
import threading
import time

port, outbox, total = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
connections = int(sys.argv[4]) if len(sys.argv) > 4 else 4
first_number = int(sys.argv[5]) if len(sys.argv) > 5 else 0
codes, codes_lock, failures = {}, threading.Lock(), []


def read_codes(stop):
    """Tails the outbox and keeps each request's code (the six digits after 'code ')."""
    offset, tail = 0, b""
    while not stop.is_set():
        try:
            with open(outbox, "rb") as file:
                file.seek(offset)
                data = file.read()
        except FileNotFoundError:
            data = b""
        offset += len(data)
        lines = (tail + data).split(b"\n")
        tail = lines.pop()
        with codes_lock:
            for line in lines:
                message = json.loads(line)
                codes[message["request_id"]] = message["text"].split("code ")[1][:6]
        if not data:
            time.sleep(0.002)


def call(connection, reader, method, params):
    connection.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}) + "\n").encode())
    answer = json.loads(reader.readline())
    if "result" not in answer:
        raise RuntimeError(f"{method}: {answer}")
    return answer["result"]


def run_pairs(index, count):
    try:
        connection = socket.create_connection(("127.0.0.1", port), timeout=120)
        reader = connection.makefile("rb")
        for pair in range(count):
            number = first_number + index * count + pair
            payload = {"bench": number}
            started = call(connection, reader, "verification.start", {
                "number": f"+1555{200 + index:03d}{number % 10_000:04d}", "channel": "sms", "purpose": "transaction",
                "brand": "Bench", "payload": payload})
            request_id = started["request_id"]
            while True:
                with codes_lock:
                    code = codes.pop(request_id, None)
                if code:
                    break
                time.sleep(0.002)
            checked = call(connection, reader, "verification.check", {"request_id": request_id, "code": code, "payload": payload})
            if checked.get("status") != "verified":
                raise RuntimeError(f"check did not verify: {checked}")
    except Exception as error:  # reported below: a pair that failed makes the whole count wrong
        failures.append(repr(error))


stop = threading.Event()
tailer = threading.Thread(target=read_codes, args=(stop,))
tailer.start()
workers = [threading.Thread(target=run_pairs, args=(index, total // connections)) for index in range(connections)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
stop.set()
tailer.join()
if failures:
    sys.exit("pairs failed: " + "; ".join(failures[:3]))
print(total // connections * connections)
