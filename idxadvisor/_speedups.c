/* idxadvisor._speedups: compiled pieces of the per-line hot path (docs/speedups.md).
 *
 * The Python code in idxadvisor/parse/ is the reference: every function here returns exactly what its Python
 * counterpart works out, or None where it is not sure, and the caller then takes the Python path for the whole
 * piece. tests/parse/test_speedups_differential.py keeps the two equal.
 *
 * No global mutable state: the module holds nothing but its method table, every call works on its arguments and
 * its own locals, so calls are re-entrant and may run in any number of threads or sub-interpreters at once. The
 * GIL is released while a block is scanned (the bytes object is immutable and kept alive by the caller).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static const char LINE_START[] = "{\"t\":{\"$date\":\"";
#define LINE_START_LEN ((Py_ssize_t)(sizeof(LINE_START) - 1))
static const char SLOW_NUMBER[] = "51803";    /* jsonlog.SLOW_QUERY_ID, found after "id": or "id": + space */
static const char BUILD_NEEDLE[] = "\"id\":23403"; /* jsonlog.BUILD_INFO_NEEDLES[0] */
#define NUMBER_LEN ((Py_ssize_t)(sizeof(SLOW_NUMBER) - 1))
#define BUILD_NEEDLE_LEN ((Py_ssize_t)(sizeof(BUILD_NEEDLE) - 1))
static const unsigned char BOM[] = {0xEF, 0xBB, 0xBF};

/* Spans found in a block: start/end offset pairs, grown on the heap (no statics). */
typedef struct {
    Py_ssize_t *items;
    Py_ssize_t length;
    Py_ssize_t capacity;
} Spans;

static int spans_push(Spans *spans, Py_ssize_t start, Py_ssize_t end)
{
    if (spans->length + 2 > spans->capacity) {
        Py_ssize_t capacity = spans->capacity ? spans->capacity * 2 : 64;
        Py_ssize_t *items = PyMem_RawRealloc(spans->items, (size_t)capacity * sizeof(Py_ssize_t));
        if (items == NULL) {
            return -1;
        }
        spans->items = items;
        spans->capacity = capacity;
    }
    spans->items[spans->length++] = start;
    spans->items[spans->length++] = end;
    return 0;
}

static PyObject *spans_to_list(const Spans *spans)
{
    PyObject *list = PyList_New(spans->length);
    if (list == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < spans->length; i++) {
        PyObject *number = PyLong_FromSsize_t(spans->items[i]);
        if (number == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, number);
    }
    return list;
}

static const char *find(const char *haystack, Py_ssize_t length, const char *needle, Py_ssize_t needle_length)
{
    if (length < needle_length) {
        return NULL;
    }
#if defined(__GLIBC__) || defined(__APPLE__) || defined(__FreeBSD__) || defined(__musl__)
    return memmem(haystack, (size_t)length, needle, (size_t)needle_length);
#else
    const char *cursor = haystack, *last = haystack + length - needle_length;
    while (cursor <= last) {
        const char *first = memchr(cursor, needle[0], (size_t)(last - cursor + 1));
        if (first == NULL) {
            return NULL;
        }
        if (memcmp(first, needle, (size_t)needle_length) == 0) {
            return first;
        }
        cursor = first + 1;
    }
    return NULL;
#endif
}

static Py_ssize_t line_start_before(const char *data, Py_ssize_t position)
{
    while (position > 0 && data[position - 1] != '\n') {
        position--;
    }
    return position;
}

static Py_ssize_t line_end_from(const char *data, Py_ssize_t length, Py_ssize_t position)
{
    const char *newline = memchr(data + position, '\n', (size_t)(length - position));
    return newline ? (Py_ssize_t)(newline - data) : length;
}

/* One pass over the piece after any BOM (which holds no newline): the newlines, for count_lines(), and the joins
 * of block._is_plain_json_block, a newline after "}" (LF) or "}\r" (CRLF) followed by LINE_START. A newline is at
 * most one of the two kinds of join, so counting both at once equals Python's count of one then the other. */
static void count_newlines_and_joins(const char *data, Py_ssize_t length, Py_ssize_t *newlines, Py_ssize_t *joins)
{
    const char *cursor = data, *stop = data + length;
    *newlines = *joins = 0;
    while (cursor < stop) {
        const char *newline = memchr(cursor, '\n', (size_t)(stop - cursor));
        if (newline == NULL) {
            break;
        }
        Py_ssize_t at = newline - data;
        ++*newlines;
        if (length - (at + 1) >= LINE_START_LEN && memcmp(newline + 1, LINE_START, (size_t)LINE_START_LEN) == 0 &&
            ((at >= 1 && data[at - 1] == '}') || (at >= 2 && data[at - 1] == '\r' && data[at - 2] == '}'))) {
            ++*joins;
        }
        cursor = newline + 1;
    }
}

