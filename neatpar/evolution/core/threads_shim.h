/* The threads a speciation's distances are worked out on (threads_shim.c: POSIX threads, or Win32
threads on Windows). Declarations only; no Python in them. */
#ifndef NEATPAR_THREADS_SHIM_H
#define NEATPAR_THREADS_SHIM_H

#include <stddef.h>

typedef struct Tasks Tasks;      /* hands out the numbers 0, 1, 2, ... once each, across threads */

size_t next_task(Tasks *tasks);

/* Runs work(arg, tasks) on `threads` threads at once (this one among them; at most 16, fewer if the
   system gives fewer) and waits for them all: 0, or -1 if a call returned -1. Called without the
   GIL: work touches no Python object. */
int run_on_threads(int threads, int (*work)(void *arg, Tasks *tasks), void *arg);

#endif
