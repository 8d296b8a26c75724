/* CPython's set of ints, re-enacted: the iteration order of the sets neat-python builds.

neat-python's crossover walks `set(innovations1) | set(innovations2)`, and mutate_add_connection
picks `choice(list((set(nodes) - set(output_keys)) | set(input_keys)))`: the order a set iterates
in decides the child's gene order, its cycle checks and which node a draw picks. This file
replays Objects/setobject.c (open addressing, LINEAR_PROBES = 9, PERTURB_SHIFT = 5, the resize
and merge rules) on int64 keys with Python's int hash, so the same operations give the same table,
slot for slot. Each entry carries two payload positions (where the key sits in each parent).

The module compares these tables with real sets at first use (and the tests do on many inputs);
on any difference it computes orders with real Python sets instead.
*/
#include "pyset.h"

#include <string.h>

/* hash(int) for int64 values: modulus 2**61 - 1 with the sign kept, and -1 becomes -2. */
Py_hash_t
ps_hash(int64_t v)
{
    const uint64_t P = ((uint64_t)1 << 61) - 1;
    if (v >= 0 && (uint64_t)v < P)
        return (Py_hash_t)v;
    uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    Py_hash_t h = (Py_hash_t)(m % P);
    if (v < 0)
        h = -h;
    return h == -1 ? -2 : h;
}

/* Tables outlive one set: kept by size (a power of two) for the next set of that size. The pool is
   the module's one process-global state (plain memory, no Python object; every use holds the GIL). */
#define PS_POOL_SIZES 32
#define PS_POOL_DEPTH 6
static PSEntry *ps_pool[PS_POOL_SIZES][PS_POOL_DEPTH];
static int ps_pooled[PS_POOL_SIZES];

/* log2 of a table's size (a power of two) */
static inline int
ps_log2(size_t size)
{
    int k = -1;
    for (; size; size >>= 1)
        k++;
    return k;
}

static PSEntry *
ps_table(size_t size)
{
    int k = ps_log2(size);
    PSEntry *t = k < PS_POOL_SIZES && ps_pooled[k] ? ps_pool[k][--ps_pooled[k]] : PyMem_Malloc(sizeof(PSEntry) * size);
    if (!t)
        PyErr_NoMemory();
    else
        memset(t, 0, sizeof(PSEntry) * size);
    return t;
}

static void
ps_release(PSEntry *t, size_t size)
{
    int k = ps_log2(size);
    if (k < PS_POOL_SIZES && ps_pooled[k] < PS_POOL_DEPTH)
        ps_pool[k][ps_pooled[k]++] = t;
    else
        PyMem_Free(t);
}

void
ps_init(PSet *s)
{
    memset(s->small, 0, sizeof(s->small));
    s->table = s->small;
    s->mask = PS_MINSIZE - 1;
    s->fill = s->used = 0;
}

void
ps_free(PSet *s)
{
    if (s->table != s->small)
        ps_release(s->table, s->mask + 1);
    s->table = s->small;
}

static void
ps_insert_clean(PSEntry *table, size_t mask, const PSEntry *src)
{
    Py_hash_t hash = ps_hash(src->key);
    size_t perturb = (size_t)hash;
    size_t i = (size_t)hash & mask;
    PSEntry *entry;
    for (;;) {
        entry = &table[i];
        if (entry->tag == PS_EMPTY)
            goto found;
        if (i + PS_LINEAR_PROBES <= mask) {
            for (int j = 0; j < PS_LINEAR_PROBES; j++) {
                entry++;
                if (entry->tag == PS_EMPTY)
                    goto found;
            }
        }
        perturb >>= PS_PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & mask;
    }
found:
    *entry = *src;
}

static int
ps_resize(PSet *s, Py_ssize_t minused)
{
    size_t newsize = PS_MINSIZE;
    while (newsize <= (size_t)minused)
        newsize <<= 1;
    PSEntry *old = s->table;
    size_t oldmask = s->mask;
    PSEntry small_copy[PS_MINSIZE];
    PSEntry *newtable;
    if (newsize == PS_MINSIZE) {
        newtable = s->small;
        if (newtable == old) {
            if (s->fill == s->used)
                return 0;
            memcpy(small_copy, old, sizeof(small_copy));
            old = small_copy;
        }
        memset(newtable, 0, sizeof(PSEntry) * newsize);
    }
    else if (!(newtable = ps_table(newsize)))
        return -1;
    s->mask = newsize - 1;
    s->table = newtable;
    if (s->fill != s->used)
        s->fill = s->used;
    for (PSEntry *e = old; e <= old + oldmask; e++)
        if (PS_IS_ACTIVE(e))
            ps_insert_clean(newtable, s->mask, e);
    if (old != s->small && old != small_copy)
        ps_release(old, oldmask + 1);
    return 0;
}

/* set_add_entry. Returns the entry holding the key (new or existing) through *out;
   *added says whether it was new. -1 on memory error. */
int
ps_add(PSet *s, int64_t key, Py_hash_t hash, PSEntry **out, int *added)
{
    size_t mask = s->mask;
    size_t i = (size_t)hash & mask;
    size_t perturb = (size_t)hash;
    PSEntry *entry;
    for (;;) {
        entry = &s->table[i];
        int probes = (i + PS_LINEAR_PROBES <= mask) ? PS_LINEAR_PROBES : 0;
        do {
            if (entry->tag == PS_EMPTY)
                goto found_unused;
            if (PS_IS_ACTIVE(entry) && entry->key == key) {
                *out = entry;
                *added = 0;
                return 0;
            }
            entry++;
        } while (probes--);
        perturb >>= PS_PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & mask;
    }
found_unused:
    s->fill++;
    s->used++;
    entry->key = key;
    PS_SET_A(entry, -1);
    entry->b = -1;
    *added = 1;
    *out = entry;
    if ((size_t)s->fill * 5 < mask * 3)
        return 0;
    /* The table moves: find the entry again. */
    if (ps_resize(s, s->used > 50000 ? s->used * 2 : s->used * 4) < 0)
        return -1;
    int again;
    return ps_add(s, key, hash, out, &again);
}

