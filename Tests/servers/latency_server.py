#!/usr/bin/python3
"""A paged JSON API that answers after a set latency, with faults by script, for Swell's
tests and bench/latency.sh (Pipeline file reference, "Real networks").

Threaded (requests overlap: N in flight at once take one latency, not N), HTTP/1.1
keep-alive with Content-Length, TCP_NODELAY, and each answer written in one write:
Python's http.server writes the headers and the body apart, and with Nagle and delayed
ACKs that costs ~40 ms a request on a reused connection. Prints "PORT <n> PID <pid>" when
it listens on 127.0.0.1, then serves until killed or until the process SWELL_TEST_PID
names is gone. Standard library only (Debian's /usr/bin/python3).

usage: latency_server.py [--delay S] [--delay-jitter S] [--records-per-page N] [--pages N]
       [--items a,b,c | --items-count K] [--cache-pages] [--fault-script FILE] [--port P]

Data (paged_records.py). A source has PAGES pages of RECORDS-PER-PAGE records (T = PAGES x
RECORDS-PER-PAGE), the same on every run: {"id", "item", "page", "name", "value", "active",
"updated_at", "tags"}, ids 1..T for the single source (item null) and, for item k (0-based,
in --items order; --items-count K names them item-1 .. item-K), k*T+1 .. k*T+T: unique
across items. An item not in the list is a 404. An item may hold "/" (owner/repo).

Endpoints (each also under /items/<item>/ for one item's data: /items/a/offset, ...):
  GET /offset?offset=O&limit=L    {"data": [records O..O+L-1], "meta": {"total": T}}
                                  (limit defaults to RECORDS-PER-PAGE)
  GET /pages?page=P[&per_page=N]  a JSON array, page P counted from 1; [] past the end
  GET /link?page=P[&per_page=N]   the same array, with a GitHub-style Link header:
                                  <...page=P+1>; rel="next", rel="last" (and "prev",
                                  "first" after page 1); the other query parameters kept
  GET /cursor[?cursor=C]          {"data": [...], "next_cursor": "<opaque>" | null}
  GET /next[?page=P]              {"data": [...], "next": "<absolute URL>" | null}
With --cache-pages a page's records are made once and kept (bench/latency.sh makes them all
with /_warm before it times a run, so that the time is the client's; ~140 MB for 1M records).
Every request is delayed by --delay seconds (plus, with --delay-jitter J, a fraction of J
that is the same for the same path and query on every run) before it is answered.

Control endpoints (not delayed, not counted, never faulted):
  GET  /_stats    {"started_unix": wall clock at start, "count": requests seen,
                   "max_in_flight": the most requests served at once, "in_flight": now,
                   "held": requests waiting for /_release,
                   "requests": [{"t": seconds since start (monotonic) the request arrived,
                                 "t_end": when its answer was written, "method", "path",
                                 "query", "headers": {name: value}, "status",
                                 "fault": index of the rule that fired or null}],
                   "faults": [each rule with "seen" and "fired" counts]}
  POST /_reset    clears the requests, the counts and max_in_flight (the faults stay)
  POST /_faults   replaces the fault rules with the JSON array in the body ([] clears)
  GET  /_faults   the rules with their counts
  POST /_release  lets every request held by a "hold" rule go
  POST /_warm?limit=L  with --cache-pages: makes every page of L records (offset=k*L&limit=L,
                  and page=k+1&per_page=L) of every source now, before a timed run
  GET  /_wait?requests=N[&held=H][&timeout=S]
                  answers once N requests have arrived (and H are held), or after S
                  seconds (default 30); {"ok": true|false, "count": ..., "held": ...}

Faults: a JSON array of rules (--fault-script FILE or POST /_faults), e.g.
  [{"path_prefix": "/offset", "nth": 3, "status": 503, "retry_after": "1"},
   {"status": 429, "headers": {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "{unix+2}"}},
   {"reset_mid_body": true}]
A rule's keys (all optional):
  path_prefix   the request path starts with it (default: every request)
  query         the raw query string contains it (e.g. "page=3")
  nth           fire on the nth request this rule matches, counted from 1 since the rules
                were set (default 1); when an earlier rule of the list took that request,
                the rule fires on the next one it matches
  times         how many times it fires (default 1; 0: on every match from the nth on)
  delay         extra seconds before answering
  hold          true: the request waits until POST /_release (then answers as below)
  status        answer this status instead of the page; with a status >= 400 the body is
                {"error": "injected <status>"} unless "body" gives one
  body          the body to send (a string as is, anything else as JSON)
  retry_after   shorthand for the Retry-After header
  headers       extra response headers, added to the page or to the status's answer
  reset_mid_body  true: send the headers and half the body, then reset the connection
  close         true: close the connection without answering (libcurl, and so URLSession on
                Linux, sends the request again once when this happens on a reused connection)
Each request is matched against the rules in order; every matching rule counts it, and
the first rule that is due fires (one rule per request). Header values may hold
"{unix+N}" (the Unix time N seconds from now, whole seconds) and "{http_date+N}" (the same
as an HTTP date), filled in when the rule fires.
"""
import server_support