/* block._is_plain_json_block(data, lines), on the piece after any BOM, given its joins. */
static int is_plain_json_block(const char *data, Py_ssize_t length, Py_ssize_t lines, Py_ssize_t joins)
{
    if (length < LINE_START_LEN || memcmp(data, LINE_START, (size_t)LINE_START_LEN) != 0) {
        return 0;
    }
    Py_ssize_t end = length;
    while (end > 0 && (data[end - 1] == '\r' || data[end - 1] == '\n')) {
        end--;
    }
    return end > 0 && data[end - 1] == '}' && joins == lines - 1;
}

/* The lines block._parse_json_block hands to its handlers: slow-query candidates, then build-info lines. */
static int scan_candidates(const char *data, Py_ssize_t length, Py_ssize_t base, Spans *slow, Spans *build)
{
    Py_ssize_t position = 0;
    for (;;) {
        const char *found = find(data + position, length - position, SLOW_NUMBER, NUMBER_LEN);
        if (found == NULL) {
            break;
        }
        Py_ssize_t at = found - data;
        int keyed = (at >= 5 && memcmp(data + at - 5, "\"id\":", 5) == 0) ||
                    (at >= 6 && memcmp(data + at - 6, "\"id\": ", 6) == 0);
        if (!keyed) {
            position = at + NUMBER_LEN;
            continue;
        }
        Py_ssize_t end = line_end_from(data, length, at);
        if (spans_push(slow, base + line_start_before(data, at), base + end) < 0) {
            return -1;
        }
        position = end;
    }
    position = 0;
    for (;;) {
        const char *found = find(data + position, length - position, BUILD_NEEDLE, BUILD_NEEDLE_LEN);
        if (found == NULL) {
            break;
        }
        Py_ssize_t at = found - data;
        Py_ssize_t end = line_end_from(data, length, at);
        if (spans_push(build, base + line_start_before(data, at), base + end) < 0) {
            return -1;
        }
        position = end;
    }
    return 0;
}

/* -- text logs ---------------------------------------------------------------------------------------------- */

static const char *const WEEKDAYS[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
static const char *const MONTHS[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
static const char *const VERSION_HINTS[] = {"db version", "MongoS version", "mongos version"}; /* block._VERSION_HINTS */
#define VERSION_HINT_COUNT 3
/* A line whose first bytes are not an ASCII timestamp but hold a non-ASCII byte might still match
 * textlog.TIMESTAMP_START in Python, whose \d takes any Unicode digit: such a block goes to the Python path. */
#define TIMESTAMP_BYTES_AT_MOST 44

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int one_of(const char *text, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (memcmp(text, names[i], 3) == 0) {
            return 1;
        }
    }
    return 0;
}

/* textlog.TIMESTAMP_START at the start of a line, for ASCII text: 1 yes, 0 no, -1 not sure (non-ASCII bytes). */
static int starts_with_timestamp(const char *line, Py_ssize_t length)
{
    if (length >= 11 && is_digit(line[0]) && is_digit(line[1]) && is_digit(line[2]) && is_digit(line[3]) &&
        line[4] == '-' && is_digit(line[5]) && is_digit(line[6]) && line[7] == '-' && is_digit(line[8]) &&
        is_digit(line[9]) && line[10] == 'T') {
        return 1;
    }
    if (length >= 8 && one_of(line, WEEKDAYS, 7) && line[3] == ' ' && one_of(line + 4, MONTHS, 12) &&
        line[7] == ' ') {
        return 1;
    }
    Py_ssize_t look = length < TIMESTAMP_BYTES_AT_MOST ? length : TIMESTAMP_BYTES_AT_MOST;
    for (Py_ssize_t i = 0; i < look; i++) {
        if ((unsigned char)line[i] >= 0x80) {
            return -1;
        }
    }
    return 0;
}

static int is_blank(const char *line, Py_ssize_t length)
{
    for (Py_ssize_t i = 0; i < length; i++) {
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r') {
            return 0;
        }
    }
    return 1;
}

static int compare_spans(const void *left, const void *right)
{
    Py_ssize_t a = *(const Py_ssize_t *)left, b = *(const Py_ssize_t *)right;
    return (a > b) - (a < b);
}

