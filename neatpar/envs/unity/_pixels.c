/*
 * Visual observations as ML-Agents' sensors send them, decoded for neatpar/envs/unity/pixels.py:
 * PNG images (a camera's or a render texture's: one RGB PNG; a grid sensor's or a stacked sensor's:
 * several PNGs one after the other) turned into the float32 array that mlagents-envs 0.28's
 * rpc_utils.process_pixels makes of them through Pillow, value for value.
 *
 * Only the PNG that Unity writes (Texture2D.EncodeToPNG) is read here: 8-bit RGB or RGBA, not
 * interlaced, IHDR first, then at most the ancillary chunks gAMA, cHRM, sRGB and pHYs (their
 * checksums checked, as Pillow checks every chunk before the image data), consecutive IDAT chunks,
 * then IEND. Anything else, and anything Pillow might read differently or refuse (a bad checksum,
 * a zlib error, too little image data, an unknown filter type, an image over Pillow's pixel limit,
 * images that do not fit the observation's shape or its channel mapping), is answered with a string
 * saying why, and pixels.py has mlagents-envs' own code read that observation: nothing is guessed.
 *
 * What process_pixels does, and how it is reproduced here:
 * - each PNG becomes its pixels / 255 in float32 (numpy's float32 division: the table `lut`);
 * - the next PNG is the next PNG signature at or after where Pillow stopped reading, which is the
 *   end of the IEND chunk's header;
 * - with a channel mapping: the PNGs' channels in order; output channel j is the mean of the
 *   channels mapped to j (-1: dropped), summed one after the other as numpy's mean over the first
 *   axis sums them (pairwise, as numpy sums a contiguous run, for a 1 x 1 image), then divided;
 * - without one: for one channel, the mean of the first PNG's channels (summed in order); for more,
 *   the first `channels` channels of the PNGs side by side.
 *
 * decode(data, height, width, channels, mapping, out, inflate, max_pixels) -> None | why
 *   data: the observation's compressed_data; (height, width, channels): its shape; mapping: its
 *   compressed_channel_mapping as a tuple (empty: none); out: a writable C-contiguous buffer of
 *   height * width * channels float32; inflate: zlib.decompress or a drop-in replacement, called as
 *   inflate(data, 15, size); max_pixels: PIL.Image.MAX_IMAGE_PIXELS, or -1 for None.
 * lut() -> bytes: the 256 float32 values a pixel byte becomes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "why.h"

#define MAX_IMAGES 256          /* PNGs per observation read here (a stack of 256 frames) */
#define MAX_CHANNELS (4 * MAX_IMAGES)  /* channels of the PNGs together, and of a mapping */
#define MAX_PIXELS (1ull << 28)  /* pixels per PNG read here */
#define PAIRWISE_BLOCK 128      /* numpy's PW_BLOCKSIZE */

