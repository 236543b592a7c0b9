#!/usr/bin/env python3
"""Receive sd_notify datagrams on a socket of our own and print them.

Usage: notify_listen.py SOCKET_PATH SECONDS
Prints one line per datagram field (READY=1, STATUS=..., ...) as it arrives
and exits after SECONDS or once STOPPING=1 has been seen.
"""
import os
import socket
import sys
import time

path, limit = sys.argv[1], float(sys.argv[2])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
deadline = time.time() + limit
while time.time() < deadline:
    s.settimeout(max(0.05, deadline - time.time()))
    try:
        data = s.recv(4096).decode()
    except socket.timeout:
        break
    for line in data.splitlines():
        print(line, flush=True)
    if "STOPPING=1" in data.splitlines():
        break
os.unlink(path)
