/*
 * Private to the library (prefix ppi_): the one seeded random stream and the
 * one memo-key hash every module uses.
 *
 * SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): a 64-bit state advanced by the golden-ratio
 * increment and passed through a finaliser (Stafford's variant 13 of
 * MurmurHash3's fmix64).  Portable and reproducible from a seed on every
 * platform, which is what the annealer, the synthetic bandwidth matrices and
 * the MoE routing draws need; the tests draw from it too.
 *
 * A memo key is a struct of the inputs that shape a memoised value, zeroed
 * (memset) before its fields are set so that padding compares equal; it is
 * hashed by ppi_key_hash (to pick a slot) and compared by ppi_key_equal, byte
 * for byte, and by nothing else.  One exception, for speed: the memo of
 * collective times (five fields, asked several times per plan a search
 * times) is hashed by one ppi_mix64 of the fields that vary and compared
 * field by field (cost/stage_int.h, ppi_stage_coll_key_set and its two
 * neighbours).
 */
#ifndef PPI_HASH_H
#define PPI_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The golden-ratio increment, 2^64 / phi, odd. */
#define PPI_SPLITMIX64_GAMMA 0x9e3779b97f4a7c15ull

/* SplitMix64's finaliser: a bijection of 64-bit words that spreads every
 * input bit over the output. */
static inline uint64_t ppi_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The next 64 bits of the stream whose state is *s. */
static inline uint64_t ppi_splitmix64(uint64_t *s)
{
	return ppi_mix64(*s += PPI_SPLITMIX64_GAMMA);
}

/* Uniform in [0, 1): the stream's top 53 bits as a double's mantissa. */
static inline double ppi_splitmix64_unit(uint64_t *s)
{
	return (double)(ppi_splitmix64(s) >> 11) * 0x1.0p-53;
}

/* Uniform in [0, n) for n > 0 (by modulo: the bias is n / 2^64). */
static inline uint64_t ppi_splitmix64_below(uint64_t *s, uint64_t n)
{
	return ppi_splitmix64(s) % n;
}

/* Hash of a memo key of n bytes: its 8-byte words (the tail zero-padded)
 * folded through the finaliser. */
static inline uint64_t ppi_key_hash(const void *key, size_t n)
{
	const unsigned char *b = key;
	uint64_t h = PPI_SPLITMIX64_GAMMA ^ n;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, sizeof w);
		h = ppi_mix64(h ^ w) + PPI_SPLITMIX64_GAMMA;
	}
	if (i < n) {
		uint64_t w = 0;
		memcpy(&w, b + i, n - i);
		h = ppi_mix64(h ^ w) + PPI_SPLITMIX64_GAMMA;
	}
	return ppi_mix64(h);
}

/* Does the stored key equal `key` (both n bytes, built as above)? */
static inline bool ppi_key_equal(const void *stored, const void *key, size_t n)
{
	return memcmp(stored, key, n) == 0;
}

#endif
