#!/usr/bin/env python3
"""Hostile clients on loopback against one uncored, and a scraper that must
keep being served.

Usage: http_attack.py PORT ATTACK SECONDS AFTER INTERVAL [RUNS]

ATTACK is one of
  burst    640 connections from 80 addresses (127.0.0.10-89), each sending
           'GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n' and closing at once,
           repeated every second
  trickle  320 connections from 40 addresses (127.0.0.100-139), each sending
           a request line and then one header byte a second, never ending
           it; a connection the server closes is opened again
  idle     2000 connections from 250 addresses (127.0.1.1-250) that send
           nothing; a connection the server closes is opened again
  slowread 128 connections from 16 addresses (127.0.2.1-16), each
           pipelining 400 'GET /metrics' requests and never reading an
           answer; a connection the server closes is opened again
  keepalive 10000 connections from 1250 addresses (127.1.0.1-127.1.4.250),
           each asking for /healthz once and then kept alive, idle; a
           connection the server closes is opened again (the attacker's fd
           limit is raised for them; fewer where its hard limit is lower)

Connections are opened 256 at a time at most: a SYN beyond the kernel's
accept queue is dropped, the scraper's too, and retried a second later,
which would measure the kernel rather than the server.

The attack runs for SECONDS, then stops (every attacking socket closed); the
scraper goes on for AFTER more seconds.  The scraper, from 127.0.0.250, asks
for /metrics every 0.2 s on a fresh connection with a 1.5 s limit on the whole
exchange, and reads uncored_samples_total from each answer.  INTERVAL is the
daemon's sampling interval.

RUNS (default 1): the whole, attack and scraper, that many times in a row.

  tcpmem   SOCKETS connections (environment UNCORED_TCPMEM_SOCKETS, default
           1000) from one address (127.0.3.1), each pipelining 16
           'GET /metrics' and never reading; a connection the server closes
           or resets is opened again 0.5 s later, 16 * SOCKETS opens in all
           at most.  The
           host's TCP memory (/proc/net/sockstat, 'TCP: ... mem', pages) is
           read before the attack and all through it: the attack fails when
           it grows by more than LIMIT MiB (UNCORED_TCPMEM_LIMIT_MB, default
           64), and the scraper's only limit is 5 s an answer (its p99 is
           printed, not judged); the sampler is not judged either.

Exit status 0 when every scrape was answered with 200 within 1.5 s, during and
after the attack, and the sample counter advanced by at least half of what
the interval promises, in every run; 1 otherwise.  The script ends by itself.
"""
import collections
import errno
import multiprocessing
import os
import resource
import select
import selectors
import socket
import sys
import time

SCRAPER_ADDR = "127.0.0.250"
SCRAPE_EVERY = 0.2
# A scraper queued behind the attackers would wait for the server to drop
# them, write_timeout (2 s) at the least: the limit stays below that, and
# leaves a busy machine's scheduler half a second more than a second.
SCRAPE_LIMIT = 1.5
CONNECTING = 256
# tcpmem: a connection the server closed is opened again this much later,
# so that refusals do not spend the attack's opens at once.
REOPEN_AFTER = 0.5
KEEPALIVE_CONNS = 10000


def raise_fd_limit(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))


