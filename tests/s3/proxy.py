#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A flaky TCP relay in front of the test S3 server, for the retry tests.

proxy.py MODE N UPSTREAM_PORT PORTFILE COUNTFILE

The first N connections fail (MODE reset: closed at once, with no answer;
MODE 503: answered "503 SlowDown"); later ones are relayed byte for byte to
127.0.0.1:UPSTREAM_PORT. It writes its port to PORTFILE, and the number of
connections so far to COUNTFILE. It exits after 60 s without a connection.
"""
import socket
import sys
import threading

mode, bad, upstream, portfile, countfile = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    sys.argv[4], sys.argv[5]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(64)
with open(portfile, "w") as f:
    f.write("%d\n" % srv.getsockname()[1])
srv.settimeout(60)


def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass


n = 0
while True:
    try:
        c, _ = srv.accept()
    except socket.timeout:
        break
    n += 1
    with open(countfile, "w") as f:
        f.write("%d\n" % n)
    if n <= bad:
        if mode == "503":
            c.recv(65536)
            body = b"<Error><Code>SlowDown</Code><Message>test</Message></Error>"
            c.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: %d\r\n"
                      b"Connection: close\r\n\r\n%s" % (len(body), body))
        c.close()
        continue
    u = socket.create_connection(("127.0.0.1", upstream))
    threading.Thread(target=pump, args=(c, u), daemon=True).start()
    threading.Thread(target=pump, args=(u, c), daemon=True).start()
