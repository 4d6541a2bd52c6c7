"""Counts the frames of a SQLite write-ahead log's current cycle by the table or index each
frame's page belongs to, per commit. Reads a copy (the database file and its -wal), so the
database itself is never opened for writing. Usage: wal_pages.py DATABASE_FILE"""
import collections
import shutil
import sqlite3
import struct
import sys
import tempfile

database = sys.argv[1]
log = open(database + "-wal", "rb").read()
_, _, page_size, _, salt1, salt2, _, _ = struct.unpack(">8I", log[:32])
frames, offset = [], 32
while offset + 24 + page_size <= len(log):
    page, commit_size, frame_salt1, frame_salt2 = struct.unpack(">4I", log[offset:offset + 16])
    if (frame_salt1, frame_salt2) != (salt1, salt2):
        break  # a frame of an earlier cycle: the current one ends here
    frames.append((page, commit_size))
    offset += 24 + page_size
copy = tempfile.mkdtemp()
shutil.copy(database, copy + "/db")
shutil.copy(database + "-wal", copy + "/db-wal")
trees = dict((page, name) for name, page in sqlite3.connect(copy + "/db").execute("SELECT name, pageno FROM dbstat"))
shutil.rmtree(copy)
commits = sum(1 for _, size in frames if size)
if not commits:
    sys.exit("no commit in the log's current cycle: run more pairs")
counts = collections.Counter(trees.get(page, "(free or new)") for page, _ in frames)
print(f"{len(frames)} frames in {commits} commits: {len(frames) / commits:.2f} pages per commit")
for name, count in counts.most_common():
    print(f"{count / commits:6.2f} per commit  {100 * count / len(frames):5.1f} %  {name}")
