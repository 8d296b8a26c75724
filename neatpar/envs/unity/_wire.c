/*
 * The ML-Agents step messages (communication API 1.5, mlagents-envs 0.28) read from and written to
 * their protobuf wire bytes directly, for neatpar/envs/unity/bulk.py.
 *
 * neatpar.envs.unity._wire, imported only by bulk.py. It follows the C extensions' convention
 * (docs/architecture/index.md, "The C extensions"): multi-phase init (no state; wire_exec adds
 * MAX_OBSERVATIONS); built-in exceptions only, one-line messages that begin with the function
 * called wrongly (a message that cannot be read is answered with why, a string, not raised).
 *
 * Reading accepts the form protobuf writers give these proto3 messages: known fields with their
 * declared wire types, each singular field at most once, repeated scalars packed (in one or more
 * chunks), strings in UTF-8. Anything else (an unknown field, a field given twice, an unpacked
 * repeated scalar, malformed bytes) is answered with a string saying why, and bulk.py has
 * protobuf and mlagents-envs read that message or behavior instead: nothing is guessed.
 *
 * index(data) -> (status, has_initialization, side_channel, [(behavior, start, end), ...]) | why
 *     A UnityMessageProto from the game: the header status, whether unity_output carries an
 *     rl_initialization_output, rl_output's side-channel bytes, and for each agentInfos entry the
 *     byte range of its ListAgentInfoProto.
 * count(data, start, end, sizes) -> (decision agents, terminal agents) | why
 *     Checks the ListAgentInfoProto in data[start:end]: every agent has at least len(sizes)
 *     observations, observation i with exactly sizes[i] floats (sizes[i] = -1: an observation read
 *     elsewhere, a visual one, whose floats are neither counted nor copied).
 * fill(data, start, end, sizes, mask_size, decision, terminal) -> unsafe
 *     Writes the agents, in message order, into the buffers of `decision` (reward f32, id i32,
 *     group id i32, group reward f32, mask bool[n * mask_size], then observation i f32[n * sizes[i]]
 *     for each i, empty for sizes[i] = -1) and `terminal` (reward, id, group id, group reward, interrupted bool, then the
 *     observations); agents with done set go to `terminal`. A mask is copied only when its length
 *     is mask_size (otherwise its row is all False). Returns the positions, in mlagents' checking
 *     order (observation 0 decision, observation 0 terminal, ..., rewards decision, terminal,
 *     group rewards decision, terminal), of the float arrays whose numpy mean might not be finite.
 * MAX_OBSERVATIONS: the most observations per agent count() and fill() take.
 * write_step(entries, side_channel) -> bytes
 *     The UnityMessageProto mlagents-envs sends for a step (header status 200, unity_input.rl_input
 *     with command STEP), serialized as protobuf's deterministic serialization does. entries:
 *     [(behavior utf-8, agents, continuous f32 rows, continuous size, discrete i32 rows, discrete
 *     size), ...] in the order to write them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "why.h"

#if !PY_LITTLE_ENDIAN
#error "protobuf's fixed32 floats are copied as they are: little-endian hosts only"
#endif

enum { WT_VARINT = 0, WT_LEN = 2, WT_FIXED32 = 5 };  /* the wire types these messages use */

/* Field numbers, from mlagents-envs 0.28's .proto files. */
enum { MSG_HEADER = 1, MSG_OUTPUT = 2 };
enum { HEADER_STATUS = 1, HEADER_MESSAGE = 2 };
enum { OUTPUT_RL = 1, OUTPUT_INIT = 2 };
enum { RL_AGENT_INFOS = 2, RL_SIDE_CHANNEL = 3 };
enum { ENTRY_KEY = 1, ENTRY_VALUE = 2 };
enum { LIST_VALUE = 1 };
enum { AI_REWARD = 7, AI_DONE = 8, AI_MAX_STEP = 9, AI_ID = 10, AI_MASK = 11, AI_OBSERVATIONS = 13,
       AI_GROUP_ID = 14, AI_GROUP_REWARD = 15 };
enum { OBS_SHAPE = 1, OBS_COMPRESSION = 2, OBS_COMPRESSED = 3, OBS_FLOAT_DATA = 4, OBS_MAPPING = 5,
       OBS_DIMENSIONS = 6, OBS_TYPE = 7, OBS_NAME = 8 };
enum { FLOAT_DATA = 1 };
enum { IN_RL = 1, RLIN_ACTIONS = 1, RLIN_SIDE_CHANNEL = 5, ACT_VECTOR = 1, ACT_CONTINUOUS = 6,
       ACT_DISCRETE = 7 };

/* A mean of float32 values whose magnitudes sum to less than this cannot overflow. */
#define SAFE_ABS_SUM 1e30

typedef struct { const uint8_t *p, *end; } Reader;

/* ------------------------------------------------------------------ wire primitives */

