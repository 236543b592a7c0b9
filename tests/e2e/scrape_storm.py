#!/usr/bin/env python3
"""Scrape /metrics over keep-alive connections from several threads, until
TOTAL_SCRAPES are made or SECONDS have passed, whichever comes first.

Each thread checks that every response is 200 and that no counter (every
sample of a metric whose name ends in _total) goes backwards between two of
its own consecutive scrapes.  How many scrapes fit in the time is not
checked: that is the machine's speed, measured in tests/bench.  Prints one
summary line; exits 1 with the first problem otherwise, or when a thread
made no scrape at all.

Usage: scrape_storm.py HOST PORT TOTAL_SCRAPES THREADS SECONDS
"""
import http.client
import sys
import threading
import time


def counters(body):
    out = {}
    for line in body.splitlines():
        if not line.startswith("uncored_") or "_total" not in line:
            continue
        name, _, value = line.rpartition(" ")
        if name.split("{", 1)[0].endswith("_total"):
            out[name] = float(value)
    return out


def worker(host, port, n, deadline, problems, done):
    conn = http.client.HTTPConnection(host, port, timeout=10)
    last = {}
    for i in range(n):
        if time.monotonic() >= deadline:
            break
        try:
            conn.request("GET", "/metrics")
            resp = conn.getresponse()
            body = resp.read().decode()
        except (OSError, http.client.HTTPException) as e:
            problems.append("scrape %d: %s" % (i, e))
            return
        if resp.status != 200:
            problems.append("scrape %d: status %d" % (i, resp.status))
            return
        now = counters(body)
        if "uncored_samples_total" not in now:
            problems.append("scrape %d: no uncored_samples_total" % i)
            return
        for key, value in now.items():
            if value < last.get(key, value):
                problems.append("scrape %d: %s went backwards: %s -> %s" % (i, key, last[key], value))
                return
        last.update(now)
        done[0] += 1
    conn.close()


def main():
    host, port, total, n_threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    deadline = time.monotonic() + float(sys.argv[5])
    problems, counts = [], [[0] for _ in range(n_threads)]
    threads = [threading.Thread(target=worker,
                                args=(host, port, total // n_threads, deadline, problems, counts[t]))
               for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done = sum(c[0] for c in counts)
    if problems:
        print("after %d scrapes: %s" % (done, problems[0]), file=sys.stderr)
        sys.exit(1)
    if any(c[0] == 0 for c in counts):
        print("a thread made no scrape in %s s" % sys.argv[5], file=sys.stderr)
        sys.exit(1)
    print("%d scrapes, all 200, no counter went backwards" % done)


if __name__ == "__main__":
    main()