static const uint8_t SIGNATURE[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
static float lut[256];
static uint32_t crc_table[256];


static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

/* ------------------------------------------------------------------ PNG structure */

typedef struct {
    uint32_t width, height;
    int bpp;                     /* bytes per pixel: 3 (RGB) or 4 (RGBA) */
    Py_ssize_t idat_start;       /* offset of the first IDAT chunk */
    int idat_chunks;
    Py_ssize_t idat_bytes;       /* their data, together */
    Py_ssize_t resume;           /* where Pillow stops reading: the end of IEND's header */
    uint8_t *pixels;             /* height * width * bpp, once unfiltered */
} Png;

typedef struct { const char *type; uint32_t min_length; } Ancillary;

/* The chunks Pillow reads before the image data without any effect on the pixels. */
static const Ancillary ANCILLARY[] = {{"gAMA", 4}, {"cHRM", 32}, {"sRGB", 1}, {"pHYs", 9}};

static int chunk_is(const uint8_t *chunk, const char *type) { return memcmp(chunk + 4, type, 4) == 0; }

/* A chunk's type as text for a message: its four bytes, any that is not a letter shown as '?'. */
static const char *chunk_name(const uint8_t *chunk, char name[5])
{
    for (int i = 0; i < 4; i++) {
        uint8_t c = chunk[4 + i];
        name[i] = (char)(((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ? c : '?');
    }
    name[4] = '\0';
    return name;
}

/* The chunk at `pos`: its length, and whether it lies inside the data with its checksum. */
static int chunk_at(const uint8_t *data, Py_ssize_t len, Py_ssize_t pos, uint32_t *length, Why *why)
{
    if (len - pos < 12) return fail(why, "a chunk runs past the end of the data");
    *length = be32(data + pos);
    if (*length > (uint32_t)INT32_MAX || (Py_ssize_t)*length > len - pos - 12)
        return fail(why, "a chunk runs past the end of the data");
    return 0;
}

static int checksum_ok(const uint8_t *chunk, uint32_t length)
{
    return crc32_of(chunk + 4, (size_t)length + 4) == be32(chunk + 8 + length);
}

static int read_header(const uint8_t *ihdr, uint32_t length, long long max_pixels, Png *png, Why *why)
{
    if (!chunk_is(ihdr, "IHDR") || length != 13) return fail(why, "the PNG does not start with a 13-byte IHDR");
    if (!checksum_ok(ihdr, length)) return fail(why, "the IHDR checksum is wrong");
    const uint8_t *h = ihdr + 8;
    png->width = be32(h);
    png->height = be32(h + 4);
    if (png->width == 0 || png->height == 0 || (unsigned long long)png->width * png->height > MAX_PIXELS)
        return fail(why, "image size %ux%u", png->width, png->height);
    if (max_pixels >= 0 && (long long)png->width * png->height > max_pixels)
        return fail(why, "%ux%u pixels is over Pillow's limit", png->width, png->height);
    if (h[8] != 8 || (h[9] != 2 && h[9] != 6))
        return fail(why, "bit depth %d, colour type %d (read here: 8-bit RGB or RGBA)", h[8], h[9]);
    if (h[10] != 0 || h[11] != 0 || h[12] != 0)
        return fail(why, "compression %d, filter method %d, interlace %d", h[10], h[11], h[12]);
    png->bpp = h[9] == 2 ? 3 : 4;
    return 0;
}

static int known_ancillary(const uint8_t *chunk, uint32_t length)
{
    for (size_t i = 0; i < sizeof(ANCILLARY) / sizeof(ANCILLARY[0]); i++)
        if (chunk_is(chunk, ANCILLARY[i].type)) return length >= ANCILLARY[i].min_length;
    return 0;
}

/* Walks the PNG that starts at `start`: header, image data chunks, end. */
static int scan_png(const uint8_t *data, Py_ssize_t len, Py_ssize_t start, long long max_pixels, Png *png, Why *why)
{
    uint32_t length;
    char name[5];
    memset(png, 0, sizeof(*png));
    if (len - start < 8 || memcmp(data + start, SIGNATURE, 8) != 0) return fail(why, "not a PNG signature");
    Py_ssize_t pos = start + 8;
    if (chunk_at(data, len, pos, &length, why) || read_header(data + pos, length, max_pixels, png, why)) return -1;
    pos += 12 + (Py_ssize_t)length;
    for (;;) {
        if (chunk_at(data, len, pos, &length, why)) return -1;
        if (chunk_is(data + pos, "IDAT")) break;
        if (!known_ancillary(data + pos, length) || !checksum_ok(data + pos, length))
            return fail(why, "chunk %s before the image data", chunk_name(data + pos, name));
        pos += 12 + (Py_ssize_t)length;
    }
    png->idat_start = pos;
    while (chunk_is(data + pos, "IDAT")) {
        png->idat_chunks++;
        png->idat_bytes += (Py_ssize_t)length;
        pos += 12 + (Py_ssize_t)length;
        if (chunk_at(data, len, pos, &length, why)) return -1;
    }
    if (!chunk_is(data + pos, "IEND") || length != 0)
        return fail(why, "chunk %s after the image data", chunk_name(data + pos, name));
    png->resume = pos + 8;
    return 0;
}

/* The next PNG signature at or after `from`, or -1: bytes.index(PNG_HEADER, from). */
static Py_ssize_t find_signature(const uint8_t *data, Py_ssize_t len, Py_ssize_t from)
{
    while (len - from >= 8) {
        const uint8_t *hit = memchr(data + from, SIGNATURE[0], (size_t)(len - from - 7));
        if (hit == NULL) return -1;
        if (memcmp(hit, SIGNATURE, 8) == 0) return hit - data;
        from = hit - data + 1;
    }
    return -1;
}

/* ------------------------------------------------------------------ image data */

/* One filtered row undone, pixel by pixel with `bpp` (3 or 4, a constant where this is inlined)
 * channels side by side: the left and upper-left bytes stay in registers, and Paeth's choice is made
 * without branches (the data decides it, so a branch would be mispredicted half the time). */
static inline int unfilter_row(int filter, const uint8_t *src, const uint8_t *up, uint8_t *dst, size_t width,
                               const int bpp)
{
    int a[4] = {0, 0, 0, 0}, c[4] = {0, 0, 0, 0};
    const size_t stride = width * (size_t)bpp;
    switch (filter) {
    case 0:
        memcpy(dst, src, stride);
        return 0;
    case 2:
        for (size_t i = 0; i < stride; i++) dst[i] = (uint8_t)(src[i] + up[i]);
        return 0;
    case 1:
        for (size_t x = 0; x < stride; x += (size_t)bpp)
            for (int k = 0; k < bpp; k++) dst[x + k] = (uint8_t)(a[k] = (src[x + k] + a[k]) & 0xff);
        return 0;
    case 3:
        for (size_t x = 0; x < stride; x += (size_t)bpp)
            for (int k = 0; k < bpp; k++) dst[x + k] = (uint8_t)(a[k] = (src[x + k] + ((a[k] + up[x + k]) >> 1)) & 0xff);
        return 0;
    case 4:
        for (size_t x = 0; x < stride; x += (size_t)bpp) {
            for (int k = 0; k < bpp; k++) {
                /* PNG's predictor: p = a + b - c; the one of a, b, c nearest p, ties to a then b. */
                int b = up[x + k];
                int p = b - c[k], q = a[k] - c[k];
                int pa = p < 0 ? -p : p, pb = q < 0 ? -q : q, pc = p + q < 0 ? -(p + q) : p + q;
                int use_a = (pa <= pb) & (pa <= pc), use_b = pb <= pc;
                int b_or_c = c[k] ^ ((b ^ c[k]) & -use_b);
                int predicted = b_or_c ^ ((a[k] ^ b_or_c) & -use_a);
                dst[x + k] = (uint8_t)(a[k] = (src[x + k] + predicted) & 0xff);
                c[k] = b;
            }
        }
        return 0;
    }
    return -1;
}

/* PNG's five filter types undone, row by row, into png->pixels. */
static int unfilter(const uint8_t *raw, Png *png, const uint8_t *zero_row, Why *why)
{
    const size_t stride = (size_t)png->width * (size_t)png->bpp;
    for (uint32_t y = 0; y < png->height; y++) {
        const uint8_t *src = raw + (size_t)y * (stride + 1);
        uint8_t *dst = png->pixels + (size_t)y * stride;
        const uint8_t *up = y == 0 ? zero_row : dst - stride;
        int failed = png->bpp == 3 ? unfilter_row(src[0], src + 1, up, dst, png->width, 3)
                                   : unfilter_row(src[0], src + 1, up, dst, png->width, 4);
        if (failed) return fail(why, "row %u has filter type %d", y, src[0]);
    }
    return 0;
}

/* The image data of the PNG, as one buffer object for `inflate`: the IDAT chunk's bytes in place,
 * or the chunks' data joined. */
static PyObject *image_data(const uint8_t *data, const Png *png)
{
    const uint8_t *chunk = data + png->idat_start;
    if (png->idat_chunks == 1)
        return PyMemoryView_FromMemory((char *)(chunk + 8), png->idat_bytes, PyBUF_READ);
    PyObject *joined = PyBytes_FromStringAndSize(NULL, png->idat_bytes);
    if (joined == NULL) return NULL;
    uint8_t *dst = (uint8_t *)PyBytes_AS_STRING(joined);
    for (int k = 0; k < png->idat_chunks; k++) {
        uint32_t length = be32(chunk);
        memcpy(dst, chunk + 8, length);
        dst += length;
        chunk += 12 + length;
    }
    return joined;
}

/* Inflates and unfilters the PNG's pixels. Returns 0, -1 with `why` to fall back, -2 with a Python
 * error set (an error of the inflater itself falls back: Pillow would report it its own way). */
static int load_pixels(const uint8_t *data, Png *png, PyObject *inflate, Why *why)
{
    const size_t stride = (size_t)png->width * (size_t)png->bpp;
    const size_t expected = (stride + 1) * png->height;
    PyObject *compressed = image_data(data, png);
    if (compressed == NULL) return -2;
    PyObject *raw = PyObject_CallFunction(inflate, "Oin", compressed, 15, (Py_ssize_t)expected);
    Py_DECREF(compressed);
    if (raw == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception) || PyErr_ExceptionMatches(PyExc_MemoryError)) return -2;
        PyErr_Clear();
        return fail(why, "the image data does not inflate");
    }
    int result = 0;
    uint8_t *zero_row = NULL;
    if (!PyBytes_Check(raw)) {
        PyErr_SetString(PyExc_TypeError, "inflate must return bytes");
        result = -2;
    } else if ((size_t)PyBytes_GET_SIZE(raw) < expected) {
        result = fail(why, "%zd bytes of image data, %zu needed", PyBytes_GET_SIZE(raw), expected);
    } else if ((png->pixels = PyMem_Malloc(stride * png->height)) == NULL
               || (zero_row = PyMem_Calloc(stride, 1)) == NULL) {
        PyErr_NoMemory();
        result = -2;
    } else {
        result = unfilter((const uint8_t *)PyBytes_AS_STRING(raw), png, zero_row, why);
    }
    PyMem_Free(zero_row);
    Py_DECREF(raw);
    return result;
}

/* ------------------------------------------------------------------ channels to floats */

typedef struct { int image, channel; } Source;

/* numpy's pairwise sum of n float32 values (its float add reduction over a contiguous run). */
static float pairwise_sum(const float *a, Py_ssize_t n)
{
    if (n < 8) {
        float res = 0.0f;
        for (Py_ssize_t i = 0; i < n; i++) res = res + a[i];
        return res;
    }
    if (n <= PAIRWISE_BLOCK) {
        float r[8];
        Py_ssize_t i;
        for (int j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] = r[j] + a[i + j];
        float left = (r[0] + r[1]) + (r[2] + r[3]);
        float right = (r[4] + r[5]) + (r[6] + r[7]);
        float res = left + right;
        for (; i < n; i++) res = res + a[i];
        return res;
    }
    Py_ssize_t n2 = n / 2;
    n2 -= n2 % 8;
    float first = pairwise_sum(a, n2);
    float second = pairwise_sum(a + n2, n - n2);
    return first + second;
}

/* One source channel of the PNGs: where its first pixel's byte is, and the bytes from a pixel to the next. */
typedef struct { const uint8_t *first; int step; } Channel;

static Channel channel_of(const Png *pngs, Source src)
{
    Channel c = {pngs[src.image].pixels + src.channel, pngs[src.image].bpp};
    return c;
}

/* The first `channels` channels of the PNGs side by side. */
static void copy_channels(const Png *pngs, const Source *src, int channels, size_t pixels, float *out)
{
    if (src[0].image == 0 && pngs[0].bpp == channels) {  /* the usual camera: one RGB PNG */
        const uint8_t *p = pngs[0].pixels;
        for (size_t i = 0; i < pixels * (size_t)channels; i++) out[i] = lut[p[i]];
        return;
    }
    for (int c = 0; c < channels; c++) {
        Channel from = channel_of(pngs, src[c]);
        for (size_t i = 0; i < pixels; i++) out[i * (size_t)channels + (size_t)c] = lut[from.first[i * (size_t)from.step]];
    }
}

/* One channel: the mean of the first PNG's channels (numpy's mean over the last axis). */
static void gray(const Png *png, size_t pixels, float *out)
{
    const uint8_t *p = png->pixels;
    const float count = (float)png->bpp;
    for (size_t i = 0; i < pixels; i++, p += png->bpp) {
        float sum = lut[p[0]];
        for (int c = 1; c < png->bpp; c++) sum = sum + lut[p[c]];
        out[i] = sum / count;
    }
}

/* Output channel j: the mean of the channels mapped to j, in their order (numpy's mean over the
 * first axis of the stacked channels: each pixel's values added one after the other, or pairwise
 * for a 1 x 1 image). `sums` holds a float per pixel. */
static void mapped(const Png *pngs, const Source *src, const int *mapping, int total, int channels, size_t pixels,
                   float *sums, float *out)
{
    for (int j = 0; j < channels; j++) {
        int count = 0;
        for (int c = 0; c < total; c++) {
            if (mapping[c] != j) continue;
            Channel from = channel_of(pngs, src[c]);
            if (count == 0)
                for (size_t i = 0; i < pixels; i++) sums[i] = lut[from.first[i * (size_t)from.step]];
            else
                for (size_t i = 0; i < pixels; i++) sums[i] = sums[i] + lut[from.first[i * (size_t)from.step]];
            count++;
        }
        if (pixels == 1) {
            float values[MAX_CHANNELS];
            int k = 0;
            for (int c = 0; c < total; c++)
                if (mapping[c] == j) values[k++] = lut[*channel_of(pngs, src[c]).first];
            sums[0] = pairwise_sum(values, count);
        }
        const float divisor = (float)count;
        for (size_t i = 0; i < pixels; i++) out[i * (size_t)channels + (size_t)j] = sums[i] / divisor;
    }
}

/* The mapping as process_pixels accepts it: one entry per channel, each -1 or an output channel,
 * the outputs used being exactly 0..max, and max + 1 the observation's channels. */
static int read_mapping(PyObject *tuple, int total, int channels, int *mapping, Why *why)
{
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    if (n != total) return fail(why, "a mapping of %zd channels for %d", n, total);
    int used[MAX_CHANNELS] = {0}, top = -1;
    for (Py_ssize_t c = 0; c < n; c++) {
        long m = PyLong_AsLong(PyTuple_GET_ITEM(tuple, c));
        if (m == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return fail(why, "a mapping entry out of range");
        }
        if (m < -1 || m >= total) return fail(why, "mapping entry %ld", m);
        mapping[c] = (int)m;
        if (m >= 0) used[m] = 1;
        if (m > top) top = (int)m;
    }
    for (int j = 0; j <= top; j++)
        if (!used[j]) return fail(why, "mapping leaves out channel %d", j);
    if (top + 1 != channels) return fail(why, "mapping to %d channels for %d", top + 1, channels);
    return 0;
}

/* ------------------------------------------------------------------ decode */

typedef struct {
    const uint8_t *data;
    Py_ssize_t len;
    long long height, width, channels, max_pixels;
    PyObject *mapping, *inflate;
    float *out;
} Request;

/* Every PNG of the observation, as process_pixels finds them. */
static int read_pngs(const Request *r, Png *pngs, int *count, Why *why)
{
    Py_ssize_t pos = 0;
    *count = 0;
    do {
        if (*count == MAX_IMAGES) return fail(why, "more than %d PNGs", MAX_IMAGES);
        Png *png = &pngs[(*count)++];
        int failed = scan_png(r->data, r->len, pos, r->max_pixels, png, why);
        if (!failed) failed = load_pixels(r->data, png, r->inflate, why);
        if (failed) return failed;
        pos = find_signature(r->data, r->len, png->resume);
    } while (pos >= 0);
    return 0;
}

static int combine(const Request *r, Png *pngs, int count, Why *why)
{
    Source src[MAX_CHANNELS];
    int mapping[MAX_CHANNELS], total = 0;
    const int gray_path = r->channels == 1 && PyTuple_GET_SIZE(r->mapping) == 0;
    for (int k = 0; k < count; k++) {
        if (k == 0 || !gray_path) {
            if (pngs[k].height != r->height || pngs[k].width != r->width)
                return fail(why, "a %ux%u PNG for a %lldx%lld observation", pngs[k].height, pngs[k].width,
                            r->height, r->width);
        }
        for (int c = 0; c < pngs[k].bpp && total < MAX_CHANNELS; c++, total++) {
            src[total].image = k;
            src[total].channel = c;
        }
    }
    const size_t pixels = (size_t)r->height * (size_t)r->width;
    if (gray_path) {
        gray(&pngs[0], pixels, r->out);
    } else if (PyTuple_GET_SIZE(r->mapping) > 0) {
        int failed = read_mapping(r->mapping, total, (int)r->channels, mapping, why);
        if (failed) return failed;
        float *sums = PyMem_Malloc(pixels * sizeof(float));
        if (sums == NULL) {
            PyErr_NoMemory();
            return -2;
        }
        mapped(pngs, src, mapping, total, (int)r->channels, pixels, sums, r->out);
        PyMem_Free(sums);
    } else {
        if (total < r->channels) return fail(why, "%d channels for %lld", total, r->channels);
        copy_channels(pngs, src, (int)r->channels, pixels, r->out);
    }
    return 0;
}

static PyObject *decode(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer data, out;
    Request r;
    Why why;
    if (!PyArg_ParseTuple(args, "y*LLLO!w*OL", &data, &r.height, &r.width, &r.channels, &PyTuple_Type, &r.mapping,
                          &out, &r.inflate, &r.max_pixels))
        return NULL;
    Png *pngs = PyMem_Calloc(MAX_IMAGES, sizeof(Png));
    int count = 0, failed;
    r.data = data.buf;
    r.len = data.len;
    r.out = out.buf;
    if (pngs == NULL) {
        PyErr_NoMemory();
        failed = -2;
    } else if (r.height < 1 || r.width < 1 || r.channels < 1 || r.channels > MAX_CHANNELS
               || (unsigned long long)r.height * (unsigned long long)r.width > MAX_PIXELS) {
        failed = fail(&why, "observation shape (%lld, %lld, %lld)", r.height, r.width, r.channels);
    } else if (out.len != (Py_ssize_t)(r.height * r.width * r.channels * 4) || !PyBuffer_IsContiguous(&out, 'C')) {
        PyErr_SetString(PyExc_ValueError, "out must be a C-contiguous float32 buffer of the observation's size");
        failed = -2;
    } else if (PyTuple_GET_SIZE(r.mapping) > MAX_CHANNELS) {
        failed = fail(&why, "a mapping of %zd channels", PyTuple_GET_SIZE(r.mapping));
    } else {
        failed = read_pngs(&r, pngs, &count, &why);
        if (!failed) failed = combine(&r, pngs, count, &why);
    }
    for (int k = 0; pngs != NULL && k < count; k++) PyMem_Free(pngs[k].pixels);
    PyMem_Free(pngs);
    PyBuffer_Release(&data);
    PyBuffer_Release(&out);
    if (failed == -2) return NULL;
    if (failed == -1) return PyUnicode_FromString(why.text);
    Py_RETURN_NONE;
}

static PyObject *lut_bytes(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyBytes_FromStringAndSize((const char *)lut, sizeof(lut));
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS, "A visual observation's PNGs into a float32 buffer, or why not (see the source)."},
    {"lut", lut_bytes, METH_NOARGS, "The 256 float32 values a pixel byte becomes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_pixels", "Visual observations' PNGs decoded as mlagents-envs decodes them (C).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__pixels(void)
{
    for (int v = 0; v < 256; v++) {
        float value = (float)v;
        lut[v] = value / 255.0f;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
    return PyModule_Create(&module);
}