static inline int read_varint(Reader *r, uint64_t *value, Why *why)
{
    *value = 0;
    if (r->p < r->end && *r->p < 0x80) {  /* the usual one-byte varint */
        *value = *r->p++;
        return 0;
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) return fail(why, "truncated varint");
        uint8_t byte = *r->p++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) { *value = v; return 0; }
    }
    return fail(why, "varint longer than 10 bytes");
}

static inline int read_key(Reader *r, uint32_t *field, int *wire, Why *why)
{
    uint64_t key;
    *field = 0;
    *wire = 0;
    if (read_varint(r, &key, why)) return -1;
    if (key >> 32 || key >> 3 == 0) return fail(why, "bad field key %llu", (unsigned long long)key);
    *field = (uint32_t)(key >> 3);
    *wire = (int)(key & 7);
    return 0;
}

/* The payload of a length-delimited field, as its own reader. */
static inline int read_len(Reader *r, Reader *payload, Why *why)
{
    uint64_t n;
    payload->p = payload->end = r->p;
    if (read_varint(r, &n, why)) return -1;
    if (n > (uint64_t)(r->end - r->p) || n > INT32_MAX) return fail(why, "truncated field");
    payload->p = r->p;
    payload->end = r->p + n;
    r->p += n;
    return 0;
}

static inline int read_fixed32(Reader *r, uint32_t *value, Why *why)
{
    *value = 0;
    if (r->end - r->p < 4) return fail(why, "truncated fixed32");
    memcpy(value, r->p, 4);
    r->p += 4;
    return 0;
}

/* The field's wire type is the declared one, and a singular field comes once. */
static inline int check_field(const char *message, uint32_t field, int wire, int want, uint32_t *seen, Why *why)
{
    if (wire != want)
        return fail(why, "field %u of %s has wire type %d, not %d", field, message, wire, want);
    if (seen != NULL) {
        if (*seen & (1u << field)) return fail(why, "field %u of %s given twice", field, message);
        *seen |= 1u << field;
    }
    return 0;
}

static int unknown_field(const char *message, uint32_t field, Why *why)
{
    return fail(why, "unknown field %u in %s", field, message);
}

/* Skips a field already checked by the reader that walked it first. */
static int skip_field(Reader *r, int wire, Why *why)
{
    uint64_t v;
    uint32_t f;
    Reader payload;
    switch (wire) {
    case WT_VARINT: return read_varint(r, &v, why);
    case WT_FIXED32: return read_fixed32(r, &f, why);
    case WT_LEN: return read_len(r, &payload, why);
    }
    return fail(why, "wire type %d", wire);
}

/* Packed varints: counts them; writes each as a bool (nonzero = 1) when `bools` is given. */
static int packed_varints(Reader payload, Py_ssize_t *count, uint8_t *bools, Why *why)
{
    uint64_t v;
    while (payload.p < payload.end) {
        if (read_varint(&payload, &v, why)) return -1;
        if (bools != NULL) bools[*count] = v != 0;
        (*count)++;
    }
    return 0;
}

static int utf8_ok(Reader s)
{
    const uint8_t *q;
    for (q = s.p; q < s.end && *q < 0x80; q++)
        ;
    if (q == s.end) return 1;
    PyObject *text = PyUnicode_DecodeUTF8((const char *)s.p, s.end - s.p, "strict");
    if (text == NULL) { PyErr_Clear(); return 0; }
    Py_DECREF(text);
    return 1;
}

/* ------------------------------------------------------------------ AgentInfoProto */

typedef struct { Py_ssize_t n; const Py_ssize_t *v; } Sizes;

typedef struct {
    float reward, group_reward;
    int done, interrupted;
    int32_t id, group_id;
    Py_ssize_t observations, mask_len;
    Py_ssize_t bad_observation, bad_floats;  /* the first observation with the wrong size, or -1 */
} Agent;

static int read_float_data(Reader r, Py_ssize_t *floats, float *dst, Why *why)
{
    while (r.p < r.end) {
        uint32_t field;
        int wire;
        Reader chunk;
        if (read_key(&r, &field, &wire, why)) return -1;
        if (field != FLOAT_DATA) return unknown_field("ObservationProto.FloatData", field, why);
        if (check_field("ObservationProto.FloatData", field, wire, WT_LEN, NULL, why)) return -1;
        if (read_len(&r, &chunk, why)) return -1;
        Py_ssize_t bytes = chunk.end - chunk.p;
        if (bytes % 4) return fail(why, "packed floats of %zd bytes", bytes);
        if (dst != NULL) memcpy(dst + *floats, chunk.p, (size_t)bytes);
        *floats += bytes / 4;
    }
    return 0;
}