server_support.detach()

import argparse
import base64
import hashlib
import json
import os
import socket
import struct
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from paged_records import PagedRecords, items_from
from request_log import RequestLog, filled

parser = argparse.ArgumentParser()
parser.add_argument("--delay", type=float, default=0.0)
parser.add_argument("--delay-jitter", type=float, default=0.0)
parser.add_argument("--records-per-page", type=int, default=10)
parser.add_argument("--pages", type=int, default=10)
items_group = parser.add_mutually_exclusive_group()
items_group.add_argument("--items", default="")
items_group.add_argument("--items-count", type=int, default=0)
parser.add_argument("--cache-pages", action="store_true")
parser.add_argument("--fault-script")
parser.add_argument("--port", type=int, default=0)
options = parser.parse_args()

DATA = PagedRecords(options.pages, options.records_per_page, items_from(options.items, options.items_count),
                    cache=options.cache_pages)
PER_PAGE = DATA.per_page
TOTAL = DATA.total
ENDPOINTS = ("offset", "pages", "link", "cursor", "next")


state = RequestLog()
if options.fault_script:
    with open(options.fault_script) as script:
        state.set_rules(json.load(script))


def integer(params, name, default):
    try:
        return int(params.get(name, default))
    except ValueError:
        raise BadRequest(f"{name} is not a whole number: {params.get(name)!r}")