def open_conn(port, src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((src, 0))
    s.setblocking(False)
    err = s.connect_ex(("127.0.0.1", port))
    if err not in (0, errno.EINPROGRESS):
        s.close()
        return None
    return s


def burst(port, stop):
    """640 send-and-leave connections a second until stop."""
    while not stop.is_set():
        t0 = time.monotonic()
        for a in range(80):
            for _ in range(8):
                try:
                    s = socket.socket()
                    s.bind(("127.0.0.%d" % (10 + a), 0))
                    s.settimeout(1)
                    s.connect(("127.0.0.1", port))
                    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                    s.close()
                except OSError:
                    pass
        stop.wait(max(0.0, 1.0 - (time.monotonic() - t0)))


def holders(port, stop, addrs, per_addr, first, every):
    """Hold per_addr connections from each address, sending first once
    connected and then one byte every `every` seconds (never when every is
    None), reading whatever comes; reopen any the server closes.  At most
    CONNECTING connections are being opened at a time: beyond the kernel's
    accept queue a SYN is dropped, the scraper's too, and retried after a
    second, which is the kernel's doing, not the server's."""
    sel = selectors.DefaultSelector()
    conns = {}
    to_open = collections.deque(src for src in addrs for _ in range(per_addr))
    connecting = 0

    def open_more():
        nonlocal connecting
        while to_open and connecting < CONNECTING:
            src = to_open.popleft()
            s = open_conn(port, src)
            if s is None:
                to_open.append(src)
                return
            conns[s] = [src, False]
            sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE)
            connecting += 1

    open_more()
    last_drip = time.monotonic()
    while not stop.is_set():
        for key, ev in sel.select(timeout=0.1):
            s = key.fileobj
            src, sent = conns[s]
            if ev & selectors.EVENT_READ:
                try:
                    data = s.recv(65536)
                except OSError:
                    data = b""
                if not data:  # closed by the server (or refused): again
                    sel.unregister(s)
                    del conns[s]
                    s.close()
                    connecting -= not sent
                    to_open.append(src)
                    continue
            if ev & selectors.EVENT_WRITE and not sent:
                try:
                    if first:
                        s.send(first)
                except OSError:
                    pass
                conns[s][1] = True
                connecting -= 1
                sel.modify(s, selectors.EVENT_READ)
        open_more()
        if every is not None and time.monotonic() - last_drip >= every:
            last_drip = time.monotonic()
            for s, (src, sent) in list(conns.items()):
                if sent:
                    try:
                        s.send(b"X")
                    except OSError:
                        pass
    for s in list(conns):
        s.close()


def slow_readers(port, stop, addrs, per_addr, pipelined):
    """Hold per_addr connections from each address, each sending the
    pipelined requests and never reading; reopen any the server closes
    (seen as a hang-up or an error, since nothing is read)."""
    poller = select.poll()
    conns = {}
    gone = select.POLLRDHUP | select.POLLHUP | select.POLLERR

    def add(src):
        s = open_conn(port, src)
        if s is None:
            return
        conns[s.fileno()] = [s, src, pipelined]
        poller.register(s, select.POLLOUT | gone)

    for src in addrs:
        for _ in range(per_addr):
            add(src)
    while not stop.is_set():
        for fd, ev in poller.poll(100):
            if fd not in conns:
                continue
            s, src, left = conns[fd]
            if ev & gone:
                poller.unregister(fd)
                del conns[fd]
                s.close()
                add(src)
                continue
            if ev & select.POLLOUT and left:
                try:
                    n = s.send(left)
                    conns[fd][2] = left = left[n:]
                except BlockingIOError:
                    pass
                except OSError:
                    left = b""
                if not left:
                    poller.modify(fd, gone)
        time.sleep(0.01)
    for s, _, _ in conns.values():
        s.close()


def non_readers(port, stop, src, count, request, max_opens, opens):
    """Hold count connections from src, each sending request once connected
    and never reading; one the server closes or resets (a hang-up or an
    error: nothing is read) is closed here and opened again, max_opens
    opens in all; at most CONNECTING connections are being opened at a
    time.  opens (a shared value) counts the opens."""
    poller = select.poll()
    conns = {}
    gone = select.POLLRDHUP | select.POLLHUP | select.POLLERR
    connecting = 0
    closed = collections.deque()  # when each connection closed here was, oldest first

    def open_more():
        nonlocal connecting
        now = time.monotonic()
        while closed and now - closed[0] >= REOPEN_AFTER:
            closed.popleft()
        while (len(conns) + len(closed) < count and connecting < CONNECTING and
               opens.value < max_opens):
            s = open_conn(port, src)
            opens.value += 1
            if s is None:
                return
            conns[s.fileno()] = [s, False]
            poller.register(s, select.POLLOUT | gone)
            connecting += 1

    open_more()
    while not stop.is_set():
        for fd, ev in poller.poll(100):
            if fd not in conns:
                continue
            s, sent = conns[fd]
            if ev & gone:
                poller.unregister(fd)
                del conns[fd]
                s.close()
                closed.append(time.monotonic())
                connecting -= not sent
                continue
            if ev & select.POLLOUT and not sent:
                try:
                    s.send(request)
                except OSError:
                    pass
                conns[fd][1] = True
                connecting -= 1
                poller.modify(fd, gone)
        open_more()
    for s, _ in conns.values():
        s.close()


