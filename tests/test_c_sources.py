"""neatpar's C sources (neatpar/nn/_kernel.c, neatpar/evolution/_core.c and core/, neatpar/envs/unity/_wire.c)
are portable strict C11: each compiles without a single warning under gcc and under clang (the one
the `ziglang` test extra ships) against this Python's headers; the threads shim, which needs no
Python, compiles for Windows and macOS too; and no POSIX-only or Windows-only header, nor a
compiler's own construct, is used outside a preprocessor branch that names its platform or
compiler; and each extension's files are in layers, each including only its own header and those of
the layers below (no cycle of includes, so none of calls)."""
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


# ---------------------------------------------------------------- layers

# Each extension's C files in layers, bottom first; a file's .c and .h share its layer. A file
# includes its own header and headers of the layers below its own, never a file of its own layer
# or above: the #include lines show the layers, and calls (declared by the included headers
# alone) go down only, with no cycle between files.
LAYERS = {
    "the C core of the NEAT step": [
        ["python_sum", "evolution/core/state", "evolution/core/threads_shim"],
        ["evolution/core/rng", "evolution/core/pyset"],
        ["evolution/core/genes"],
        ["evolution/core/config", "evolution/core/graphs", "evolution/core/set_orders", "evolution/core/records",
         "evolution/core/gene_objects"],
        ["evolution/core/gene_maps"],
        ["evolution/core/genomes"],
        ["evolution/core/operators", "evolution/core/distances"],
        ["evolution/core/speciation", "evolution/core/reproduction"],
        ["evolution/_core"],
    ],
    "the networks' kernels": [["python_sum"], ["nn/neat_functions", "nn/es_tables"], ["nn/es_search"],
                            ["nn/_kernel", "nn/_substrate", "nn/_es_search"]],
    "the Unity wire": [["envs/unity/why"], ["envs/unity/_wire", "envs/unity/_pixels"]],
    "the behaviour search": [["search/_knn"]],
}
CORE = os.path.join(PACKAGE, "evolution", "core")


def stem(path: str, root: str = PACKAGE) -> str:
    return os.path.splitext(os.path.relpath(path, root))[0].replace(os.sep, "/")


def included(path: str) -> list[str]:
    """The files a C file's #include "..." lines name, as paths."""
    folder = os.path.dirname(path)
    return [os.path.normpath(os.path.join(folder, name))
            for name in re.findall(r'^\s*#\s*include\s*"([^"]+)"', open(path).read(), flags=re.M)]


def layer_faults(layers: dict[str, list[list[str]]], root: str) -> list[str]:
    """Every include that breaks its extension's layers, every C file no layer holds, every cycle."""
    sources = [os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names
               if name.endswith((".c", ".h"))]
    faults = [f"{stem(path, root)}: in no layer" for path in sources
              if not any(stem(path, root) in layer for order in layers.values() for layer in order)]
    for what, order in layers.items():
        rank = {name: number for number, layer in enumerate(order) for name in layer}
        for path in sorted(path for path in sources if stem(path, root) in rank):
            own = stem(path, root)
            for target in included(path):
                other = stem(target, root)
                if other != own and rank.get(other, len(order)) >= rank[own]:
                    faults.append(f"{os.path.relpath(path, root)} includes {os.path.relpath(target, root)}, "
                                  f"{'not in' if other not in rank else 'a layer not below'} its own ({what})")
    # a file's .c and .h are one node: a cycle through them is a cycle of calls between files
    graph: dict[str, set[str]] = {}
    for path in sources:
        graph.setdefault(stem(path, root), set()).update(stem(target, root) for target in included(path))
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]):
        if state.get(node) == 1:
            faults.append("include cycle: " + " -> ".join(trail[trail.index(node):] + [node]))
        elif node in graph and not state.get(node):
            state[node] = 1
            for target in sorted(graph[node] - {node}):
                visit(target, trail + [node])
            state[node] = 2

    for node in sorted(graph):
        visit(node, [])
    return faults


def test_c_files_include_only_the_layers_below_their_own():
    faults = layer_faults(LAYERS, PACKAGE)
    assert not faults, "\n".join(faults)


def test_each_core_header_declares_its_own_files_functions_only():
    """So that a file sees only the functions of the files whose headers it includes."""
    wrong = []
    for header in files(".h"):
        if os.path.dirname(header) != CORE:
            continue
        text = re.sub(r"/\*.*?\*/", "", open(header).read(), flags=re.S)
        names = re.findall(r"^(?!typedef|static|#)[A-Za-z][\w ]*?\**\s*(\w+)\(", text, flags=re.M)
        names += re.findall(r"^extern [\w ]+?\**(\w+);", text, flags=re.M)
        source = header[:-2] + ".c"
        defined = open(source).read() if os.path.exists(source) else ""
        wrong += [f"{relative(header)}: {name}" for name in names
                  if not re.search(rf"^(\w[\w ]*\b{name} =|{name}\()", defined, flags=re.M)]
    assert not wrong, "declared by a header whose file does not define them:\n" + "\n".join(wrong)


def test_the_layer_check_sees_what_it_looks_for(tmp_path):
    """An include of a header of the same layer or above, a file in no layer and a cycle are caught."""
    for name, text in {"base.h": "", "low.h": '#include "base.h"\n', "low.c": '#include "low.h"\n#include "top.h"\n',
                       "side.c": '#include "low.h"\n', "top.h": '#include "low.h"\n', "top.c": '#include "top.h"\n',
                       "stray.c": ""}.items():
        (tmp_path / name).write_text(text)
    faults = layer_faults({"probe": [["base"], ["low", "side"], ["top"]]}, str(tmp_path))
    assert sorted(faults) == sorted([
        "stray: in no layer",
        "low.c includes top.h, a layer not below its own (probe)",
        "side.c includes low.h, a layer not below its own (probe)",
        "include cycle: low -> top -> low",
    ]), faults
