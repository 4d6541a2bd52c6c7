"""Sends identity.ping lines over several connections, a fixed number in flight on each, and
waits for every answer: a load whose size is exact, for counting instructions per request.
Usage: ping_load.py PORT REQUESTS [CONNECTIONS [IN_FLIGHT]]"""
import socket
import sys

port, total = int(sys.argv[1]), int(sys.argv[2])
connections = int(sys.argv[3]) if len(sys.argv) > 3 else 8
in_flight = int(sys.argv[4]) if len(sys.argv) > 4 else 16
line = b'{"jsonrpc":"2.0","id":1,"method":"identity.ping"}\n'
sockets = [socket.create_connection(("127.0.0.1", port), timeout=120) for _ in range(connections)]
each = total // connections
sent, answered, tails = [0] * connections, [0] * connections, [b""] * connections
while any(count < each for count in answered):
    for index, connection in enumerate(sockets):
        room = min(in_flight - (sent[index] - answered[index]), each - sent[index])
        if room > 0:
            connection.sendall(line * room)
            sent[index] += room
        if answered[index] < each:
            data = tails[index] + connection.recv(65536)
            if len(data) == len(tails[index]):
                sys.exit("a connection closed before every answer came")
            if b'"error"' in data:
                sys.exit("an answer was an error: " + data.decode(errors="replace")[:200])
            answered[index] += data.count(b"\n")
            tails[index] = data[data.rfind(b"\n") + 1:]
print(sum(answered))
