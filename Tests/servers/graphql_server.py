"""Datasette with the datasette-graphql plugin (from PyPI, installed by scripts/setup.sh
into .build/test-python), serving a database this script builds: a GraphQL API that
somebody else wrote, for Swell's tests.

The table `repos` has REPOS rows (id, full_name, stars, archived); datasette-graphql pages
it as a connection: `repos(first: N, after: CURSOR, sort: id) { nodes { … } pageInfo {
endCursor hasNextPage } }`. Prints "PORT <n> PID <pid>" when it listens on 127.0.0.1,
then serves until killed or until the process SWELL_TEST_PID names is gone.

usage: graphql_server.py DIRECTORY [--repos N]
"""
import server_support

server_support.detach()

import argparse
import os
import socket
import sqlite3

import uvicorn
from datasette.app import Datasette

parser = argparse.ArgumentParser()
parser.add_argument("directory")
parser.add_argument("--repos", type=int, default=25)
options = parser.parse_args()

path = os.path.join(options.directory, "github.db")
connection = sqlite3.connect(path)
connection.execute("create table repos (id integer primary key, full_name text not null, stars integer not null, archived integer not null)")
connection.executemany("insert into repos values (?, ?, ?, ?)",
                       [(n, f"octo/repo-{n:03d}", n * 7 % 50, int(n % 5 == 0)) for n in range(1, options.repos + 1)])
connection.commit()
connection.close()


datasette = Datasette([path])
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
print(f"PORT {sock.getsockname()[1]} PID {os.getpid()}", flush=True)
server = uvicorn.Server(uvicorn.Config(datasette.app(), log_level="warning"))
server.run(sockets=[sock])