class BadRequest(Exception):
    pass


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "latency_server/1"

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args):
        pass

    def respond(self, status, body, content_type="application/json", headers=()):
        """Writes the status line, the headers and the body in one write."""
        data = body if isinstance(body, bytes) else body.encode()
        lines = [f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}",
                 f"Date: {self.date_time_string()}", f"Server: {self.server_version}",
                 f"Content-Type: {content_type}", f"Content-Length: {len(data)}"]
        lines += [f"{name}: {value}" for name, value in headers]
        if self.close_connection:
            lines.append("Connection: close")
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data)

    def request_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def dispatch(self):
        split = urllib.parse.urlsplit(self.path)
        if split.path.startswith("/_"):
            return self.control(split)
        entry = {"t": state.now(), "t_end": None, "method": self.command,
                 "path": split.path, "query": split.query, "headers": dict(self.headers.items()),
                 "status": None, "fault": None}
        body = self.request_body()
        chosen = state.begin(entry)
        status = 0
        try:
            status = self.serve(split, chosen, entry, body)
        finally:
            state.end(entry, status)

    def serve(self, split, chosen, entry, body):
        rule = chosen[1] if chosen else {}
        if chosen:
            entry["fault"] = chosen[0]
        delay = options.delay + float(rule.get("delay", 0))
        if options.delay_jitter:
            digest = hashlib.sha256(self.path.encode()).digest()
            delay += options.delay_jitter * struct.unpack(">I", digest[:4])[0] / 2 ** 32
        if delay > 0:
            time.sleep(delay)
        if rule.get("hold"):
            state.hold()
        if rule.get("close"):
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return 0
        headers = []
        if "retry_after" in rule:
            headers.append(("Retry-After", filled(rule["retry_after"])))
        headers += [(name, filled(value)) for name, value in rule.get("headers", {}).items()]
        status = int(rule.get("status", 0))
        if status and not 200 <= status < 300 or "body" in rule:
            text = rule.get("body", {"error": f"injected {status}"})
            text = text if isinstance(text, str) else json.dumps(text)
            page = (status or 200, text, headers)
        else:
            page = self.page(split)
            page = (status or page[0], page[1], page[2] + headers)
        if rule.get("reset_mid_body"):
            self.reset_mid_body(*page)
            return page[0]
        self.respond(page[0], page[1], headers=page[2])
        return page[0]

    def reset_mid_body(self, status, text, headers):
        data = text.encode()
        head = [f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}", "Content-Type: application/json", f"Content-Length: {len(data)}"]
        head += [f"{name}: {value}" for name, value in headers]
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data[:len(data) // 2])
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def page(self, split):
        """(status, body, headers) of a data endpoint."""
        path = split.path
        item = None
        if path.startswith("/items/"):
            rest = path[len("/items/"):]
            item, _, endpoint = rest.rpartition("/")
            item = urllib.parse.unquote(item)
            if item not in DATA.index:
                return 404, json.dumps({"error": f"no item {item!r}"}), []
        else:
            endpoint = path.lstrip("/")
        if endpoint not in ENDPOINTS:
            return 404, json.dumps({"error": f"no endpoint {path!r}"}), []
        params = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
        try:
            return getattr(self, "page_" + endpoint)(item, params, split)
        except BadRequest as error:
            return 400, json.dumps({"error": str(error)}), []

    def page_offset(self, item, params, split):
        offset, limit = integer(params, "offset", 0), integer(params, "limit", PER_PAGE)
        return 200, f'{{"data":{DATA.json(item, offset, limit)},"meta":{{"total":{TOTAL}}}}}', []

    def page_pages(self, item, params, split):
        page, per_page = integer(params, "page", 1), integer(params, "per_page", PER_PAGE)
        return 200, DATA.page(item, page, per_page), []

    def page_link(self, item, params, split):
        page, per_page = integer(params, "page", 1), integer(params, "per_page", PER_PAGE)
        last = max(1, -(-TOTAL // per_page))
        links = []
        for rel, number in (("prev", page - 1), ("next", page + 1), ("last", last), ("first", 1)):
            if (rel in ("prev", "first") and page > 1) or (rel == "next" and page < last) or rel == "last":
                links.append(f'<{self.url_with(split, page=number)}>; rel="{rel}"')
        return 200, DATA.page(item, page, per_page), [("Link", ", ".join(links))]

    def page_cursor(self, item, params, split):
        cursor = params.get("cursor", "")
        try:
            page = int(base64.urlsafe_b64decode(cursor.encode() + b"==").decode().removeprefix("page:")) if cursor else 1
        except (ValueError, UnicodeDecodeError):
            raise BadRequest(f"not a cursor this API gave: {cursor!r}")
        following = base64.urlsafe_b64encode(f"page:{page + 1}".encode()).decode().rstrip("=")
        next_cursor = json.dumps(following) if page < options.pages else "null"
        return 200, f'{{"data":{DATA.page(item, page)},"next_cursor":{next_cursor}}}', []

    def page_next(self, item, params, split):
        page = integer(params, "page", 1)
        following = json.dumps(self.url_with(split, page=page + 1)) if page < options.pages else "null"
        return 200, f'{{"data":{DATA.page(item, page)},"next":{following}}}', []

    def url_with(self, split, **changes):
        params = urllib.parse.parse_qsl(split.query, keep_blank_values=True)
        params = [(k, v) for k, v in params if k not in changes] + [(k, str(v)) for k, v in changes.items()]
        host = self.headers.get("Host") or f"127.0.0.1:{self.server.server_address[1]}"
        return f"http://{host}{split.path}?{urllib.parse.urlencode(params)}"

    def control(self, split):
        params = dict(urllib.parse.parse_qsl(split.query))
        body = self.request_body()
        try:
            if split.path == "/_stats":
                return self.respond(200, json.dumps(state.stats()))
            if split.path == "/_reset" and self.command == "POST":
                state.reset()
                return self.respond(200, '{"ok":true}')
            if split.path == "/_faults" and self.command == "POST":
                state.set_rules(json.loads(body or b"[]"))
                return self.respond(200, '{"ok":true}')
            if split.path == "/_faults":
                return self.respond(200, json.dumps(state.faults()))
            if split.path == "/_warm" and self.command == "POST":
                limit = int(params.get("limit", PER_PAGE))
                for item in [None] + DATA.items:
                    for first in range(0, TOTAL, limit):
                        DATA.json(item, first, limit)
                return self.respond(200, '{"ok":true}')
            if split.path == "/_release" and self.command == "POST":
                state.release()
                return self.respond(200, '{"ok":true}')
            if split.path == "/_wait":
                result = state.wait(int(params.get("requests", 0)), int(params.get("held", 0)), float(params.get("timeout", 30)))
                return self.respond(200, json.dumps(result))
        except (ValueError, TypeError) as error:
            return self.respond(400, json.dumps({"error": str(error)}))
        self.respond(404, json.dumps({"error": f"no control endpoint {self.command} {split.path}"}))


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512


server = Server(("127.0.0.1", options.port), Handler)
print(f"PORT {server.server_address[1]} PID {os.getpid()}", flush=True)
server.serve_forever()