/* An ObservationProto: counts its floats, and copies them to `dst` when given. */
static int read_observation(Reader r, Py_ssize_t *floats, float *dst, Why *why)
{
    static const char *name = "ObservationProto";
    uint32_t seen = 0;
    *floats = 0;
    while (r.p < r.end) {
        uint32_t field;
        int wire;
        uint64_t v;
        Reader payload;
        Py_ssize_t ignored = 0;
        if (read_key(&r, &field, &wire, why)) return -1;
        switch (field) {
        case OBS_SHAPE: case OBS_MAPPING: case OBS_DIMENSIONS:
            if (check_field(name, field, wire, WT_LEN, NULL, why) || read_len(&r, &payload, why)
                || packed_varints(payload, &ignored, NULL, why))
                return -1;
            break;
        case OBS_COMPRESSION: case OBS_TYPE:
            if (check_field(name, field, wire, WT_VARINT, &seen, why) || read_varint(&r, &v, why)) return -1;
            break;
        case OBS_COMPRESSED:
            if (check_field(name, field, wire, WT_LEN, &seen, why) || read_len(&r, &payload, why)) return -1;
            break;
        case OBS_NAME:
            if (check_field(name, field, wire, WT_LEN, &seen, why) || read_len(&r, &payload, why)) return -1;
            if (!utf8_ok(payload)) return fail(why, "observation name is not UTF-8");
            break;
        case OBS_FLOAT_DATA:
            if (check_field(name, field, wire, WT_LEN, &seen, why) || read_len(&r, &payload, why)
                || read_float_data(payload, floats, dst, why))
                return -1;
            break;
        default:
            return unknown_field(name, field, why);
        }
    }
    return 0;
}

/* First walk of an AgentInfoProto: its scalars, mask length and observation sizes. */
static int read_agent(Reader r, const Sizes *sizes, Agent *a, Why *why)
{
    static const char *name = "AgentInfoProto";
    uint32_t seen = 0;
    memset(a, 0, sizeof(*a));
    a->bad_observation = -1;
    while (r.p < r.end) {
        uint32_t field, bits = 0;
        int wire;
        uint64_t v;
        Reader payload;
        Py_ssize_t floats;
        if (read_key(&r, &field, &wire, why)) return -1;
        switch (field) {
        case AI_REWARD: case AI_GROUP_REWARD:
            if (check_field(name, field, wire, WT_FIXED32, &seen, why) || read_fixed32(&r, &bits, why)) return -1;
            memcpy(field == AI_REWARD ? &a->reward : &a->group_reward, &bits, 4);
            break;
        case AI_DONE: case AI_MAX_STEP: case AI_ID: case AI_GROUP_ID:
            if (check_field(name, field, wire, WT_VARINT, &seen, why) || read_varint(&r, &v, why)) return -1;
            if (field == AI_DONE) a->done = v != 0;
            else if (field == AI_MAX_STEP) a->interrupted = v != 0;
            else if (field == AI_ID) a->id = (int32_t)(uint32_t)v;
            else a->group_id = (int32_t)(uint32_t)v;
            break;
        case AI_MASK:
            if (check_field(name, field, wire, WT_LEN, NULL, why) || read_len(&r, &payload, why)
                || packed_varints(payload, &a->mask_len, NULL, why))
                return -1;
            break;
        case AI_OBSERVATIONS:
            if (check_field(name, field, wire, WT_LEN, NULL, why) || read_len(&r, &payload, why)
                || read_observation(payload, &floats, NULL, why))
                return -1;
            if (a->observations < sizes->n && sizes->v[a->observations] >= 0 && floats != sizes->v[a->observations]
                && a->bad_observation < 0) {
                a->bad_observation = a->observations;
                a->bad_floats = floats;
            }
            a->observations++;
            break;
        default:
            return unknown_field(name, field, why);
        }
    }
    if (a->observations < sizes->n)
        return fail(why, "agent %d has %zd observations, the behavior spec %zd", a->id, a->observations, sizes->n);
    if (a->bad_observation >= 0)
        return fail(why, "observation %zd of agent %d has %zd values, the behavior spec %zd", a->bad_observation,
                    a->id, a->bad_floats, sizes->v[a->bad_observation]);
    return 0;
}

/* Second walk of an agent read_agent accepted: copies its observations and, when its length is
 * mask_size, its mask. */
