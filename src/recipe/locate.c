/*
 * Where a field path ("phases[1].gbs.end") sits in a JSON text: jansson keeps
 * no positions after parsing, so a semantic error found later is placed by
 * scanning the text once more (recipe_int.h).
 */
#include <stdio.h>
#include <string.h>

#include "recipe/recipe_int.h"

#define DEPTH_MAX 64
#define PATH_MAX_LEN 256

typedef struct scan {
	const char *target;
	size_t tlen;
	char path[PATH_MAX_LEN];
	size_t plen;
	int best_len, line, column; /* the longest path matched so far and its place */
} scan;

/* `s->path` is the path of a key or element at (line, col): keep it when it
 * is the target or a longer prefix of it than any so far. */
static void consider(scan *s, int line, int col)
{
	size_t n = s->plen;
	if (n > s->tlen || (int)n <= s->best_len || strncmp(s->path, s->target, n) != 0)
		return;
	if (n < s->tlen && s->target[n] != '.' && s->target[n] != '[')
		return;
	s->best_len = (int)n;
	s->line = line;
	s->column = col;
}

/* s->path cut to `base`, then ".key" (or "key" at the top), or "[idx]" when key is NULL. */
static void path_set(scan *s, size_t base, const char *key, size_t klen, int idx)
{
	int w;
	if (key)
		w = snprintf(s->path + base, sizeof s->path - base, "%s%.*s", base ? "." : "",
		             (int)klen, key);
	else
		w = snprintf(s->path + base, sizeof s->path - base, "[%d]", idx);
	s->plen = w < 0 ? base : base + (size_t)w;
	if (s->plen >= sizeof s->path)
		s->plen = sizeof s->path - 1;
}

bool ppi_json_locate(const char *text, size_t len, const char *path, int *line, int *column)
{
	scan s = {.target = path, .tlen = strlen(path), .best_len = 0, .line = 0, .column = 0};
	struct {
		bool arr, want_value;
		int idx;
		size_t base;
	} st[DEPTH_MAX];
	int depth = 0, ln = 1, col = 0;
	s.path[0] = '\0';
	s.plen = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == '\n') {
			ln++;
			col = 0;
			continue;
		}
		if ((c & 0xC0) != 0x80)
			col++;
		if (c == ' ' || c == '\t' || c == '\r' || c == ':')
			continue;
		bool in_arr = depth > 0 && st[depth - 1].arr;
		if (in_arr && st[depth - 1].want_value && c != ']' && c != ',') {
			path_set(&s, st[depth - 1].base, NULL, 0, st[depth - 1].idx);
			consider(&s, ln, col);
			st[depth - 1].want_value = false;
		}
		if (c == '"') {
			size_t start = i + 1;
			int sl = ln, sc = col;
			for (i++; i < len && text[i] != '"'; i++)
				if (text[i] == '\\')
					i++;
			size_t j = i + 1;
			while (j < len && strchr(" \t\r\n", text[j]))
				j++;
			if (depth > 0 && !st[depth - 1].arr && j < len && text[j] == ':') {
				path_set(&s, st[depth - 1].base, text + start, i - start, 0);
				consider(&s, sl, sc);
			}
			col += (int)(i - start) + 1; /* a key's characters (ASCII in practice) */
		} else if ((c == '{' || c == '[') && depth < DEPTH_MAX) {
			st[depth].arr = c == '[';
			st[depth].want_value = c == '[';
			st[depth].idx = 0;
			st[depth].base = s.plen;
			depth++;
		} else if ((c == '}' || c == ']') && depth > 0) {
			depth--;
			s.plen = st[depth].base;
			s.path[s.plen] = '\0';
		} else if (c == ',' && depth > 0) {
			if (st[depth - 1].arr) {
				st[depth - 1].idx++;
				st[depth - 1].want_value = true;
			}
			s.plen = st[depth - 1].base;
			s.path[s.plen] = '\0';
		}
	}
	if (s.best_len == 0 && s.tlen > 0)
		return false;
	*line = s.line;
	*column = s.column;
	return true;
}
