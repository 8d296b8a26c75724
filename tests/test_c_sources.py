"""neatpar's C sources (neatpar/nn/_kernel.c, neatpar/evolution/_core.c and core/, neatpar/envs/unity/_wire.c)
are portable strict C11: each compiles without a single warning under gcc and under clang (the one
the `ziglang` test extra ships) against this Python's headers; the threads shim, which needs no
Python, compiles for Windows and macOS too; and no POSIX-only or Windows-only header, nor a
compiler's own construct, is used outside a preprocessor branch that names its platform or
compiler."""
import os
import re
import subprocess
import sys
import sysconfig

import pytest

from support.paths import ROOT

PACKAGE = os.path.join(ROOT, "neatpar")
STRICT = ["-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror=vla", "-Werror"]
BUILD = ["-O2", "-ffp-contract=off", "-fno-fast-math", "-fPIC"]  # setup.py's floating-point flags, as built
COMPILERS = {"gcc": ["gcc"], "clang": [sys.executable, "-m", "ziglang", "cc"]}
SHIM = os.path.join(PACKAGE, "evolution", "core", "threads_shim.c")

# Headers a platform's C library has and the C standard does not.
POSIX_ONLY = re.compile(r"(pthread|unistd|dlfcn|fcntl|semaphore|sched|poll|dirent|termios|strings|spawn|netdb|"
                        r"syslog|sys/\w+|netinet/\w+|arpa/\w+)\.h")
WINDOWS_ONLY = re.compile(r"(windows|winsock2|ws2tcpip|process|io|direct|intrin)\.h", re.IGNORECASE)
# Spellings one compiler has (what -Wpedantic does not flag): gcc's and clang's, MSVC's.
COMPILER_ONLY = re.compile(r"\b(__attribute__|__builtin_\w+|__typeof__|__extension__|__asm__|__declspec|__int64|"
                           r"_BitScan\w+)\b")
COMPILER_MACROS = ("__GNUC__", "__clang__", "_MSC_VER")


def relative(path: str) -> str:
    return os.path.relpath(path, PACKAGE)


def files(*endings: str) -> list[str]:
    return sorted(os.path.join(folder, name) for folder, _, names in os.walk(PACKAGE)
                  for name in names if name.endswith(endings))


def compile_c(command: list[str], source: str, folder) -> str:
    """The compiler's complaints about `source` ('' when it compiled without a word)."""
    out = os.path.join(folder, relative(source).replace(os.sep, "_") + ".o")
    result = subprocess.run(command + ["-c", source, "-o", out], capture_output=True, text=True, timeout=300)
    if result.returncode == 0 and not result.stderr and os.path.exists(out):
        return ""
    return f"{relative(source)}: {result.stderr.strip() or f'exit status {result.returncode}'}"


def test_the_sources_are_found():
    found = {relative(path) for path in files(".c")}
    assert {"nn/_kernel.c", "evolution/_core.c", "envs/unity/_wire.c", "evolution/core/threads_shim.c"} <= found


def test_the_second_compiler_is_clang():
    result = subprocess.run(COMPILERS["clang"] + ["--version"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "clang version" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("compiler", sorted(COMPILERS))
def test_every_c_source_compiles_in_strict_c11_without_a_warning(compiler, tmp_path):
    command = COMPILERS[compiler] + STRICT + BUILD + ["-I", sysconfig.get_paths()["include"]]
    complaints = [c for c in (compile_c(command, source, tmp_path) for source in files(".c")) if c]
    assert not complaints, "\n".join(complaints)


@pytest.mark.parametrize("target", ["x86_64-windows-gnu", "aarch64-macos"])
def test_the_threads_shim_compiles_for_other_platforms(target, tmp_path):
    """Its Win32 branch (CreateThread, WaitForSingleObject, Interlocked) and its POSIX one for macOS."""
    assert compile_c(COMPILERS["clang"] + ["-target", target] + STRICT + ["-O2"], SHIM, tmp_path) == ""


def branches(path: str):
    """Each line of the file (comments and string literals blanked) with the conditions of the #if
    blocks it sits in: an #else or #elif branch keeps its #if's condition (and adds its own)."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group()), open(path).read(), flags=re.S)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    stack: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        directive = re.match(r"\s*#\s*(\w+)\s*(.*)", line)
        word, rest = directive.groups() if directive else ("", "")
        if word in ("if", "ifdef", "ifndef"):
            stack.append(rest)
        elif word == "elif" and stack:
            stack[-1] += " " + rest
        elif word == "endif" and stack:
            stack.pop()
        yield number, line, word, rest, tuple(stack)


def unguarded(path: str) -> list[str]:
    """Platform headers and compiler constructs outside a branch that names their platform or compiler."""
    wrong = []
    for number, line, word, rest, conditions in branches(path):
        where = f"{relative(path)}:{number}: {line.strip()}"
        header = re.match(r'[<"]([^>"]+)[>"]', rest) if word == "include" else None
        if header and (POSIX_ONLY.fullmatch(header.group(1)) or WINDOWS_ONLY.fullmatch(header.group(1))):
            if not any("_WIN32" in condition for condition in conditions):
                wrong.append(where)
        elif not word and COMPILER_ONLY.search(line):
            if not any(macro in condition for condition in conditions for macro in COMPILER_MACROS):
                wrong.append(where)
    return wrong


def test_platform_headers_and_compiler_constructs_sit_in_their_branches():
    assert [path for path in files(".c", ".h")], "no C source found"
    wrong = [line for path in files(".c", ".h") for line in unguarded(path)]
    assert not wrong, "\n".join(wrong)


def test_the_branch_check_sees_what_it_looks_for(tmp_path):
    """An unguarded <pthread.h> or __builtin_clzll is caught, a guarded one is not."""
    source = tmp_path / "probe.c"
    source.write_text("#include <pthread.h>\n#if defined(_WIN32)\n#include <windows.h>\n#else\n#include <unistd.h>\n"
                      "#endif\n#ifdef __GNUC__\nint a = __builtin_clz(1);\n#endif\n/* __builtin_x in a comment */\n"
                      "int b = __builtin_clz(2);\n")
    found = [line.split(": ", 1)[1] for line in unguarded(str(source))]
    assert found == ["#include <pthread.h>", "int b = __builtin_clz(2);"]