static int copy_agent(Reader r, const Sizes *sizes, float **obs_rows, uint8_t *mask_row, Py_ssize_t mask_size,
                      const Agent *a, Why *why)
{
    Py_ssize_t index = 0, mask_written = 0, floats;
    int copy_mask = mask_row != NULL && a->mask_len == mask_size;
    if (mask_row != NULL && !copy_mask) memset(mask_row, 0, (size_t)mask_size);
    while (r.p < r.end) {
        uint32_t field;
        int wire;
        Reader payload;
        if (read_key(&r, &field, &wire, why)) return -1;
        if (field == AI_OBSERVATIONS) {
            if (read_len(&r, &payload, why)) return -1;
            if (index < sizes->n && sizes->v[index] >= 0 && read_observation(payload, &floats, obs_rows[index], why))
                return -1;
            index++;
        } else if (field == AI_MASK && copy_mask) {
            if (read_len(&r, &payload, why) || packed_varints(payload, &mask_written, mask_row, why)) return -1;
        } else if (skip_field(&r, wire, why)) {
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ ListAgentInfoProto */

#define MAX_OBSERVATIONS 256

/* The ListAgentInfoProto at data[start:end] and the observation sizes to hold its agents to. */
static int list_reader(const char *function, const Py_buffer *data, Py_ssize_t start, Py_ssize_t end,
                       PyObject *size_tuple, Py_ssize_t *storage, Reader *list, Sizes *sizes)
{
    if (start < 0 || end < start || end > data->len) {
        PyErr_Format(PyExc_ValueError, "%s(): byte range outside the message", function);
        return -1;
    }
    sizes->n = PyTuple_GET_SIZE(size_tuple);
    if (sizes->n > MAX_OBSERVATIONS) {
        PyErr_Format(PyExc_ValueError, "%s(): at most %d observations per agent", function, MAX_OBSERVATIONS);
        return -1;
    }
    for (Py_ssize_t i = 0; i < sizes->n; i++) {
        storage[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(size_tuple, i));
        if (storage[i] < -1) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s(): observation sizes must be >= 0, or -1", function);
            return -1;
        }
    }
    sizes->v = storage;
    list->p = (const uint8_t *)data->buf + start;
    list->end = (const uint8_t *)data->buf + end;
    return 0;
}

/* The next AgentInfoProto of a ListAgentInfoProto: 1 when there is one, 0 at the end, -1 on
 * something unexpected. */
static int next_agent(Reader *list, Reader *agent, Why *why)
{
    uint32_t field;
    int wire;
    if (list->p >= list->end) return 0;
    if (read_key(list, &field, &wire, why)) return -1;
    if (field != LIST_VALUE) return unknown_field("ListAgentInfoProto", field, why);
    if (check_field("ListAgentInfoProto", field, wire, WT_LEN, NULL, why) || read_len(list, agent, why)) return -1;
    return 1;
}

static PyObject *count(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer data;
    Py_ssize_t start, end, storage[MAX_OBSERVATIONS], decision = 0, terminal = 0;
    PyObject *size_tuple;
    Reader list, agent_bytes;
    Sizes sizes;
    Agent a;
    Why why;
    int more;
    if (!PyArg_ParseTuple(args, "y*nnO!", &data, &start, &end, &PyTuple_Type, &size_tuple)) return NULL;
    if (list_reader("count", &data, start, end, size_tuple, storage, &list, &sizes)) {
        PyBuffer_Release(&data);
        return NULL;
    }
    while ((more = next_agent(&list, &agent_bytes, &why)) == 1) {
        if (read_agent(agent_bytes, &sizes, &a, &why)) { more = -1; break; }
        if (a.done) terminal++; else decision++;
    }
    PyBuffer_Release(&data);
    if (more < 0) return PyUnicode_FromString(why.text);
    return Py_BuildValue("nn", decision, terminal);
}

/* ------------------------------------------------------------------ fill */

enum { OUT_REWARD, OUT_ID, OUT_GROUP_ID, OUT_GROUP_REWARD, OUT_FLAG, OUT_OBS };

/* One side's output buffers (decision or terminal): the fixed ones, then one per observation. */
typedef struct {
    Py_buffer buffers[OUT_OBS + MAX_OBSERVATIONS];
    Py_ssize_t count, rows;
} Side;

static void release_side(Side *side)
{
    for (Py_ssize_t i = 0; i < side->count; i++) PyBuffer_Release(&side->buffers[i]);
    side->count = 0;
}

/* Takes the writable buffers of `list` and checks their sizes; flag_width is the bytes per row of
 * the mask (decision) or interrupted (terminal) buffer. */
static int get_side(PyObject *list, const Sizes *sizes, Py_ssize_t flag_width, Side *side)
{
    if (PyList_GET_SIZE(list) != OUT_OBS + sizes->n) {
        PyErr_Format(PyExc_ValueError, "fill(): expected a list of %zd output arrays", OUT_OBS + sizes->n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < OUT_OBS + sizes->n; i++) {
        if (PyObject_GetBuffer(PyList_GET_ITEM(list, i), &side->buffers[i], PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS))
            return -1;
        side->count++;
    }
    side->rows = side->buffers[OUT_REWARD].len / 4;
    for (Py_ssize_t i = 0; i < OUT_OBS + sizes->n; i++) {
        Py_ssize_t width = i == OUT_FLAG ? flag_width : i < OUT_OBS ? 4 : 4 * Py_MAX(sizes->v[i - OUT_OBS], 0);
        if (side->buffers[i].len != side->rows * width) {
            PyErr_Format(PyExc_ValueError, "fill(): output array %zd has %zd bytes, expected %zd", i,
                         side->buffers[i].len, side->rows * width);
            return -1;
        }
    }
    return 0;
}

static void write_scalars(Side *side, Py_ssize_t row, const Agent *a, int terminal)
{
    ((float *)side->buffers[OUT_REWARD].buf)[row] = a->reward;
    ((int32_t *)side->buffers[OUT_ID].buf)[row] = a->id;
    ((int32_t *)side->buffers[OUT_GROUP_ID].buf)[row] = a->group_id;
    ((float *)side->buffers[OUT_GROUP_REWARD].buf)[row] = a->group_reward;
    if (terminal) ((uint8_t *)side->buffers[OUT_FLAG].buf)[row] = (uint8_t)a->interrupted;
}

/* Whether numpy's float32 mean of these values is certainly finite: their magnitudes sum to far
 * below FLT_MAX, so no partial sum can overflow. A NaN or an infinity makes the sum fail the test. */
static int mean_is_safe(const Py_buffer *b)
{
    const float *x = b->buf;
    double total = 0.0;
    for (Py_ssize_t i = 0; i < b->len / 4; i++) total += fabs((double)x[i]);
    return total < SAFE_ABS_SUM;
}

static PyObject *unsafe_positions(Side *decision, Side *terminal, Py_ssize_t observations)
{
    PyObject *out = PyList_New(0);
    for (Py_ssize_t i = 0; out != NULL && i < 2 * observations + 4; i++) {
        Side *side = i % 2 == 0 ? decision : terminal;
        Py_ssize_t slot = i < 2 * observations ? OUT_OBS + i / 2
                          : i < 2 * observations + 2 ? OUT_REWARD : OUT_GROUP_REWARD;
        if (mean_is_safe(&side->buffers[slot])) continue;
        PyObject *position = PyLong_FromSsize_t(i);
        if (position == NULL || PyList_Append(out, position)) Py_CLEAR(out);
        Py_XDECREF(position);
    }
    return out;
}

/* Walks the list again (checking it as count() did) and writes every agent's row. */
static int fill_rows(Reader list, const Sizes *sizes, Py_ssize_t mask_size, Side *decision, Side *terminal)
{
    float *rows[MAX_OBSERVATIONS];
    Py_ssize_t d = 0, t = 0;
    Reader agent_bytes;
    Agent a;
    Why why;
    int more;
    while ((more = next_agent(&list, &agent_bytes, &why)) == 1) {
        if (read_agent(agent_bytes, sizes, &a, &why)) { more = -1; break; }
        Side *side = a.done ? terminal : decision;
        Py_ssize_t row = a.done ? t++ : d++;
        if (row >= side->rows) break;
        uint8_t *mask_row = a.done || mask_size == 0 ? NULL
                            : (uint8_t *)decision->buffers[OUT_FLAG].buf + row * mask_size;
        for (Py_ssize_t i = 0; i < sizes->n; i++)
            rows[i] = (float *)side->buffers[OUT_OBS + i].buf + row * Py_MAX(sizes->v[i], 0);
        write_scalars(side, row, &a, a.done);
        if (copy_agent(agent_bytes, sizes, rows, mask_row, mask_size, &a, &why)) { more = -1; break; }
    }
    if (more < 0) {
        PyErr_Format(PyExc_ValueError, "fill(): the agents do not read as count() read them: %s", why.text);
        return -1;
    }
    if (more == 1 || d != decision->rows || t != terminal->rows) {
        PyErr_SetString(PyExc_ValueError, "fill(): the output arrays do not hold the agents count() found");
        return -1;
    }
    return 0;
}

static PyObject *fill(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer data;
    Py_ssize_t start, end, storage[MAX_OBSERVATIONS], mask_size;
    PyObject *size_tuple, *decision_list, *terminal_list, *result = NULL;
    Reader list;
    Sizes sizes;
    if (!PyArg_ParseTuple(args, "y*nnO!nO!O!", &data, &start, &end, &PyTuple_Type, &size_tuple, &mask_size,
                          &PyList_Type, &decision_list, &PyList_Type, &terminal_list))
        return NULL;
    Side *decision = PyMem_Calloc(1, sizeof(Side)), *terminal = PyMem_Calloc(1, sizeof(Side));
    if (decision == NULL || terminal == NULL) {
        PyErr_NoMemory();
    } else if (mask_size < 0) {
        PyErr_SetString(PyExc_ValueError, "fill(): mask_size must be >= 0");
    } else if (!list_reader("fill", &data, start, end, size_tuple, storage, &list, &sizes)
               && !get_side(decision_list, &sizes, mask_size, decision)
               && !get_side(terminal_list, &sizes, 1, terminal)
               && !fill_rows(list, &sizes, mask_size, decision, terminal)) {
        result = unsafe_positions(decision, terminal, sizes.n);
    }
    if (decision != NULL) release_side(decision);
    if (terminal != NULL) release_side(terminal);
    PyMem_Free(decision);
    PyMem_Free(terminal);
    PyBuffer_Release(&data);
    return result;
}

/* ------------------------------------------------------------------ index */

typedef struct {
    int32_t status;
    int has_initialization;
    PyObject *side_channel;  /* bytes, or NULL when absent */
    PyObject *entries;       /* [(behavior, start, end), ...] */
    PyObject *names;         /* behaviors seen, to refuse one given twice */
} Index;

static int read_entry(Reader r, const uint8_t *base, Index *index, Why *why)
{
    static const char *name = "UnityRLOutputProto.AgentInfosEntry";
    uint32_t seen = 0;
    Reader key = {r.p, r.p}, value = {r.p, r.p};
    while (r.p < r.end) {
        uint32_t field;
        int wire;
        if (read_key(&r, &field, &wire, why)) return -1;
        if (field != ENTRY_KEY && field != ENTRY_VALUE) return unknown_field(name, field, why);
        if (check_field(name, field, wire, WT_LEN, &seen, why)
            || read_len(&r, field == ENTRY_KEY ? &key : &value, why))
            return -1;
    }
    PyObject *behavior = PyUnicode_DecodeUTF8((const char *)key.p, key.end - key.p, "strict");
    if (behavior == NULL) {
        PyErr_Clear();
        return fail(why, "a behavior name is not UTF-8");
    }
    int known = PySet_Contains(index->names, behavior);
    if (known != 0) {
        Py_DECREF(behavior);
        if (known < 0) return -2;
        return fail(why, "a behavior's agents given twice");
    }
    PyObject *entry = Py_BuildValue("(Nnn)", behavior, (Py_ssize_t)(value.p - base), (Py_ssize_t)(value.end - base));
    if (entry == NULL) return -2;
    int failed = PySet_Add(index->names, PyTuple_GET_ITEM(entry, 0)) || PyList_Append(index->entries, entry);
    Py_DECREF(entry);
    return failed ? -2 : 0;
}

static int read_rl_output(Reader r, const uint8_t *base, Index *index, Why *why)
{
    static const char *name = "UnityRLOutputProto";
    uint32_t seen = 0;
    while (r.p < r.end) {
        uint32_t field;
        int wire, failed;
        Reader payload;
        if (read_key(&r, &field, &wire, why)) return -1;
        if (field == RL_AGENT_INFOS) {
            if (check_field(name, field, wire, WT_LEN, NULL, why) || read_len(&r, &payload, why)) return -1;
            if ((failed = read_entry(payload, base, index, why))) return failed;
        } else if (field == RL_SIDE_CHANNEL) {
            if (check_field(name, field, wire, WT_LEN, &seen, why) || read_len(&r, &payload, why)) return -1;
            index->side_channel = PyBytes_FromStringAndSize((const char *)payload.p, payload.end - payload.p);
            if (index->side_channel == NULL) return -2;
        } else {
            return unknown_field(name, field, why);
        }
    }
    return 0;
}

static int read_output(Reader r, const uint8_t *base, Index *index, Why *why)
{
    static const char *name = "UnityOutputProto";
    uint32_t seen = 0;
    while (r.p < r.end) {
        uint32_t field;
        int wire;
        Reader payload;
        if (read_key(&r, &field, &wire, why)) return -1;
        if (field != OUTPUT_RL && field != OUTPUT_INIT) return unknown_field(name, field, why);
        if (check_field(name, field, wire, WT_LEN, &seen, why) || read_len(&r, &payload, why)) return -1;
        if (field == OUTPUT_INIT) index->has_initialization = 1;  /* read by protobuf in bulk.py */
        else {
            int failed = read_rl_output(payload, base, index, why);
            if (failed) return failed;
        }
    }
    return 0;
}

static int read_header(Reader r, Index *index, Why *why)
{
    static const char *name = "HeaderProto";
    uint32_t seen = 0;
    while (r.p < r.end) {
        uint32_t field;
        int wire;
        uint64_t v;
        Reader payload;
        if (read_key(&r, &field, &wire, why)) return -1;
        if (field == HEADER_STATUS) {
            if (check_field(name, field, wire, WT_VARINT, &seen, why) || read_varint(&r, &v, why)) return -1;
            index->status = (int32_t)(uint32_t)v;
        } else if (field == HEADER_MESSAGE) {
            if (check_field(name, field, wire, WT_LEN, &seen, why) || read_len(&r, &payload, why)) return -1;
            if (!utf8_ok(payload)) return fail(why, "the header message is not UTF-8");
        } else {
            return unknown_field(name, field, why);
        }
    }
    return 0;
}

/* Returns 0, -1 with `why` for a message to leave to protobuf, -2 with a Python error set. */
static int read_message(Reader r, Index *index, Why *why)
{
    static const char *name = "UnityMessageProto";
    const uint8_t *base = r.p;
    uint32_t seen = 0;
    while (r.p < r.end) {
        uint32_t field;
        int wire, failed;
        Reader payload;
        if (read_key(&r, &field, &wire, why)) return -1;
        if (field != MSG_HEADER && field != MSG_OUTPUT) return unknown_field(name, field, why);
        if (check_field(name, field, wire, WT_LEN, &seen, why) || read_len(&r, &payload, why)) return -1;
        failed = field == MSG_HEADER ? read_header(payload, index, why) : read_output(payload, base, index, why);
        if (failed) return failed;
    }
    return 0;
}

static PyObject *index_message(PyObject *self, PyObject *arg)
{
    (void)self;
    Py_buffer data;
    Index index = {0, 0, NULL, PyList_New(0), PySet_New(NULL)};
    PyObject *result = NULL;
    Why why;
    int failed = -2;
    if (index.entries != NULL && index.names != NULL && !PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE)) {
        Reader r = {data.buf, (const uint8_t *)data.buf + data.len};
        failed = read_message(r, &index, &why);
        PyBuffer_Release(&data);
    }
    if (failed == -1) {
        result = PyUnicode_FromString(why.text);
    } else if (failed == 0) {
        if (index.side_channel == NULL) index.side_channel = PyBytes_FromStringAndSize(NULL, 0);
        if (index.side_channel != NULL)
            result = Py_BuildValue("(iOOO)", index.status, index.has_initialization ? Py_True : Py_False,
                                   index.side_channel, index.entries);
    }
    Py_XDECREF(index.side_channel);
    Py_XDECREF(index.entries);
    Py_XDECREF(index.names);
    return result;
}

/* ------------------------------------------------------------------ write_step */

static size_t varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) { v >>= 7; n++; }
    return n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) { *p++ = (uint8_t)(v | 0x80); v >>= 7; }
    *p++ = (uint8_t)v;
    return p;
}

