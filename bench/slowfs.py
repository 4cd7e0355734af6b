#!/usr/bin/python3
"""A slow file system for bench/slowdisk.sh: a FUSE pass-through of a directory that waits before each operation
that changes or reads data, and can hang every operation (a disk that stopped answering) until told to go on.

    /usr/bin/python3 bench/slowfs.py BACKING MOUNTPOINT CONTROL

BACKING is the directory the files really live in; MOUNTPOINT shows it, slowed down; CONTROL is a small file read
at most every 50 ms that says how slow: "DELAY_MS READ_DELAY_MS" (each write, fsync, create, rename, unlink,
truncate, mkdir waits DELAY_MS; each read READ_DELAY_MS), or "hang" (every operation, lookups and statfs included,
waits until the file says otherwise; at most --max-hang s, a bound against a bench that died), or "full" (what
takes room fails with ENOSPC, statfs says no block is free; removing and cutting back work), or "readonly" (every
change fails with EROFS). Writes go through to
BACKING synchronously: FUSE without a writeback cache sends each write() to this process, so the writer's call waits
the whole delay (a harsher disk than a slow block device under the page cache, where only fsync waits).

It prints a line when the mode changes, with the operations done and the time they waited so far; it runs in the
foreground, and SIGTERM unmounts it (libfuse's handler). Debian's python3-fusepy (ctypes over libfuse2), run as root.
Loopback of nothing: no network.
"""

import argparse
import errno
import os
import sys
import threading
import time

from fusepy import FUSE, FuseOSError, Operations


class Control:
    """The mode the control file asks for, re-read at most every 50 ms."""

    def __init__(self, path, max_hang):
        self.path = path
        self.max_hang = max_hang
        self.lock = threading.Lock()
        self.checked = 0.0
        self.mode = (0.0, 0.0)   # (delay s, read delay s), or "hang"
        self.ops = 0
        self.waited = 0.0
        self.counts = {}         # operation name: how many
        self.hung_since = None

    def current(self):
        now = time.monotonic()
        with self.lock:
            if now - self.checked >= 0.05:
                self.checked = now
                try:
                    with open(self.path) as f:
                        text = f.read().split()
                    word = text[:1]
                    mode = (word[0] if word in (["hang"], ["full"], ["readonly"])
                            else (float(text[0]) / 1000, float(text[1]) / 1000))
                except (OSError, ValueError, IndexError):
                    mode = self.mode
                if mode != self.mode:
                    print(f"slowfs: {time.strftime('%H:%M:%S')} mode {self.describe(mode)} (was "
                          f"{self.describe(self.mode)}; {self.ops} operations so far, {self.waited:.1f} s waited: "
                          f"{' '.join(f'{k} {v}' for k, v in sorted(self.counts.items()))})",
                          file=sys.stderr, flush=True)
                    self.hung_since = now if mode == "hang" else None
                    self.mode = mode
            return self.mode, self.hung_since

    @staticmethod
    def describe(mode):
        if isinstance(mode, str):
            return mode
        return f"delay {mode[0] * 1000:.0f} ms, reads {mode[1] * 1000:.0f} ms"

    def tally(self):
        with self.lock:
            return " ".join(f"{name} {count}" for name, count in sorted(self.counts.items()))

    def wait(self, kind, name):
        """Waits as the mode says before an operation `name` of `kind`: "write", "read" or "meta" (lookups: only a
        hang)."""
        start = time.monotonic()
        while True:
            mode, since = self.current()
            if mode != "hang" or time.monotonic() - since > self.max_hang:
                break
            time.sleep(0.02)
        if isinstance(mode, tuple):
            delay = mode[0] if kind == "write" else mode[1] if kind == "read" else 0.0
            if delay > 0:
                time.sleep(delay)
        with self.lock:
            self.ops += 1
            self.counts[name] = self.counts.get(name, 0) + 1
            self.waited += time.monotonic() - start
        # A full volume refuses what takes room (removing and cutting back still work); a read-only one every change.
        if kind == "write" and mode == "full" and name not in ("unlink", "rmdir", "truncate"):
            raise FuseOSError(errno.ENOSPC)
        if kind == "write" and mode == "readonly":
            raise FuseOSError(errno.EROFS)


class SlowFS(Operations):
    def __init__(self, root, control):
        self.root = os.path.realpath(root)
        self.control = control

    def _full(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def _call(self, kind, fn, *args):
        self.control.wait(kind, sys._getframe(1).f_code.co_name)
        try:
            return fn(*args)
        except OSError as e:
            raise FuseOSError(e.errno or errno.EIO)

    # metadata (a hang stops these too)
    def access(self, path, mode):
        if not self._call("meta", os.access, self._full(path), mode):
            raise FuseOSError(errno.EACCES)

    def getattr(self, path, fh=None):
        st = self._call("meta", os.lstat, self._full(path))
        return {key: getattr(st, key) for key in ("st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime",
                                                   "st_nlink", "st_size", "st_uid")}

    def readdir(self, path, fh):
        return [".", ".."] + self._call("read", os.listdir, self._full(path))

    def statfs(self, path):
        st = self._call("meta", os.statvfs, self._full(path))
        fields = {key: getattr(st, key) for key in ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail",
                                                     "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")}
        if self.control.current()[0] == "full":
            fields.update(f_bavail=0, f_bfree=0)
        return fields

    def chmod(self, path, mode):
        return self._call("write", os.chmod, self._full(path), mode)

    def chown(self, path, uid, gid):
        return self._call("write", os.chown, self._full(path), uid, gid)

    def utimens(self, path, times=None):
        return self._call("write", os.utime, self._full(path), times)

    # changes
    def mkdir(self, path, mode):
        return self._call("write", os.mkdir, self._full(path), mode)

    def rmdir(self, path):
        return self._call("write", os.rmdir, self._full(path))

    def unlink(self, path):
        return self._call("write", os.unlink, self._full(path))

    def rename(self, old, new):
        return self._call("write", os.rename, self._full(old), self._full(new))

    def truncate(self, path, length, fh=None):
        return self._call("write", os.truncate, self._full(path), length)

    def create(self, path, mode, fi=None):
        return self._call("write", os.open, self._full(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)

    def open(self, path, flags):
        return self._call("meta", os.open, self._full(path), flags)

    def write(self, path, data, offset, fh):
        return self._call("write", os.pwrite, fh, data, offset)

    def fsync(self, path, datasync, fh):
        return self._call("write", os.fdatasync if datasync else os.fsync, fh)

    def fsyncdir(self, path, datasync, fh):
        self.control.wait("write", "fsyncdir")
        return 0

    def flush(self, path, fh):
        return 0

    def read(self, path, size, offset, fh):
        return self._call("read", os.pread, fh, size, offset)

    def release(self, path, fh):
        return os.close(fh)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("backing")
    parser.add_argument("mountpoint")
    parser.add_argument("control")
    parser.add_argument("--max-hang", type=float, default=300)
    args = parser.parse_args()
    control = Control(args.control, args.max_hang)
    control.current()
    print(f"slowfs: {args.backing} on {args.mountpoint}, {control.describe(control.mode)}", file=sys.stderr, flush=True)
    FUSE(SlowFS(args.backing, control), args.mountpoint, foreground=True, nothreads=False)
    print(f"slowfs: unmounted; {control.ops} operations, {control.waited:.1f} s waited ({control.tally()})",
          file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
