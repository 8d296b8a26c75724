"""A platform's surface as the project's code sees it, applied at interpreter start (this folder on
PYTHONPATH, NEATPAR_SURFACE=darwin or win32; spawned children inherit both, so they get it too).

The project's modules (neatpar.*, the `neatpar` command's _neatpar_command, the fast-wire hook)
are given views of `sys`, `os` and `signal` in which the Linux-only surface is gone: sys.platform
reads as the platform; os has no sched_getaffinity (nor, as on Windows, the POSIX-only calls);
signal has no SIGKILL (nor, as on Windows, anything but Windows' own signals and calls); fcntl
(and on Windows the other POSIX-only modules) cannot be imported; /proc cannot be opened or listed.
Everything else, the libraries the project uses included, keeps this machine's own surface: on a
real macOS or Windows they would run their own code for it, which is not what this emulates. What
it proves is that the project's own code asks for nothing the platform lacks, on the paths a run
takes: it guards against the next Linux-only call there, and shows nothing about the other
platforms' own behaviour.
"""
import builtins
import os
import signal
import sys
import types

SURFACE = os.environ.get("NEATPAR_SURFACE", "")
PROJECT = ("neatpar", "_neatpar_command", "_neatpar_fastwire_hook")

LINUX_ONLY_OS = {"sched_getaffinity", "sched_setaffinity", "pipe2", "memfd_create", "eventfd", "pidfd_open", "splice",
                 "copy_file_range", "posix_fadvise", "posix_fallocate", "getxattr", "setxattr", "listxattr",
                 "removexattr", "unshare", "setns"}
POSIX_ONLY_OS = {"fork", "forkpty", "register_at_fork", "killpg", "setsid", "getsid", "setpgid", "getpgid", "getpgrp",
                 "setpgrp", "getuid", "geteuid", "getgid", "getegid", "getgroups", "setuid", "setgid", "seteuid",
                 "setegid", "getresuid", "getresgid", "initgroups", "nice", "getpriority", "setpriority", "sysconf",
                 "sysconf_names", "confstr", "pathconf", "fpathconf", "uname", "getloadavg", "sync", "fdatasync",
                 "mkfifo", "mknod", "chown", "lchown", "fchown", "fchmod", "lchmod", "chroot", "statvfs", "fstatvfs",
                 "openpty", "ttyname", "ctermid", "tcgetpgrp", "tcsetpgrp", "wait", "wait3", "wait4", "waitid",
                 "WNOHANG", "WUNTRACED", "WCONTINUED", "WIFEXITED", "WEXITSTATUS", "WIFSIGNALED", "WTERMSIG",
                 "WIFSTOPPED", "WSTOPSIG", "posix_spawn", "posix_spawnp", "sched_yield", "sched_param",
                 "set_blocking", "get_blocking", "O_DIRECTORY", "O_CLOEXEC", "O_NOFOLLOW", "O_NONBLOCK", "O_SYNC",
                 "O_DSYNC", "O_NOCTTY", "EX_OK", "sendfile", "major", "minor", "makedev"}
WINDOWS_SIGNAL = {"SIGABRT", "SIGFPE", "SIGILL", "SIGINT", "SIGSEGV", "SIGTERM", "SIG_DFL", "SIG_IGN", "NSIG",
                  "Signals", "Handlers", "default_int_handler", "getsignal", "signal", "raise_signal", "set_wakeup_fd",
                  "strsignal", "valid_signals"}   # and SIGBREAK, CTRL_C_EVENT, CTRL_BREAK_EVENT, which Linux lacks
LINUX_ONLY_SIGNAL = {"SIGRTMIN", "SIGRTMAX", "SIGPOLL", "SIGPWR", "SIGSTKFLT", "sigtimedwait", "sigwaitinfo",
                     "pidfd_send_signal"}
BLOCKED = {"darwin": {"fcntl"},
           "win32": {"fcntl", "termios", "tty", "pty", "resource", "pwd", "grp", "posix", "crypt", "syslog",
                     "_posixsubprocess", "_posixshmem"}}


def hidden(surface: str, module: types.ModuleType) -> set[str]:
    """The names of `module` the project's code does not see on `surface`."""
    if module is os:
        return LINUX_ONLY_OS | (POSIX_ONLY_OS if surface == "win32" else set())
    if surface == "win32":
        return {name for name in dir(signal) if not name.startswith("_") and name not in WINDOWS_SIGNAL}
    return LINUX_ONLY_SIGNAL | {"SIGKILL"}


def is_project(namespace) -> bool:
    """Whether a module's globals (or a frame's) are the project's."""
    if not namespace:
        return False
    spec = namespace.get("__spec__")
    names = (namespace.get("__name__") or "", getattr(spec, "name", "") or "")
    return any(name.split(".")[0] in PROJECT for name in names)


def is_proc(path) -> bool:
    try:
        return os.path.abspath(os.fsdecode(path)).startswith("/proc")
    except TypeError:   # a descriptor
        return False


class View(types.ModuleType):
    """A module as the project sees it: the real one's names, less the hidden ones, with some
    replaced; setting a name sets it on the real module."""

    def __init__(self, real: types.ModuleType, hidden_names: set[str], replaced: dict):
        super().__init__(real.__name__, real.__doc__)
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_hidden", frozenset(hidden_names))
        object.__setattr__(self, "_replaced", replaced)

    def __getattr__(self, name):
        if name in self._hidden:
            raise AttributeError(f"module {self._real.__name__!r} has no attribute {name!r} (on {SURFACE})")
        if name in self._replaced:
            return self._replaced[name]
        return getattr(self._real, name)

    def __setattr__(self, name, value):
        setattr(self._real, name, value)

    def __dir__(self):
        return sorted((set(dir(self._real)) | set(self._replaced)) - self._hidden)


def refusing_proc(function):
    """`function` (open, listdir, ...), refusing /proc to the project's code."""
    def guarded(path=".", *args, **kwargs):
        if is_proc(path) and is_project(sys._getframe(1).f_globals):
            raise FileNotFoundError(2, f"No such file or directory (no /proc on {SURFACE})", os.fsdecode(path))
        return function(path, *args, **kwargs)
    guarded.__name__ = function.__name__
    return guarded


def install(surface: str) -> None:
    os_replaced = {name: refusing_proc(getattr(os, name)) for name in ("listdir", "scandir", "open", "stat",
                                                                       "readlink")}
    views = {"sys": View(sys, set(), {"platform": surface}), "os": View(os, hidden(surface, os), os_replaced),
             "signal": View(signal, hidden(surface, signal), {})}
    real_import, real_open = builtins.__import__, builtins.open

    def scoped_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and is_project(globals):
            top = name.partition(".")[0]
            if top in BLOCKED[surface]:
                raise ModuleNotFoundError(f"No module named {name!r} (on {surface})", name=name)
            if top in views and (name == top or not fromlist):
                real_import(name, globals, locals, fromlist, level)
                return views[top]
        return real_import(name, globals, locals, fromlist, level)

    def scoped_open(file, *args, **kwargs):
        if is_proc(file) and is_project(sys._getframe(1).f_globals):
            raise FileNotFoundError(2, f"No such file or directory (no /proc on {surface})", os.fsdecode(file))
        return real_open(file, *args, **kwargs)

    builtins.__import__, builtins.open = scoped_import, scoped_open


if SURFACE:
    if SURFACE not in BLOCKED:
        raise SystemExit(f"NEATPAR_SURFACE={SURFACE!r}: name darwin or win32")
    install(SURFACE)