/* A length-delimited field's key and length; the caller writes the payload. */
static uint8_t *put_len(uint8_t *p, uint32_t field, size_t len)
{
    *p++ = (uint8_t)(field << 3 | WT_LEN);
    return put_varint(p, len);
}

static size_t len_field_size(size_t len) { return 1 + varint_size(len) + len; }

/* Discrete actions are int32 fields: negative values go on the wire sign-extended to 64 bits. */
static uint64_t int32_varint(int32_t v) { return (uint64_t)(int64_t)v; }

/* protobuf stores a float field's value through a C double: a signaling NaN comes back quiet. */
static uint32_t float_bits(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, 4);
    if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu)) bits |= 0x00400000u;
    return bits;
}

typedef struct {
    const char *key;
    Py_ssize_t key_len, agents, c, d;
    Py_buffer continuous, discrete;
    size_t list_size;
} Entry;

static size_t discrete_bytes(const int32_t *row, Py_ssize_t d)
{
    size_t n = 0;
    for (Py_ssize_t j = 0; j < d; j++) n += varint_size(int32_varint(row[j]));
    return n;
}

/* AgentActionProto: vector_actions_deprecated (continuous then discrete, as floats), then
 * continuous_actions, then discrete_actions; empty repeated fields are left out. */
static size_t action_size(const Entry *e, const int32_t *discrete_row)
{
    size_t size = 0;
    if (e->c + e->d > 0) size += len_field_size(4 * (size_t)(e->c + e->d));
    if (e->c > 0) size += len_field_size(4 * (size_t)e->c);
    if (e->d > 0) size += len_field_size(discrete_bytes(discrete_row, e->d));
    return size;
}

