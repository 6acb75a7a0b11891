#!/usr/bin/env bash
# Installs what Swell needs on a Debian machine that has only the Swift toolchain:
# the development packages of SQLite, libcurl (OpenSSL flavour), OpenSSL's libcrypto, zlib,
# libdeflate and libpq,
# PostgreSQL 15 (the tests start their own throwaway server from it), and Python 3 with
# oauthlib (the tests start an OAuth 2.0 token endpoint made with it), groff (the release test
# reads the man page with it); and, from PyPI into
# .build/test-python, Datasette with datasette-graphql (the tests' GraphQL API) and Flask
# with flask-limiter and waitress (the tests' rate-limited API).
# Does nothing when they are already there. Safe to run again.
set -euo pipefail

packages=(libsqlite3-dev libcurl4-openssl-dev libssl-dev zlib1g-dev libdeflate-dev libpq-dev postgresql python3 python3-oauthlib python3-venv groff-base)
missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "setup: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
        sudo="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

command -v swift >/dev/null 2>&1 || { echo "setup: the Swift toolchain (swift) is not on PATH" >&2; exit 1; }

# The tests' servers from PyPI, in a virtual environment under .build (made once; a fresh
# clone makes it again, ~30 s): Datasette with the datasette-graphql plugin (the GraphQL API),
# and Flask with flask-limiter served by waitress (a real rate limiter, with its
# X-RateLimit-* and Retry-After headers).
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.build/test-python"
if ! "$venv/bin/python" -c "import datasette, datasette_graphql, flask, flask_limiter, waitress" >/dev/null 2>&1; then
    echo "setup: installing datasette, datasette-graphql, flask, flask-limiter and waitress into .build/test-python" >&2
    if ! "$venv/bin/python" -c "" >/dev/null 2>&1; then
        rm -rf "$venv"
        mkdir -p "$root/.build"
        /usr/bin/python3 -m venv "$venv"
    fi
    "$venv/bin/pip" install --quiet --disable-pip-version-check "datasette==0.65.5" "datasette-graphql==2.2" \
        "flask==3.1.3" "flask-limiter==4.1.1" "limits==5.8.0" "waitress==3.0.2"
fi
