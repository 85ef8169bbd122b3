/* diag.h: compile-time diagnostics. A Diag collects errors and warnings
 * as BrErr values (base.h: code, source position, message) and prints them
 * as
 *     file:line:col: error: message
 *         <source line>
 *         ^
 * The first DIAG_MAX_SHOWN errors (and as many warnings) are kept; later
 * ones are only counted. Not thread-safe: one Diag per compilation. */
#ifndef BRAID_DIAG_H
#define BRAID_DIAG_H

#include <stdio.h>

#include "base.h"

typedef struct Diag Diag;

#define DIAG_MAX_SHOWN 20

/* New empty context (NULL when out of memory); free with diag_free. */
Diag *diag_new(void);
void diag_free(Diag *d);
/* Records an error / a warning at span (a NULL d is ignored). */
void diag_error(Diag *d, Span at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void diag_warning(Diag *d, Span at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Records e (an error of any stage, e.g. one from run time). */
void diag_add(Diag *d, const BrErr *e);
/* Records the warnings kept in from (speculative compilations that
 * succeed hand theirs on). */
void diag_add_warnings(Diag *d, const Diag *from);
/* Number of errors / warnings recorded (also those not kept). */
int diag_nerrors(const Diag *d);
int diag_nwarnings(const Diag *d);
/* Registers the text of a file (copied), so that printed messages show
 * the offending line. A second call for the same file replaces it. */
void diag_add_source(Diag *d, const char *file, const char *text);
/* Prints every kept message in order, then a count of the dropped ones. */
void diag_print(const Diag *d, FILE *f);
/* The first error as "file:line:col: message" (NULL if none); valid until
 * diag_free. */
const char *diag_first_message(const Diag *d);

#endif