static uint8_t *put_floats(uint8_t *p, const float *x, Py_ssize_t n)
{
    for (Py_ssize_t j = 0; j < n; j++, p += 4) {
        uint32_t bits = float_bits(x[j]);
        memcpy(p, &bits, 4);
    }
    return p;
}

static uint8_t *put_action(uint8_t *p, const Entry *e, const float *c_row, const int32_t *d_row)
{
    if (e->c + e->d > 0) {
        p = put_len(p, ACT_VECTOR, 4 * (size_t)(e->c + e->d));
        p = put_floats(p, c_row, e->c);
        for (Py_ssize_t j = 0; j < e->d; j++, p += 4) {
            float x = (float)d_row[j];
            memcpy(p, &x, 4);
        }
    }
    if (e->c > 0) p = put_floats(put_len(p, ACT_CONTINUOUS, 4 * (size_t)e->c), c_row, e->c);
    if (e->d > 0) {
        p = put_len(p, ACT_DISCRETE, discrete_bytes(d_row, e->d));
        for (Py_ssize_t j = 0; j < e->d; j++) p = put_varint(p, int32_varint(d_row[j]));
    }
    return p;
}

static int get_entry(PyObject *item, Entry *e)
{
    if (!PyArg_ParseTuple(item, "s#ny*ny*n", &e->key, &e->key_len, &e->agents, &e->continuous, &e->c,
                          &e->discrete, &e->d))
        return -1;
    if (e->agents < 0 || e->c < 0 || e->d < 0 || e->continuous.len < 4 * e->agents * e->c
        || e->discrete.len < 4 * e->agents * e->d) {
        PyBuffer_Release(&e->continuous);
        PyBuffer_Release(&e->discrete);
        PyErr_SetString(PyExc_ValueError, "write_step(): action arrays smaller than agents x action size");
        return -1;
    }
    e->list_size = 0;
    for (Py_ssize_t i = 0; i < e->agents; i++)
        e->list_size += len_field_size(action_size(e, (const int32_t *)e->discrete.buf + i * e->d));
    return 0;
}