/* set_lookkey: the active entry with this key, or NULL. */
PSEntry *
ps_find(const PSet *s, int64_t key, Py_hash_t hash)
{
    size_t mask = s->mask;
    size_t i = (size_t)hash & mask;
    size_t perturb = (size_t)hash;
    for (;;) {
        PSEntry *entry = &s->table[i];
        int probes = (i + PS_LINEAR_PROBES <= mask) ? PS_LINEAR_PROBES : 0;
        do {
            if (entry->tag == PS_EMPTY)
                return NULL;
            if (PS_IS_ACTIVE(entry) && entry->key == key)
                return entry;
            entry++;
        } while (probes--);
        perturb >>= PS_PERTURB_SHIFT;
        i = (i * 5 + 1 + perturb) & mask;
    }
}

/* set_merge(so, other). */
int
ps_merge(PSet *so, const PSet *other)
{
    if (other == so || other->used == 0)
        return 0;
    if ((size_t)(so->fill + other->used) * 5 >= so->mask * 3) {
        if (ps_resize(so, (so->used + other->used) * 2) < 0)
            return -1;
    }
    if (so->fill == 0 && so->mask == other->mask && other->fill == other->used) {
        for (size_t i = 0; i <= other->mask; i++)
            so->table[i] = PS_IS_ACTIVE(&other->table[i]) ? other->table[i] : (PSEntry){0};
        so->fill = other->fill;
        so->used = other->used;
        return 0;
    }
    if (so->fill == 0) {
        so->fill = other->used;
        so->used = other->used;
        for (size_t i = 0; i <= other->mask; i++)
            if (PS_IS_ACTIVE(&other->table[i]))
                ps_insert_clean(so->table, so->mask, &other->table[i]);
        return 0;
    }
    for (size_t i = 0; i <= other->mask; i++) {
        const PSEntry *e = &other->table[i];
        if (!PS_IS_ACTIVE(e))
            continue;
        PSEntry *slot;
        int added;
        int32_t a = PS_A(e), b = e->b;
        if (ps_add(so, e->key, ps_hash(e->key), &slot, &added) < 0)
            return -1;
        if (added) {
            PS_SET_A(slot, a);
            slot->b = b;
        }
        else if (b >= 0) {
            slot->b = b;
        }
    }
    return 0;
}

/* set(iterable of ints) for a list or dict_keys: one set_add_key per element, in order. `payload`
   goes to field a (second == 0) or b; a repeated key keeps its slot and takes the later payload
   (as a dict comprehension keeps the first key and the last value). */
int
ps_add_all(PSet *s, const int64_t *keys, Py_ssize_t n, int second)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        PSEntry *slot;
        int added;
        if (ps_add(s, keys[i], ps_hash(keys[i]), &slot, &added) < 0)
            return -1;
        if (second)
            slot->b = (int32_t)i;
        else
            PS_SET_A(slot, i);
    }
    return 0;
}

/* set(a_dict): presized, then one set_add_entry per key in the dict's order. */
int
ps_from_dict_keys(PSet *s, const int64_t *keys, Py_ssize_t n)
{
    if ((size_t)(s->fill + n) * 5 >= s->mask * 3) {
        if (ps_resize(s, (s->used + n) * 2) < 0)
            return -1;
    }
    return ps_add_all(s, keys, n, 0);
}

/* set_discard_entry */
static void
ps_discard(PSet *s, int64_t key, Py_hash_t hash)
{
    PSEntry *e = ps_find(s, key, hash);
    if (e) {
        e->tag = PS_DUMMY;
        s->used--;
    }
}

/* a - b (set_difference), into `out` (initialised empty). Returns 1 when this emulation does not
   cover the case (the caller then uses real sets), -1 on error. */
int
ps_difference(const PSet *a, const PSet *b, PSet *out)
{
    if ((a->used >> 2) > b->used) {
        /* set_copy_and_difference */
        if (ps_merge(out, a) < 0)
            return -1;
        if ((b->used >> 3) > out->used)
            return 1;  /* the intersection shortcut: not re-enacted */
        for (size_t i = 0; i <= b->mask; i++)
            if (PS_IS_ACTIVE(&b->table[i]))
                ps_discard(out, b->table[i].key, ps_hash(b->table[i].key));
        if ((size_t)(out->fill - out->used) <= out->mask / 4)
            return 0;
        return ps_resize(out, out->used > 50000 ? out->used * 2 : out->used * 4);
    }
    for (size_t i = 0; i <= a->mask; i++) {
        const PSEntry *e = &a->table[i];
        if (!PS_IS_ACTIVE(e) || ps_find(b, e->key, ps_hash(e->key)))
            continue;
        PSEntry *slot;
        int added;
        if (ps_add(out, e->key, ps_hash(e->key), &slot, &added) < 0)
            return -1;
    }
    return 0;
}

/* The keys in iteration order, into `dst` (room for s->used). */
void
ps_order(const PSet *s, int64_t *dst)
{
    Py_ssize_t n = 0;
    for (size_t i = 0; i <= s->mask; i++)
        if (PS_IS_ACTIVE(&s->table[i]))
            dst[n++] = s->table[i].key;
}
