/* Why a read of the wire or of a PNG failed: one line of text, made by fail() where the fault is
   found and raised (or returned) by the module function that asked, so that the C readers need no
   Python exception state of their own. Shared by _wire.c and _pixels.c. */
#ifndef NEATPAR_WHY_H
#define NEATPAR_WHY_H

#include <stdarg.h>
#include <stdio.h>

typedef struct { char text[240]; } Why;

/* Fills why with the formatted line; returns -1, the readers' failure value. */
static int fail(Why *why, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(why->text, sizeof(why->text), format, args);
    va_end(args);
    return -1;
}

#endif