static PyObject *write_step(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *entry_list, *result = NULL;
    Py_buffer side_channel;
    if (!PyArg_ParseTuple(args, "O!y*", &PyList_Type, &entry_list, &side_channel)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(entry_list), ready = 0;
    Entry *entries = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof(Entry));
    if (entries == NULL) { PyErr_NoMemory(); goto done; }
    size_t rl_input = side_channel.len > 0 ? len_field_size((size_t)side_channel.len) : 0;
    for (; ready < n; ready++) {
        if (get_entry(PyList_GET_ITEM(entry_list, ready), &entries[ready])) goto done;
        const Entry *e = &entries[ready];
        rl_input += len_field_size(len_field_size((size_t)e->key_len) + len_field_size(e->list_size));
    }
    size_t unity_input = len_field_size(rl_input);
    const uint8_t header[] = {MSG_HEADER << 3 | WT_LEN, 3, HEADER_STATUS << 3 | WT_VARINT, 0xc8, 0x01};
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(sizeof(header) + len_field_size(unity_input)));
    if (result == NULL) goto done;
    uint8_t *p = (uint8_t *)PyBytes_AS_STRING(result);
    memcpy(p, header, sizeof(header));
    p = put_len(p + sizeof(header), 3, unity_input);  /* UnityMessageProto.unity_input */
    p = put_len(p, IN_RL, rl_input);
    for (Py_ssize_t k = 0; k < n; k++) {
        const Entry *e = &entries[k];
        p = put_len(p, RLIN_ACTIONS, len_field_size((size_t)e->key_len) + len_field_size(e->list_size));
        p = put_len(p, ENTRY_KEY, (size_t)e->key_len);
        memcpy(p, e->key, (size_t)e->key_len);
        p = put_len(p + e->key_len, ENTRY_VALUE, e->list_size);
        for (Py_ssize_t i = 0; i < e->agents; i++) {
            const float *c_row = (const float *)e->continuous.buf + i * e->c;
            const int32_t *d_row = (const int32_t *)e->discrete.buf + i * e->d;
            p = put_action(put_len(p, LIST_VALUE, action_size(e, d_row)), e, c_row, d_row);
        }
    }
    if (side_channel.len > 0) {
        p = put_len(p, RLIN_SIDE_CHANNEL, (size_t)side_channel.len);
        memcpy(p, side_channel.buf, (size_t)side_channel.len);
    }