/* block._lines_holding(text, _VERSION_HINTS): the lines holding a hint, in order, each once. */
static int find_version_lines(const char *data, Py_ssize_t length, Py_ssize_t base, Spans *versions)
{
    for (int hint = 0; hint < VERSION_HINT_COUNT; hint++) {
        Py_ssize_t needle_length = (Py_ssize_t)strlen(VERSION_HINTS[hint]), position = 0;
        for (;;) {
            const char *found = find(data + position, length - position, VERSION_HINTS[hint], needle_length);
            if (found == NULL) {
                break;
            }
            Py_ssize_t at = found - data, end = line_end_from(data, length, at);
            if (spans_push(versions, base + line_start_before(data, at), base + end) < 0) {
                return -1;
            }
            position = end;
        }
    }
    if (versions->length > 2) {
        qsort(versions->items, (size_t)(versions->length / 2), 2 * sizeof(Py_ssize_t), compare_spans);
    }
    Py_ssize_t kept = 0;
    for (Py_ssize_t i = 0; i < versions->length; i += 2) {
        if (kept == 0 || versions->items[kept - 2] != versions->items[i]) {
            versions->items[kept++] = versions->items[i];
            versions->items[kept++] = versions->items[i + 1];
        }
    }
    versions->length = kept;
    return 0;
}

/* block._parse_text_block's search: lines without a timestamp (odd), lines ending in "ms" (candidates), version
 * lines. Returns 0, -1 on no memory, or 1 when the Python path must read the block (an odd line starting with "{",
 * or one this code cannot judge). */
static int scan_text_lines(const char *data, Py_ssize_t length, Py_ssize_t base, Spans *odd, Spans *candidates,
                           Spans *versions)
{
    const char *cursor = data, *stop = data + length;
    while (cursor < stop) {
        const char *newline = memchr(cursor, '\n', (size_t)(stop - cursor));
        const char *line_end = newline ? newline : stop;
        Py_ssize_t line_length = line_end - cursor, start = base + (cursor - data);
        int stamped = starts_with_timestamp(cursor, line_length);
        if (stamped < 0) {
            return 1;
        }
        if (!stamped && !is_blank(cursor, line_length)) {
            if (cursor[0] == '{') {
                return 1;
            }
            if (spans_push(odd, start, start) < 0) {
                return -1;
            }
        }
        Py_ssize_t content = line_length;
        if (content > 0 && cursor[content - 1] == '\r') {
            content--;
        }
        if (content >= 2 && cursor[content - 2] == 'm' && cursor[content - 1] == 's' &&
            spans_push(candidates, start, start + content) < 0) {
            return -1;
        }
        if (newline == NULL) {
            break;
        }
        cursor = newline + 1;
    }
    return find_version_lines(data, length, base, versions);
}

/* The arguments both scans take, (data: bytes, strip_bom), checked; -1 with a Python error set. */
static int block_arguments(const char *name, PyObject *const *args, Py_ssize_t nargs, const char **data,
                           Py_ssize_t *length, int *strip_bom)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "%s() takes exactly 2 arguments", name);
        return -1;
    }
    if (!PyBytes_CheckExact(args[0])) {
        PyErr_Format(PyExc_TypeError, "%s() needs bytes", name);
        return -1;
    }
    *strip_bom = PyObject_IsTrue(args[1]);
    if (*strip_bom < 0) {
        return -1;
    }
    *data = PyBytes_AS_STRING(args[0]);
    *length = PyBytes_GET_SIZE(args[0]);
    return 0;
}

/* A piece's byte-order mark (skipped only when strip_bom), its line count as count_lines() gives it, and its
 * joins (count_newlines_and_joins). No Python API: both scans call it without the GIL. */
static void count_block(const char *data, Py_ssize_t length, int strip_bom, Py_ssize_t *bom, Py_ssize_t *lines,
                        Py_ssize_t *joins)
{
    Py_ssize_t newlines;
    *bom = (strip_bom && length >= 3 && memcmp(data, BOM, 3) == 0) ? 3 : 0;
    count_newlines_and_joins(data + *bom, length - *bom, &newlines, joins);
    *lines = newlines + ((length > 0 && data[length - 1] != '\n') ? 1 : 0);
}

PyDoc_STRVAR(scan_text_block_doc,
"scan_text_block(data, strip_bom, /)\n--\n\n"
"Scan one newline-aligned piece of a text log, as block.BlockParser._parse_text_block does in Python.\n\n"
"Returns (lines, bom, odd, candidates, versions): the piece's line count, the bytes of a byte-order mark skipped\n"
"(only when strip_bom), the start offsets of the lines without a timestamp that are not blank, and the flat\n"
"[start, end, ...] offsets of the lines ending in \"ms\" (end after \"ms\") and of the lines holding a version\n"
"hint (end at the newline). odd, candidates and versions are None where the Python path must read the piece.");

