"""What latency_server.py keeps: the requests it saw, how many are in flight and held, and
the fault rules with their counts (latency_server.py's docstring says how rules match and
fire). Standard library only.
"""
import email.utils
import re
import threading
import time


class RequestLog:
    """Requests seen, requests in flight and held, and the fault rules; guarded by `lock`."""

    def __init__(self):
        self.started_monotonic = time.monotonic()
        self.started_unix = time.time()
        self.lock = threading.Condition()
        self.requests = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.held = 0
        self.release_generation = 0
        self.rules = []

    def now(self):
        """Seconds since the start (monotonic), to the microsecond."""
        return round(time.monotonic() - self.started_monotonic, 6)

    def set_rules(self, rules):
        if not isinstance(rules, list) or not all(isinstance(rule, dict) for rule in rules):
            raise ValueError("the fault rules are a JSON array of objects")
        with self.lock:
            self.rules = [dict(rule, seen=0, fired=0) for rule in rules]

    def begin(self, entry):
        """Counts the request in, and returns the rule that fires on it (or None) with its index."""
        with self.lock:
            self.requests.append(entry)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            chosen = None
            for index, rule in enumerate(self.rules):
                if not rule_matches(rule, entry):
                    continue
                rule["seen"] += 1
                times = int(rule.get("times", 1))
                due = rule["seen"] >= int(rule.get("nth", 1)) and (times == 0 or rule["fired"] < times)
                if chosen is None and due:
                    rule["fired"] += 1
                    chosen = (index, rule)
            self.lock.notify_all()
            return chosen

    def end(self, entry, status):
        with self.lock:
            entry["status"] = status
            entry["t_end"] = self.now()
            self.in_flight -= 1

    def hold(self):
        with self.lock:
            generation = self.release_generation
            self.held += 1
            self.lock.notify_all()
            while self.release_generation == generation:
                self.lock.wait()
            self.held -= 1

    def release(self):
        with self.lock:
            self.release_generation += 1
            self.lock.notify_all()

    def reset(self):
        with self.lock:
            self.requests = []
            self.max_in_flight = self.in_flight

    def wait(self, count, held, timeout):
        deadline = time.monotonic() + timeout
        with self.lock:
            while len(self.requests) < count or self.held < held:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.lock.wait(left)
            return {"ok": len(self.requests) >= count and self.held >= held, "count": len(self.requests), "held": self.held}

    def stats(self):
        with self.lock:
            return {"started_unix": self.started_unix, "count": len(self.requests), "max_in_flight": self.max_in_flight,
                    "in_flight": self.in_flight, "held": self.held, "requests": [dict(entry) for entry in self.requests],
                    "faults": [dict(rule) for rule in self.rules]}

    def faults(self):
        with self.lock:
            return [dict(rule) for rule in self.rules]


def rule_matches(rule, entry):
    return entry["path"].startswith(rule.get("path_prefix", "")) and rule.get("query", "") in entry["query"]


def filled(value):
    """A header value with {unix+N} and {http_date+N} filled in."""
    def unix(match):
        return str(int(time.time() + float(match.group(1) or 0)))

    def http_date(match):
        return email.utils.formatdate(time.time() + float(match.group(1) or 0), usegmt=True)
    value = re.sub(r"\{unix(?:\+([0-9.]+))?\}", unix, str(value))
    return re.sub(r"\{http_date(?:\+([0-9.]+))?\}", http_date, value)
