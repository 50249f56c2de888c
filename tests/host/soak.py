#!/usr/bin/env python3
"""Soak one daemon: CLIENTS concurrent clients each make CALLS mixed calls
(valid requests, invalid ones, batches, pipelined requests read slowly,
subscribers that vanish), with the daemon's RSS and open descriptors
sampled throughout.

Verdict (exit 1 if any fails):
  - every valid call answered with its result (0 errors);
  - every invalid call answered with an error, never a result;
  - after the clients are gone and the daemon settled, its descriptors
    are back to the count before any client came, and its RSS within
    RSS_TOLERANCE_KIB of what it was after a warm-up round of the same
    mix (by then the allocator's pools and json-c's caches are as large
    as the load makes them).

Prints one line "soak DAEMON: ... ok|FAIL" and, with --row, appends a
Markdown table row to that file.  Python 3 standard library only.
"""
import argparse
import asyncio
import json
import os
import random
import socket
import sys
import time

RSS_TOLERANCE_KIB = 512
SETTLE_SECONDS = 10      # at most, waiting for descriptors to come back
ANSWER_TIMEOUT = 10      # seconds for any one answer


def proc_sample(pid):
    """(VmRSS KiB, open descriptors) of the daemon."""
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


class Conn:
    """A raw non-blocking socket with a line reader on the event loop."""

    def __init__(self, path, rcvbuf=0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.setblocking(False)
        self.path = path
        self.buf = b""
        self.loop = asyncio.get_running_loop()

    async def open(self):
        await self.loop.sock_connect(self.sock, self.path)
        return self

    async def send(self, text):
        await self.loop.sock_sendall(self.sock, text.encode())

    async def line(self, chunk=65536):
        """The next line, or None at EOF; reads chunk bytes at a time."""
        while b"\n" not in self.buf:
            data = await asyncio.wait_for(
                self.loop.sock_recv(self.sock, chunk), ANSWER_TIMEOUT)
            if not data:
                return None
            self.buf += data
        text, self.buf = self.buf.split(b"\n", 1)
        return text

    def close(self):
        self.sock.close()


class Stats:
    def __init__(self):
        self.valid = self.valid_err = 0
        self.invalid = self.invalid_err = 0
        self.batches = self.slow = self.vanished = 0
        self.problems = []

    def bad_valid(self, what):
        self.valid_err += 1
        if len(self.problems) < 10:
            self.problems.append("valid: " + what)

    def bad_invalid(self, what):
        self.invalid_err += 1
        if len(self.problems) < 10:
            self.problems.append("invalid: " + what)


def req(method, params, rid):
    r = {"jsonrpc": "2.0", "method": method, "id": rid}
    if params is not None:
        r["params"] = params
    return r


# Invalid requests and the error code each must get.
def invalid_requests(rng, rid):
    return rng.choice([
        (req("no.such.method", None, rid), -32601),
        (req("job.status", {"id": "one"}, rid), -32602),
        (req("job.status", {"id": 1, "extra": True}, rid), -32602),
        (req("job.status", [1], rid), -32602),
        ({"jsonrpc": "1.0", "method": "system.version", "id": rid}, -32600),
        ({"jsonrpc": "2.0", "method": 7, "id": rid}, -32600),
        ({"jsonrpc": "2.0", "method": "job.status", "params": {"id": 1 << 40},
          "id": rid}, -32602),
    ])


class Client:
    def __init__(self, args, n, valid, stats, seed):
        self.args, self.valid, self.st = args, valid, stats
        self.rng = random.Random(seed * 1000 + n)
        self.rid = n * 10_000_000
        self.conn = None

    def next_id(self):
        self.rid += 1
        return self.rid

    def valid_req(self):
        m = self.rng.choice(self.valid)
        return req(m["method"], m.get("params"), self.next_id())

    async def connect(self):
        if self.conn is None:
            self.conn = await Conn(self.args.socket).open()
        return self.conn

    def drop(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    async def answer(self, c):
        line = await c.line()
        if line is None:
            raise ConnectionError("connection closed")
        return json.loads(line)

    def check_valid(self, r, ans):
        if ans.get("id") != r["id"] or "result" not in ans:
            self.st.bad_valid(f"{r['method']}: {json.dumps(ans)[:200]}")

    async def one_valid(self):
        c = await self.connect()
        r = self.valid_req()
        await c.send(json.dumps(r) + "\n")
        self.st.valid += 1
        self.check_valid(r, await self.answer(c))

    async def one_invalid(self):
        c = await self.connect()
        self.st.invalid += 1
        if self.rng.random() < 0.3:
            # Not JSON at all: a parse error, and the connection goes on.
            await c.send(self.rng.choice(['{"a" 1}', "]", "{,}", "nul"]) + "\n")
            ans = await self.answer(c)
            if ans.get("error", {}).get("code") != -32700 or ans.get("id") is not None:
                self.st.bad_invalid("parse error: " + json.dumps(ans)[:200])
            return
        r, code = invalid_requests(self.rng, self.next_id())
        await c.send(json.dumps(r) + "\n")
        ans = await self.answer(c)
        if ans.get("error", {}).get("code") != code or ans.get("id") != r["id"]:
            self.st.bad_invalid(f"want {code}: {json.dumps(ans)[:200]}")

    async def batch(self):
        """2..8 elements: valid, invalid and notifications mixed."""
        c = await self.connect()
        elems, want = [], {}
        for _ in range(self.rng.randint(2, 8)):
            k = self.rng.random()
            if k < 0.6:
                r = self.valid_req()
                want[r["id"]] = "result"
                self.st.valid += 1
            elif k < 0.85:
                r, _ = invalid_requests(self.rng, self.next_id())
                want[r["id"]] = "error"
                self.st.invalid += 1
            else:
                r = self.valid_req()
                del r["id"]            # a notification: no answer
            elems.append(r)
        self.st.batches += 1
        await c.send(json.dumps(elems) + "\n")
        if not want:
            return    # all notifications: nothing comes back
        ans = await self.answer(c)
        got = {a.get("id"): a for a in ans} if isinstance(ans, list) else {}
        for rid, kind in want.items():
            a = got.get(rid)
            if a is None or kind not in a:
                (self.st.bad_valid if kind == "result" else self.st.bad_invalid)(
                    f"batch element {rid}: {json.dumps(a)[:200]}")
        if len(got) != len(want):
            self.st.bad_invalid(f"batch answered {len(got)} of {len(want)}")

    async def slow_reader(self):
        """Pipelined requests on a small receive buffer, read late, 1 KiB a time."""
        c = await Conn(self.args.socket, rcvbuf=4096).open()
        try:
            rs = [self.valid_req() for _ in range(self.rng.randint(4, 32))]
            await c.send("".join(json.dumps(r) + "\n" for r in rs))
            await asyncio.sleep(self.rng.uniform(0.01, 0.1))
            for r in rs:
                line = await c.line(chunk=1024)
                self.st.valid += 1
                if line is None:
                    self.st.bad_valid("slow reader: connection closed")
                    return
                self.check_valid(r, json.loads(line))
            self.st.slow += 1
        finally:
            c.close()

    async def vanishing_subscriber(self):
        """Subscribes, then goes: at once, after its answer, or half-closing first."""
        c = await Conn(self.args.socket).open()
        way = self.rng.randrange(3)
        r = req("events.subscribe", None, self.next_id())
        await c.send(json.dumps(r) + "\n")
        if way >= 1:
            self.st.valid += 1
            self.check_valid(r, json.loads(await c.line() or b"{}"))
        if way == 2:
            # What `socat` does with the events one-liner: half-close, then go.
            c.sock.shutdown(socket.SHUT_WR)
            await asyncio.sleep(0.01)
        c.close()
        self.st.vanished += 1

    async def run(self, calls):
        mix = [(0.60, self.one_valid), (0.78, self.one_invalid),
               (0.93, self.batch), (0.985, self.slow_reader),
               (1.00, self.vanishing_subscriber)]
        for _ in range(calls):
            k = self.rng.random()
            fn = next(f for p, f in mix if k < p)
            try:
                await fn()
            except (ConnectionError, OSError, asyncio.TimeoutError,
                    json.JSONDecodeError) as e:
                self.st.bad_valid(f"{fn.__name__}: {type(e).__name__} {e}")
                self.drop()
        self.drop()


async def valid_calls(args):
    """Read-only methods that need no parameters, and the --valid extras."""
    c = await Conn(args.socket).open()
    await c.send(json.dumps(req("system.methods", None, 1)) + "\n")
    ans = json.loads(await c.line())
    c.close()
    out = []
    for m in ans["result"]:
        if m["mutates"] or m["name"] == "events.subscribe":
            continue
        if any(p.get("required") for p in m["params"]):
            continue
        out.append({"method": m["name"], "params": {}})
    for v in args.valid or []:
        out.append(json.loads(v))
    return out


async def sampler(pid, peak, stop):
    while not stop.is_set():
        rss, fds = proc_sample(pid)
        peak[0], peak[1] = max(peak[0], rss), max(peak[1], fds)
        try:
            await asyncio.wait_for(stop.wait(), 0.5)
        except asyncio.TimeoutError:
            pass


async def round_of(args, valid, calls, seed):
    st = Stats()
    clients = [Client(args, n, valid, st, seed) for n in range(args.clients)]
    await asyncio.gather(*(c.run(calls) for c in clients))
    return st


async def settle(pid, fds0):
    """Wait for the daemon to close what the clients left; then sample."""
    end = time.monotonic() + SETTLE_SECONDS
    await asyncio.sleep(1)
    while proc_sample(pid)[1] > fds0 and time.monotonic() < end:
        await asyncio.sleep(0.2)
    return proc_sample(pid)


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--socket", required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--valid", action="append",
                    help='an extra valid call, {"method":...,"params":...}')
    ap.add_argument("--row", help="append a Markdown table row to this file")
    args = ap.parse_args()

    _, fds0 = proc_sample(args.pid)
    valid = await valid_calls(args)
    # Warm-up: the same mix, a tenth as long, then the RSS baseline.
    warm = await round_of(args, valid, max(20, args.calls // 10), args.seed + 7)
    rss0, _ = await settle(args.pid, fds0)
    peak, stop = [rss0, fds0], asyncio.Event()
    t0 = time.monotonic()
    samp = asyncio.create_task(sampler(args.pid, peak, stop))
    st = await round_of(args, valid, args.calls, args.seed)
    secs = time.monotonic() - t0
    stop.set()
    await samp
    rss1, fds1 = await settle(args.pid, fds0)

    fails = []
    if warm.valid_err or st.valid_err:
        fails.append(f"{warm.valid_err + st.valid_err} valid calls failed")
    if warm.invalid_err or st.invalid_err:
        fails.append(f"{warm.invalid_err + st.invalid_err} invalid calls not refused")
    if fds1 > fds0:
        fails.append(f"{fds1 - fds0} descriptors more than before")
    if rss1 - rss0 > RSS_TOLERANCE_KIB:
        fails.append(f"RSS grew {rss1 - rss0} KiB (tolerance {RSS_TOLERANCE_KIB})")
    verdict = "ok" if not fails else "FAIL (" + "; ".join(fails) + ")"
    total = args.clients * args.calls
    print(f"soak {args.name}: {args.clients} clients x {args.calls} calls "
          f"({total / secs:.0f}/s, {secs:.1f} s): valid {st.valid} errors "
          f"{st.valid_err}, invalid {st.invalid} not refused {st.invalid_err}, "
          f"batches {st.batches}, slow readers {st.slow}, vanished subscribers "
          f"{st.vanished}; RSS KiB {rss0} peak {peak[0]} end {rss1}; "
          f"descriptors {fds0} peak {peak[1]} end {fds1}: {verdict}")
    for p in warm.problems + st.problems:
        print("  " + p)
    if args.row:
        with open(args.row, "a") as f:
            f.write(f"| {args.name} | {total} | {secs:.0f} | {st.valid} | "
                    f"{st.valid_err} | {st.invalid} | {st.invalid_err} | "
                    f"{rss0} / {peak[0]} / {rss1} | {fds0} / {peak[1]} / {fds1} | "
                    f"{'ok' if not fails else 'FAIL'} |\n")
    return 0 if not fails else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