done:
    for (Py_ssize_t k = 0; entries != NULL && k < ready; k++) {
        PyBuffer_Release(&entries[k].continuous);
        PyBuffer_Release(&entries[k].discrete);
    }
    PyMem_Free(entries);
    PyBuffer_Release(&side_channel);
    return result;
}

static PyMethodDef methods[] = {
    {"index", index_message, METH_O, "A step reply's status, side channel and agent-list ranges (see the source)."},
    {"count", count, METH_VARARGS, "Decision and terminal agents of an agent list, or why not (see the source)."},
    {"fill", fill, METH_VARARGS, "Writes an agent list into arrays (see the source)."},
    {"write_step", write_step, METH_VARARGS, "The step input message's bytes (see the source)."},
    {NULL, NULL, 0, NULL},
};

static int wire_exec(PyObject *m)
{
    return PyModule_AddIntConstant(m, "MAX_OBSERVATIONS", MAX_OBSERVATIONS);
}

/* A function in CPython's slot table, whose field is a void *: ISO C converts a function pointer to
 * an integer, not to a void * (CPython converts it back). */
#define SLOT_FN(f) ((void *)(uintptr_t)(f))

static PyModuleDef_Slot wire_slots[] = {
    {Py_mod_exec, SLOT_FN(wire_exec)},
    {0, NULL},
};

static struct PyModuleDef wire_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "neatpar.envs.unity._wire",
    .m_doc = "ML-Agents step messages read and written in bulk (C).",
    .m_size = 0,
    .m_methods = methods,
    .m_slots = wire_slots,
};

PyMODINIT_FUNC PyInit__wire(void) { return PyModuleDef_Init(&wire_def); }