def tcp_mem_pages():
    """The host's TCP memory in pages: 'mem' of the 'TCP:' line of
    /proc/net/sockstat (the kernel's count, over every namespace)."""
    with open("/proc/net/sockstat") as f:
        for line in f:
            if line.startswith("TCP:"):
                words = line.split()
                return int(words[words.index("mem") + 1])
    raise RuntimeError("no TCP line in /proc/net/sockstat")


def tcpmem_run(port, seconds, after, label):
    """The tcpmem attack with the scraper beside it and the host's TCP
    memory read all through it; the lines to print and whether it held."""
    sockets = int(os.environ.get("UNCORED_TCPMEM_SOCKETS", "1000"))
    limit_mb = float(os.environ.get("UNCORED_TCPMEM_LIMIT_MB", "64"))
    page_kb = os.sysconf("SC_PAGE_SIZE") / 1024
    request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 16
    stop = multiprocessing.Event()
    opens = multiprocessing.Value("l", 0, lock=False)
    base = tcp_mem_pages()
    t = multiprocessing.Process(target=non_readers,
                                args=(port, stop, "127.0.3.1", sockets, request, 16 * sockets,
                                      opens))
    t.start()
    times, failures = [], []
    peak = base
    t0 = time.monotonic()
    t_end = t0 + seconds
    t_stop = t_end + after
    while True:
        now = time.monotonic()
        if now >= t_stop:
            break
        if now >= t_end and not stop.is_set():
            stop.set()
            t.join(10)
        if not stop.is_set():
            peak = max(peak, tcp_mem_pages())
        try:
            took, _ = scrape(port, 5.0)
            times.append(took)
        except (OSError, RuntimeError) as e:
            failures.append("%.1f s: %s" % (now - t0, e))
        if not stop.is_set():
            peak = max(peak, tcp_mem_pages())
        time.sleep(max(0.0, SCRAPE_EVERY - (time.monotonic() - now)))
    stop.set()
    t.join(10)
    if t.is_alive():
        t.kill()
    grown_mb = (peak - base) * page_kb / 1024
    lines = ["%s: %d sockets from one address, %d opened in all; host TCP memory %.1f MiB "
             "before, %.1f MiB at most during the attack (+%.1f MiB, limit %.0f MiB), "
             "%.1f MiB after"
             % (label, sockets, opens.value, base * page_kb / 1024, peak * page_kb / 1024,
                grown_mb, limit_mb, tcp_mem_pages() * page_kb / 1024)]
    ok = grown_mb <= limit_mb
    if not ok:
        lines.append("%s: the host's TCP memory grew by more than %.0f MiB" % (label, limit_mb))
    times.sort()
    if times:
        lines.append("%s: %d scrapes answered, p50 %.1f ms, p99 %.1f ms, max %.1f ms"
                     % (label, len(times), 1e3 * times[len(times) // 2],
                        1e3 * times[min(len(times) - 1, int(len(times) * 0.99))], 1e3 * times[-1]))
    else:
        lines.append("%s: no scrape answered" % label)
        ok = False
    for f in failures:
        lines.append("%s: scrape failed: %s" % (label, f))
        ok = False
    return ok, lines


def scrape(port, limit=SCRAPE_LIMIT):
    """One /metrics exchange within limit seconds; returns (seconds,
    samples_total) or raises."""
    t0 = time.monotonic()
    s = socket.socket()
    s.bind((SCRAPER_ADDR, 0))
    s.settimeout(limit)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            left = limit - (time.monotonic() - t0)
            if left <= 0:
                raise TimeoutError("no complete answer within %.1f s" % limit)
            s.settimeout(left)
            chunk = s.recv(262144)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    took = time.monotonic() - t0
    if not data.startswith(b"HTTP/1.1 200"):
        raise RuntimeError("answer: %r" % data[:40])
    for line in data.split(b"\n"):
        if line.startswith(b"uncored_samples_total "):
            return took, int(float(line.split()[1]))
    raise RuntimeError("no uncored_samples_total in the answer")


def attacker(port, attack, stop):
    """The attack's process (not started yet)."""
    if attack == "burst":
        return multiprocessing.Process(target=burst, args=(port, stop))
    if attack == "trickle":
        addrs = ["127.0.0.%d" % (100 + i) for i in range(40)]
        return multiprocessing.Process(target=holders,
                                       args=(port, stop, addrs, 8, b"GET /metrics HTTP/1.1\r\n", 1.0))
    if attack == "idle":
        addrs = ["127.0.1.%d" % (1 + i) for i in range(250)]
        return multiprocessing.Process(target=holders, args=(port, stop, addrs, 8, None, None))
    if attack == "slowread":
        addrs = ["127.0.2.%d" % (1 + i) for i in range(16)]
        pipelined = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 400
        return multiprocessing.Process(target=slow_readers, args=(port, stop, addrs, 8, pipelined))
    if attack == "keepalive":
        n = KEEPALIVE_CONNS
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < n + 256:
            n = max(8, (soft - 256) // 8 * 8)
            print("keepalive: %d connections, all the fd limit allows" % n)
        addrs = ["127.1.%d.%d" % (i // 250, 1 + i % 250) for i in range(n // 8)]
        return multiprocessing.Process(target=holders,
                                       args=(port, stop, addrs, 8,
                                             b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", None))
    sys.exit("unknown attack %s" % attack)


def one_run(port, attack, seconds, after, interval, label):
    """One attack with the scraper beside it; the lines to print and
    whether every scrape was answered and the sampler kept up."""
    # The attack runs in a process of its own, so the scraper's timings are
    # the server's, not those of an interpreter lock shared with the attack.
    stop = multiprocessing.Event()
    t = attacker(port, attack, stop)
    t.start()
    time.sleep(0.5)  # let the attack take hold first
    results = {"during": [], "after": []}
    failures = []
    samples = []
    t_end = time.monotonic() + seconds
    t_stop = t_end + after
    while True:
        now = time.monotonic()
        if now >= t_stop:
            break
        phase = "during" if now < t_end else "after"
        if phase == "after" and not stop.is_set():
            stop.set()
            t.join(10)
        try:
            took, n = scrape(port)
            results[phase].append(took)
            samples.append((time.monotonic(), n))
        except (OSError, RuntimeError) as e:
            failures.append("%s, %.1f s: %s" % (phase, now - (t_end - seconds), e))
        time.sleep(max(0.0, SCRAPE_EVERY - (time.monotonic() - now)))
    stop.set()
    t.join(10)
    if t.is_alive():
        t.kill()
    ok = True
    lines = []
    for phase, times in results.items():
        times.sort()
        if times:
            p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
            lines.append("%s %s: %d scrapes answered, p50 %.1f ms, p99 %.1f ms, max %.1f ms"
                         % (label, phase, len(times), 1e3 * times[len(times) // 2], 1e3 * p99,
                            1e3 * times[-1]))
        else:
            lines.append("%s %s: no scrape answered" % (label, phase))
            ok = False
    for f in failures:
        lines.append("%s: scrape failed: %s" % (label, f))
        ok = False
    if len(samples) >= 2:
        (t0, n0), (t1, n1) = samples[0], samples[-1]
        expected = (t1 - t0) / interval
        lines.append("%s: %d samples in %.1f s (%.0f expected)" % (label, n1 - n0, t1 - t0, expected))
        if n1 - n0 < expected / 2:
            lines.append("%s: the sampler fell behind" % label)
            ok = False
    return ok, lines


def main():
    port, attack = int(sys.argv[1]), sys.argv[2]
    seconds, after, interval = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    runs = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    raise_fd_limit(KEEPALIVE_CONNS + 512 if attack == "keepalive" else 4096)
    failed = 0
    for run in range(1, runs + 1):
        label = attack if runs == 1 else "%s run %d/%d" % (attack, run, runs)
        if attack == "tcpmem":
            ok, lines = tcpmem_run(port, seconds, after, label)
        else:
            ok, lines = one_run(port, attack, seconds, after, interval, label)
        print("\n".join(lines), flush=True)
        failed += not ok
    if runs > 1:
        print("%s: %d of %d runs in a row without a failure" % (attack, runs - failed, runs))
    sys.exit(0 if not failed else 1)


if __name__ == "__main__":
    main()
