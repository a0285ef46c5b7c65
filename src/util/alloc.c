/*
 * The library's allocator: malloc and friends behind one counter, so that a
 * test can make the Nth allocation fail (ppi_alloc_inject) and check that
 * every path out of memory returns PP_ENOMEM and frees what it holds.
 * Outside such a test the counter only counts.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static atomic_llong alloc_count;
static atomic_llong alloc_failed;
static long long fail_at; /* 0: never */
static bool fail_sticky;  /* every allocation from fail_at on fails */
/* Inside jansson's parser (ppi_alloc_shield): counted, never failed on
 * purpose.  jansson 2.14's lexer does not survive a failed allocation in
 * every place (tests/fault/oom.c found heap corruption), a bug outside
 * paraplan; a real failure there is still caught (ppi_json_parse_object). */
static _Thread_local int shield;
static atomic_llong alloc_shielded;

void ppi_alloc_shield(bool on)
{
	shield += on ? 1 : -1;
}

long long ppi_alloc_shielded(void)
{
	return atomic_load(&alloc_shielded);
}

/* True when this allocation is the one to fail (counts it either way). */
static bool fail_now(void)
{
	long long k = atomic_fetch_add(&alloc_count, 1) + 1;
	if (shield) {
		atomic_fetch_add(&alloc_shielded, 1);
		return false;
	}
	if (fail_at > 0 && (k == fail_at || (fail_sticky && k > fail_at))) {
		atomic_fetch_add(&alloc_failed, 1);
		return true;
	}
	return false;
}

/* A real failure counts as a failure too (ppi_alloc_failed). */
static void *counted(void *p)
{
	if (!p)
		atomic_fetch_add(&alloc_failed, 1);
	return p;
}

void *ppi_malloc(size_t n)
{
	return fail_now() ? NULL : counted(malloc(n ? n : 1));
}

void *ppi_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : counted(calloc(n ? n : 1, size ? size : 1));
}

void *ppi_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : counted(realloc(p, n ? n : 1));
}

char *ppi_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = ppi_malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

void ppi_alloc_inject(long long at, bool sticky)
{
	atomic_store(&alloc_count, 0);
	atomic_store(&alloc_failed, 0);
	atomic_store(&alloc_shielded, 0);
	fail_at = at;
	fail_sticky = sticky;
	json_set_alloc_funcs(ppi_malloc, free);
}

long long ppi_alloc_count(void)
{
	return atomic_load(&alloc_count);
}

long long ppi_alloc_failed(void)
{
	return atomic_load(&alloc_failed);
}

pp_status ppi_oom(pp_error *err)
{
	if (err) {
		pp_error_clear(err);
		snprintf(err->text, sizeof err->text, "out of memory");
	}
	return PP_ENOMEM;
}
