#!/usr/bin/env python3
"""gateway.ping over the HTTP door vs. over the line protocol, in one run.

Each measurement uses raw keep-alive sockets (no HTTP library, so the client costs the same
for both protocols): one connection one request at a time (latency-bound), then the same
connection with PIPELINE requests written at once. Prints requests/s.

usage: http_bench.py HTTP_HOST:PORT LINE_HOST:PORT [--seconds S] [--pipeline K]
"""
import argparse
import socket
import time


def connect(address):
    host, port = address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


class HTTPClient:
    REQUEST = (b"POST /v1/gateway/ping HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
               b"Content-Length: 2\r\n\r\n{}")

    def __init__(self, address):
        self.sock = connect(address)
        self.buffer = b""

    def send(self, count):
        self.sock.sendall(self.REQUEST * count)

    def receive(self):
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end >= 0:
                head = self.buffer[:end].decode("latin-1")
                assert head.startswith("HTTP/1.1 200"), head.splitlines()[0]
                length = 0
                for line in head.split("\r\n")[1:]:
                    name, _, value = line.partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                total = end + 4 + length
                if len(self.buffer) >= total:
                    self.buffer = self.buffer[total:]
                    return
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed")
            self.buffer += chunk


class LineClient:
    REQUEST = b'{"jsonrpc":"2.0","id":1,"method":"gateway.ping"}\n'

    def __init__(self, address):
        self.sock = connect(address)
        self.buffer = b""

    def send(self, count):
        self.sock.sendall(self.REQUEST * count)

    def receive(self):
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = self.buffer[:end]
                assert b'"pong":true' in line, line
                self.buffer = self.buffer[end + 1:]
                return
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed")
            self.buffer += chunk


def rate(client, seconds, batch):
    for _ in range(50):  # warm up
        client.send(1)
        client.receive()
    count = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        client.send(batch)
        for _ in range(batch):
            client.receive()
        count += batch
    return count / (time.perf_counter() - started)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("http")
    parser.add_argument("line")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--pipeline", type=int, default=16)
    args = parser.parse_args()
    results = {}
    for name, make in (("http", HTTPClient), ("line", LineClient)):
        results[name] = (rate(make(args.http if name == "http" else args.line), args.seconds, 1),
                         rate(make(args.http if name == "http" else args.line), args.seconds, args.pipeline))
    print("gateway.ping requests/s   1 connection, 1 at a time   1 connection, %d pipelined" % args.pipeline)
    for name in ("http", "line"):
        sequential, pipelined = results[name]
        print("  %-6s                  %10.0f                  %10.0f" % (name, sequential, pipelined))
    print("  http/line               %10.2f                  %10.2f" % (
        results["http"][0] / results["line"][0], results["http"][1] / results["line"][1]))


if __name__ == "__main__":
    main()
