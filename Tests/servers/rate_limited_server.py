"""A paged JSON API behind a rate limiter somebody else wrote, for Swell's tests: Flask with
flask-limiter (from PyPI, installed by scripts/setup.sh into .build/test-python), its
rate-limit headers switched on, served by waitress (threaded, TCP_NODELAY).

Every data answer, 200 or 429, carries flask-limiter's X-RateLimit-Limit,
X-RateLimit-Remaining, X-RateLimit-Reset (Unix seconds) and Retry-After (whole seconds,
or an HTTP date with --retry-after http-date) as flask-limiter writes them. Prints
"PORT <n> PID <pid>" when it listens on 127.0.0.1, then serves until killed or until the
process SWELL_TEST_PID names is gone.

usage: rate_limited_server.py --limit "20 per second" [--strategy fixed-window|moving-window|
       sliding-window-counter] [--key remote|global|header:NAME] [--retry-after
       delta-seconds|http-date] [--records-per-page N] [--pages N] [--items a,b,c |
       --items-count K] [--threads N]

--limit is flask-limiter's notation ("20/second", "100 per minute", "5 per 2 seconds";
several separated by ";"). --key says whose budget a request spends: the client's address
(remote, flask-limiter's usual key), one budget for every client (global), or a request
header's value (header:Authorization: one budget per token).

Data endpoints (records from paged_records.py, as latency_server.py serves them; each also
under /items/<item>/ for one item's data):
  GET /offset?offset=O&limit=L    {"data": [...], "meta": {"total": T}}
  GET /pages?page=P               a JSON array, [] past the end
  GET /link?page=P                the same array, with a Link header (rel="next", rel="last")
Control endpoints (not limited, not counted):
  GET  /_stats   {"started_unix", "count", "count_429", "max_in_flight",
                  "requests": [{"t": seconds since start (monotonic), "t_unix", "path",
                                "query", "status", "remaining": X-RateLimit-Remaining sent}]}
  POST /_reset   clears the requests, the counts and the limiter's budgets
"""
import server_support

server_support.detach()

import argparse
import os
import threading
import time
import urllib.parse

import flask
import waitress
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address

from paged_records import PagedRecords, items_from

parser = argparse.ArgumentParser()
parser.add_argument("--limit", required=True)
parser.add_argument("--strategy", default="fixed-window",
                    choices=["fixed-window", "moving-window", "sliding-window-counter"])
parser.add_argument("--key", default="remote")
parser.add_argument("--retry-after", default="delta-seconds", choices=["delta-seconds", "http-date"])
parser.add_argument("--records-per-page", type=int, default=10)
parser.add_argument("--pages", type=int, default=10)
items_group = parser.add_mutually_exclusive_group()
items_group.add_argument("--items", default="")
items_group.add_argument("--items-count", type=int, default=0)
parser.add_argument("--threads", type=int, default=16)
options = parser.parse_args()

DATA = PagedRecords(options.pages, options.records_per_page, items_from(options.items, options.items_count))
START_MONOTONIC = time.monotonic()
START_UNIX = time.time()


def request_key():
    if options.key == "global":
        return "everyone"
    if options.key.startswith("header:"):
        return flask.request.headers.get(options.key[len("header:"):], "")
    return get_remote_address()


app = flask.Flask(__name__)
# Bound to the app after the hooks below, so that they run before its check: a 429 is counted too.
limiter = Limiter(request_key, default_limits=[options.limit], headers_enabled=True,
                  strategy=options.strategy, storage_uri="memory://", retry_after=options.retry_after)

lock = threading.Lock()
stats = {"requests": [], "count_429": 0, "in_flight": 0, "max_in_flight": 0}


@app.before_request
def count_in():
    if flask.request.path.startswith("/_"):
        return
    with lock:
        stats["in_flight"] += 1
        stats["max_in_flight"] = max(stats["max_in_flight"], stats["in_flight"])
    flask.g.entry = {"t": round(time.monotonic() - START_MONOTONIC, 6), "t_unix": time.time(),
                     "path": flask.request.path, "query": flask.request.query_string.decode("latin-1"),
                     "status": None, "remaining": None}


@app.after_request
def count_out(response):
    entry = flask.g.pop("entry", None)
    if entry is not None:
        entry["status"] = response.status_code
        entry["remaining"] = response.headers.get("X-RateLimit-Remaining")
        with lock:
            stats["in_flight"] -= 1
            stats["requests"].append(entry)
            if response.status_code == 429:
                stats["count_429"] += 1
    return response


limiter.init_app(app)


def json_response(text, headers=()):
    response = flask.Response(text, mimetype="application/json")
    for name, value in headers:
        response.headers[name] = value
    return response


def number(name, default):
    value = flask.request.args.get(name, str(default))
    if not value.lstrip("-").isdigit():
        flask.abort(400, f"{name} is not a whole number: {value!r}")
    return int(value)


def item_of(item):
    if item is not None and item not in DATA.index:
        flask.abort(404, f"no item {item!r}")
    return item


@app.get("/offset")
@app.get("/items/<path:item>/offset")
def offset_page(item=None):
    item = item_of(item)
    offset, limit = number("offset", 0), number("limit", DATA.per_page)
    return json_response(f'{{"data":{DATA.json(item, offset, limit)},"meta":{{"total":{DATA.total}}}}}')


@app.get("/pages")
@app.get("/items/<path:item>/pages")
def numbered_page(item=None):
    item = item_of(item)
    return json_response(DATA.page(item, number("page", 1), number("per_page", DATA.per_page)))


@app.get("/link")
@app.get("/items/<path:item>/link")
def linked_page(item=None):
    item = item_of(item)
    page, per_page = number("page", 1), number("per_page", DATA.per_page)
    last = max(1, -(-DATA.total // per_page))

    def url(number):
        query = [(k, v) for k, v in flask.request.args.items() if k != "page"] + [("page", str(number))]
        return f"{flask.request.base_url}?{urllib.parse.urlencode(query)}"
    links = ([f'<{url(page + 1)}>; rel="next"'] if page < last else []) + [f'<{url(last)}>; rel="last"']
    return json_response(DATA.page(item, page, per_page), [("Link", ", ".join(links))])


@app.get("/_stats")
@limiter.exempt
def show_stats():
    with lock:
        requests = [dict(entry) for entry in stats["requests"]]
        return flask.jsonify(started_unix=START_UNIX, count=len(requests), count_429=stats["count_429"],
                             max_in_flight=stats["max_in_flight"], requests=requests)


@app.post("/_reset")
@limiter.exempt
def reset():
    with lock:
        stats["requests"] = []
        stats["count_429"] = 0
        stats["max_in_flight"] = stats["in_flight"]
    limiter.reset()
    return flask.jsonify(ok=True)


server = waitress.create_server(app, host="127.0.0.1", port=0, threads=options.threads, backlog=512)
print(f"PORT {server.effective_port} PID {os.getpid()}", flush=True)
server.run()