static PyObject *scan_text_block(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    const char *data;
    Py_ssize_t length;
    int strip_bom;
    if (block_arguments("scan_text_block", args, nargs, &data, &length, &strip_bom) < 0) {
        return NULL;
    }
    Py_ssize_t joins, lines, bom = 0;
    Spans odd = {NULL, 0, 0}, candidates = {NULL, 0, 0}, versions = {NULL, 0, 0};
    int outcome;

    Py_BEGIN_ALLOW_THREADS
    count_block(data, length, strip_bom, &bom, &lines, &joins);
    outcome = scan_text_lines(data + bom, length - bom, bom, &odd, &candidates, &versions);
    Py_END_ALLOW_THREADS

    PyObject *result = NULL;
    if (outcome < 0) {
        PyErr_NoMemory();
    } else if (outcome > 0) {
        result = Py_BuildValue("nnOOO", lines, bom, Py_None, Py_None, Py_None);
    } else {
        PyObject *odd_list = PyList_New(odd.length / 2);
        for (Py_ssize_t i = 0; odd_list != NULL && i < odd.length / 2; i++) {
            PyObject *number = PyLong_FromSsize_t(odd.items[2 * i]);
            if (number == NULL) {
                Py_CLEAR(odd_list);
                break;
            }
            PyList_SET_ITEM(odd_list, i, number);
        }
        PyObject *candidate_list = odd_list ? spans_to_list(&candidates) : NULL;
        PyObject *version_list = candidate_list ? spans_to_list(&versions) : NULL;
        if (version_list != NULL) {
            result = Py_BuildValue("nnNNN", lines, bom, odd_list, candidate_list, version_list);
        } else {
            Py_XDECREF(odd_list);
            Py_XDECREF(candidate_list);
        }
    }
    PyMem_RawFree(odd.items);
    PyMem_RawFree(candidates.items);
    PyMem_RawFree(versions.items);
    return result;
}

PyDoc_STRVAR(scan_json_block_doc,
"scan_json_block(data, strip_bom, /)\n--\n\n"
"Scan one newline-aligned piece of a JSON log, as block.BlockParser.feed does in Python.\n\n"
"Returns (lines, bom, slow, build): the piece's line count (count_lines), the bytes of a byte-order mark skipped\n"
"at its start (only when strip_bom), and, when every line is a whole JSON log line, the flat [start, end, ...]\n"
"offsets (into data) of the slow-query candidate lines and of the build-info lines; slow and build are None for\n"
"a piece that is not plain, which the caller parses line by line.");

static PyObject *scan_json_block(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    const char *data;
    Py_ssize_t length;
    int strip_bom;
    if (block_arguments("scan_json_block", args, nargs, &data, &length, &strip_bom) < 0) {
        return NULL;
    }
    Py_ssize_t joins, lines, bom = 0;
    Spans slow = {NULL, 0, 0}, build = {NULL, 0, 0};
    int plain, failed = 0;

    Py_BEGIN_ALLOW_THREADS
    count_block(data, length, strip_bom, &bom, &lines, &joins);
    plain = is_plain_json_block(data + bom, length - bom, lines, joins);
    if (plain) {
        failed = scan_candidates(data + bom, length - bom, bom, &slow, &build);
    }
    Py_END_ALLOW_THREADS

    PyObject *result = NULL;
    if (failed) {
        PyErr_NoMemory();
    } else if (!plain) {
        result = Py_BuildValue("nnOO", lines, bom, Py_None, Py_None);
    } else {
        PyObject *slow_list = spans_to_list(&slow);
        PyObject *build_list = slow_list ? spans_to_list(&build) : NULL;
        if (build_list != NULL) {
            result = Py_BuildValue("nnNN", lines, bom, slow_list, build_list);
        } else {
            Py_XDECREF(slow_list);
        }
    }
    PyMem_RawFree(slow.items);
    PyMem_RawFree(build.items);
    return result;
}

static PyMethodDef speedups_methods[] = {
    {"scan_json_block", (PyCFunction)(void (*)(void))scan_json_block, METH_FASTCALL, scan_json_block_doc},
    {"scan_text_block", (PyCFunction)(void (*)(void))scan_text_block, METH_FASTCALL, scan_text_block_doc},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot speedups_slots[] = {
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#if PY_VERSION_HEX >= 0x030D0000
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "idxadvisor._speedups",
    .m_doc = "Compiled pieces of idxadvisor's parsing hot path; the Python code in idxadvisor.parse is the reference.",
    .m_size = 0,
    .m_methods = speedups_methods,
    .m_slots = speedups_slots,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    return PyModuleDef_Init(&speedups_module);
}
