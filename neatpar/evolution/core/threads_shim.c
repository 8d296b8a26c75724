/* Threads for the speciation's distance grid, on POSIX threads or on Win32 threads (the one
place the core starts threads; the other C code of neatpar runs on the caller's thread).

The grid's work runs without the GIL on a few threads that share one counter of tasks. C11's
<threads.h> would do, but macOS and older MSVC lack it; Python's own threads would hold the GIL
between tasks. So: pthread_create / pthread_join and C11 atomics on POSIX, CreateThread /
WaitForSingleObject and the Interlocked functions on Windows (MSVC's <stdatomic.h> needs an
experimental switch). This file needs no Python: its header declares all it shares. */
#include "threads_shim.h"

#if defined(_WIN32)
#include <windows.h>
#else
#include <pthread.h>
#include <stdatomic.h>
#endif

#define MAX_THREADS 16

#if defined(_WIN32)
struct Tasks { volatile LONG64 next; };
typedef HANDLE Thread;
#else
struct Tasks { atomic_size_t next; };
typedef pthread_t Thread;
#endif

/* One thread's call: what it runs and what it returned. */
typedef struct {
    int (*work)(void *arg, Tasks *tasks);
    void *arg;
    Tasks *tasks;
    int result;
} Call;

size_t
next_task(Tasks *tasks)
{
#if defined(_WIN32)
    return (size_t)(InterlockedIncrement64(&tasks->next) - 1);
#else
    return atomic_fetch_add(&tasks->next, 1);
#endif
}

#if defined(_WIN32)
static DWORD WINAPI
thread_main(LPVOID p)
{
    Call *call = p;
    call->result = call->work(call->arg, call->tasks);
    return 0;
}

static int
thread_start(Thread *t, Call *call)
{
    *t = CreateThread(NULL, 0, thread_main, call, 0, NULL);
    return *t != NULL;
}

static void
thread_join(Thread t)
{
    WaitForSingleObject(t, INFINITE);
    CloseHandle(t);
}
#else
static void *
thread_main(void *p)
{
    Call *call = p;
    call->result = call->work(call->arg, call->tasks);
    return NULL;
}

static int
thread_start(Thread *t, Call *call)
{
    return pthread_create(t, NULL, thread_main, call) == 0;
}

static void
thread_join(Thread t)
{
    pthread_join(t, NULL);
}
#endif

int
run_on_threads(int threads, int (*work)(void *arg, Tasks *tasks), void *arg)
{
    Tasks tasks;
#if defined(_WIN32)
    tasks.next = 0;
#else
    atomic_init(&tasks.next, 0);
#endif
    Thread ids[MAX_THREADS];
    Call calls[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    int n = threads < 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
    for (int w = 0; w < n; w++) {
        calls[w].work = work;
        calls[w].arg = arg;
        calls[w].tasks = &tasks;
        calls[w].result = 0;
    }
    for (int w = 1; w < n; w++)
        started[w] = thread_start(&ids[w], &calls[w]);
    calls[0].result = work(arg, &tasks);  /* this thread works too; tasks no thread could be had for are taken here */
    int rc = calls[0].result;
    for (int w = 1; w < n; w++)
        if (started[w]) {
            thread_join(ids[w]);
            if (calls[w].result < 0)
                rc = -1;
        }
    return rc;
}
