#!/usr/bin/python3
"""An OAuth 2.0 token endpoint and a protected API, for Swell's tests.

The token endpoint is oauthlib's (Debian's python3-oauthlib: RFC 6749's server side),
granting client credentials (section 4.4) to one client, which authenticates with HTTP
Basic or with form fields (section 2.3.1). The API at /api/invoices serves INVOICES
records under a valid bearer token only (401 otherwise), paged by offset and limit given
in the query or in a JSON body, with meta.total. /_stats tells what happened (with the tokens issued, for
the tests to look for in Swell's output). Prints "PORT <n> PID <pid>" when it listens on 127.0.0.1, then serves until killed or
until the process SWELL_TEST_PID names is gone.

usage: oauth2_server.py CLIENT_ID CLIENT_SECRET [--expires-in S] [--records N]
       [--page-delay S] [--slow-token-requests K --token-delay S] [--revoke-after-pages K]
       [--always-401]
"""
import server_support

server_support.detach()

import argparse
import os
import base64
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from oauthlib.oauth2 import BackendApplicationServer, RequestValidator

parser = argparse.ArgumentParser()
parser.add_argument("client_id")
parser.add_argument("client_secret")
parser.add_argument("--expires-in", type=int, default=3600)
parser.add_argument("--records", type=int, default=23)
parser.add_argument("--page-delay", type=float, default=0)
parser.add_argument("--slow-token-requests", type=int, default=0)
parser.add_argument("--token-delay", type=float, default=0)
parser.add_argument("--revoke-after-pages", type=int, default=0)
parser.add_argument("--always-401", action="store_true")
options = parser.parse_args()

lock = threading.Lock()
tokens = {}          # access token -> expiry (epoch seconds)
stats = {"tokens_issued": 0, "issued": [], "token_requests": [], "unauthorized": 0, "pages": 0, "api_requests": []}


class Client:
    def __init__(self, client_id):
        self.client_id = client_id


class Validator(RequestValidator):
    def client_authentication_required(self, request, *args, **kwargs):
        return True

    def authenticate_client(self, request, *args, **kwargs):
        client_id = client_secret = None
        header = request.headers.get("Authorization", "")
        if header.startswith("Basic "):
            # RFC 6749 2.3.1: the id and secret are form-encoded before HTTP Basic.
            decoded = base64.b64decode(header[6:]).decode("utf-8")
            raw_id, _, raw_secret = decoded.partition(":")
            client_id, client_secret = urllib.parse.unquote_plus(raw_id), urllib.parse.unquote_plus(raw_secret)
        elif request.client_id and request.client_secret:
            client_id, client_secret = request.client_id, request.client_secret
        if client_id != options.client_id or client_secret != options.client_secret:
            return False
        request.client = Client(client_id)
        request.client_id = client_id
        return True

    def authenticate_client_id(self, client_id, request, *args, **kwargs):
        return False

    def validate_grant_type(self, client_id, grant_type, client, request, *args, **kwargs):
        return grant_type == "client_credentials"

    def validate_scopes(self, client_id, scopes, client, request, *args, **kwargs):
        return all(scope in ("invoices.read", "invoices.write") for scope in scopes)

    def get_default_scopes(self, client_id, request, *args, **kwargs):
        return ["invoices.read"]

    def save_bearer_token(self, token, request, *args, **kwargs):
        with lock:
            tokens[token["access_token"]] = time.time() + token["expires_in"]
            stats["tokens_issued"] += 1
            stats["issued"].append(token["access_token"])


endpoint = BackendApplicationServer(Validator(), token_expires_in=options.expires_in)
INVOICES = [{"id": n, "number": f"INV-{n:04d}", "amount": n * 10 + 0.5, "status": "open" if n % 3 else "paid"}
            for n in range(1, options.records + 1)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, headers=()):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self):
        self.handle_any(b"")

    def do_POST(self):
        self.handle_any(self.body())

    def handle_any(self, body):
        path = urllib.parse.urlsplit(self.path)
        if path.path == "/_stats":
            with lock:
                return self.reply(200, stats)
        if path.path == "/token":
            return self.token(body)
        if path.path == "/api/invoices":
            return self.invoices(path, body)
        self.reply(404, {"error": "not found"})

    def token(self, body):
        with lock:
            number = len(stats["token_requests"]) + 1
            form = urllib.parse.parse_qs(body.decode("utf-8"))
            stats["token_requests"].append({k: v[0] for k, v in form.items() if k != "client_secret"})
        if number <= options.slow_token_requests:
            time.sleep(options.token_delay)
        headers = {k: v for k, v in self.headers.items()}
        out_headers, out_body, status = endpoint.create_token_response(
            "http://127.0.0.1/token", http_method="POST", body=body.decode("utf-8"), headers=headers)
        self.reply(status, out_body.encode(), list(out_headers.items()))

    def invoices(self, path, body):
        header = self.headers.get("Authorization", "")
        token = header[7:] if header.startswith("Bearer ") else None
        with lock:
            stats["api_requests"].append({"method": self.command, "query": path.query, "body": body.decode("utf-8")})
            valid = token in tokens and tokens[token] > time.time() and not options.always_401
            if not valid:
                stats["unauthorized"] += 1
        if not valid:
            return self.reply(401, {"error": "invalid_token"}, [("WWW-Authenticate", 'Bearer error="invalid_token"')])
        params = {k: v[0] for k, v in urllib.parse.parse_qs(path.query).items()}
        if body:
            params.update({k: str(v) for k, v in json.loads(body).items()})
        offset, limit = int(params.get("offset", 0)), int(params.get("limit", 10))
        if options.page_delay:
            time.sleep(options.page_delay)
        with lock:
            stats["pages"] += 1
            if options.revoke_after_pages and stats["pages"] == options.revoke_after_pages:
                tokens.clear()
        self.reply(200, {"meta": {"total": len(INVOICES)}, "items": INVOICES[offset:offset + limit]})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(f"PORT {server.server_address[1]} PID {os.getpid()}", flush=True)
server.serve_forever()
