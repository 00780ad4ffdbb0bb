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
#include <structmember.h> /* T_OBJECT_EX, READONLY: the slots add_execution reads in place */
#include <stdint.h>
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

/* ---- module state: interned names and the tables, made once per module object --------------------------------- */

/* Every name the per-line functions look up or produce, interned once per module (never mutated after). */
#define NAME_LIST(X) \
    X(ATTR, "attr") X(COMMAND, "command") X(TYPE, "type") X(UPDATE, "update") X(REMOVE, "remove") \
    X(DELETE, "delete") X(NS, "ns") X(CTX, "ctx") X(ORIGINATING, "originatingCommand") X(TRUNCATED, "truncated") \
    X(OK, "ok") X(ERROR, "error") X(FAILED, "failed") X(TIMING, "timing") X(INTERNAL, "internal") \
    X(SOURCE_FORMAT, "source_format") \
    X(APP_NAME, "app_name") X(FROM_USER, "isFromUserConnection") X(T, "t") X(DATE, "$date") X(TZINFO, "tzinfo") \
    X(YEAR, "year") X(DURATION_MS, "duration_ms") X(ORIGINATING_COMMAND, "originating_command") X(OP, "op") \
    X(TS, "ts") X(CONNECTION, "connection") X(STATEMENT, "statement") X(UNKNOWN, "unknown") X(EMPTY, "") \
    X(CMD_SUFFIX, ".$cmd") X(SYSTEM_COLLECTION, "system collection") X(INTERNAL_CONNECTION, "internal connection") \
    X(WORKING_MILLIS, "workingMillis") X(OPLOG_SLOT, "totalOplogSlotDurationMicros") \
    X(WRITE_CONCERN, "waitForWriteConcernDurationMillis") X(WRITE_CONFLICTS, "writeConflicts") \
    X(PLANNING, "planningTimeMicros") X(CPU_NANOS, "cpuNanos") X(QUEUES, "queues") X(STORAGE, "storage") \
    X(LOCKS, "locks") X(FLOW_CONTROL, "flowControl") X(WORKING_MS, "working_ms") X(OPLOG_SLOT_MS, "oplog_slot_ms") \
    X(WRITE_CONCERN_MS, "write_concern_ms") X(WRITE_CONFLICTS_NAME, "write_conflicts") \
    X(PLANNING_MS, "planning_ms") X(CPU_MS, "cpu_ms") X(EXECUTION, "execution") X(INGRESS, "ingress") \
    X(QUEUED_MICROS, "totalTimeQueuedMicros") X(ADMISSIONS, "admissions") X(QUEUED_MS, "queued_ms") \
    X(INGRESS_QUEUED_MS, "ingress_queued_ms") X(DATA, "data") X(READING_MICROS, "timeReadingMicros") \
    X(BYTES_READ, "bytesRead") X(DISK_READ_MS, "disk_read_ms") X(BYTES_READ_NAME, "bytes_read") \
    X(ACQUIRING_MICROS, "timeAcquiringMicros") X(LOCK_WAIT_MS, "lock_wait_ms") \
    X(FLOW_CONTROL_MS, "flow_control_ms") \
    X(FILTER, "filter") X(QUERY, "query") X(SORT, "sort") X(PROJECTION, "projection") X(FIELDS, "fields") \
    X(KEY, "key") X(PIPELINE, "pipeline") X(HINT, "hint") X(COLLATION, "collation") X(LIMIT, "limit") \
    X(SKIP, "skip") X(UPSERT, "upsert") X(NEW, "new") X(MULTI, "multi") X(Q, "q") X(U, "u") \
    X(UPDATES, "updates") X(DELETES, "deletes") X(COMMENT_OP, "$comment") X(AND_OP, "$and") X(OR_OP, "$or") \
    X(NOR_OP, "$nor") X(REGEX_OP, "$regex") X(OPTIONS_OP, "$options") X(ELEM_MATCH_OP, "$elemMatch") \
    X(IN_OP, "$in") X(REGULAR_EXPRESSION, "$regularExpression") X(META, "$meta") X(SKIP_STAGE, "$skip") \
    X(MATCH_STAGE, "$match") X(SORT_STAGE, "$sort") X(LIMIT_STAGE, "$limit") X(GROUP_STAGE, "$group") \
    X(LOOKUP_STAGE, "$lookup") X(UNWIND_STAGE, "$unwind") X(ID, "_id") X(FROM, "from") \
    X(LOCAL_FIELD, "localField") X(FOREIGN_FIELD, "foreignField") X(PATH, "path") X(SUM, "$sum") \
    X(UNKNOWN_VALUE, "?") X(DOLLAR, "$") X(CONST, "const") X(AGGREGATE, "aggregate") X(ONE, "one") \
    X(REPLACEMENT, "replacement") X(PIPELINE_UPDATE, "pipeline-update") \
    X(STATEMENTS_NOT_LOGGED, "statements not logged") X(PIPELINE_NOT_LOGGED, "pipeline not logged") \
    X(COUNT_ACCUMULATOR, "count") X(ONE_TEXT, "1") X(ZERO_TEXT, "0") \
    X(SYSTEM_PREFIX, "system.") X(SYSTEM_INFIX, ".system.") X(CONN, "conn") X(COUNTS, "counts") X(N_VALUES, "n") \
    X(TOTAL, "total") X(MAXIMUM, "maximum") X(EXECUTIONS, "executions") X(DURATION_US, "duration_us") \
    X(COMPONENTS, "components") X(HISTOGRAMS, "histograms") X(VALUES, "values") X(STRINGS, "strings") \
    X(STRING_BYTES, "string_bytes") X(LONGEST, "longest") X(EQUALITIES, "equalities") X(DISTINCT, "distinct") \
    X(DISTINCT_COUNT, "distinct_count") X(MANY, "many") \
    X(S_COUNT, "count") X(S_GETMORES, "getmores") X(S_DURATION, "duration") X(S_KEYS, "keys_examined") \
    X(S_DOCS, "docs_examined") X(S_NRETURNED, "nreturned") X(S_MEASURED, "measured") \
    X(S_KEYS_MEASURED, "keys_measured") X(S_DOCS_MEASURED, "docs_measured") X(S_PLANS, "plans") \
    X(S_BLOCKING_SORTS, "blocking_sorts") X(S_USED_DISK, "used_disk") X(S_ERRORS, "errors") \
    X(S_INTERNAL_REASON, "internal_reason") X(S_MAX_IN_LENGTH, "max_in_length") X(S_APPS, "apps") \
    X(S_CONNECTIONS, "connections") X(S_SERVER_HASHES, "server_hashes") X(S_FIRST_SEEN, "first_seen") \
    X(S_LAST_SEEN, "last_seen") X(S_TIMELINE, "timeline") X(S_LATEST, "_latest") X(S_RUNS, "runs") \
    X(S_LITERAL_VALUES, "literal_values") X(S_NUM_YIELDS, "num_yields") X(S_YIELDS_MEASURED, "yields_measured") \
    X(S_RESPONSE_BYTES, "response_bytes") X(S_RESPONSES_MEASURED, "responses_measured") \
    X(S_REPLANNED, "replanned") X(S_SKIPPED_EXECUTIONS, "skipped_executions") X(S_SKIP_TOTAL, "skip_total") \
    X(S_SKIP_MAX, "skip_max") X(S_UNDER_LIMIT, "under_limit") X(S_UNDER_LIMIT_RETURNED, "under_limit_returned") \
    X(S_PLAN_COSTS, "plan_costs") X(S_PLAN_ORDER, "plan_order") X(S_BULK_WRITTEN, "bulk_written") \
    X(S_LITERALS, "literals") X(S_POINT_LOOKUP, "_point_lookup") X(S_SHAPE, "shape") X(S_OPTIONS, "options") \
    X(S_N_MATCHED, "n_matched") X(S_N_DELETED, "n_deleted") X(S_N_INSERTED, "n_inserted") \
    X(S_PLAN_SUMMARY, "plan_summary") X(S_HAS_SORT_STAGE, "has_sort_stage") X(S_SPILLS, "spills") \
    X(S_RESPONSE_LENGTH, "response_length") X(S_REMOTE, "remote") X(S_UNPARSED, "unparsed") \
    X(S_QUERY_HASH, "query_hash") X(S_PLAN_CACHE_SHAPE_HASH, "plan_cache_shape_hash") \
    X(S_QUERY_SHAPE_HASH, "query_shape_hash") X(S_PLAN_CACHE_KEY, "plan_cache_key") \
    X(S_QUERY_HASH_REPORT, "queryHash") X(S_PLAN_CACHE_SHAPE_HASH_REPORT, "planCacheShapeHash") \
    X(S_QUERY_SHAPE_HASH_REPORT, "queryShapeHash") X(S_PLAN_CACHE_KEY_REPORT, "planCacheKey") \
    X(S_IN_LENGTH, "in_length") X(S_TOTAL_MS, "total_ms") X(S_MAX_MS, "max_ms") X(S_BINS, "bins") \
    X(S_WIDTH_MINUTES, "width_minutes") X(S_BUCKETS, "buckets") X(S_LAST_MS, "last_ms") \
    X(S_LAST_PLAN, "last_plan") X(S_SWITCHES, "switches") X(S_MEMBERS, "members") X(S_CUTOFF, "cutoff") \
    X(S_ADD, "add") X(S_TRIM, "_trim") X(S_ADD_AT, "add_at") X(S_OBSERVE, "observe") \
    X(S_RECORD_LOOKUP, "_record_lookup") X(S_TIMESTAMP, "timestamp") X(S_BATCH_SIZE, "batchSize") \
    X(S_CURSOR, "cursor") X(S_POST_INIT, "__post_init__")

#define NAME_ENUM(symbol, text) N_##symbol,
enum { NAME_LIST(NAME_ENUM) NAME_COUNT };
#undef NAME_ENUM
#define NAME_TEXT(symbol, text) text,
static const char *const NAME_TEXTS[NAME_COUNT] = {NAME_LIST(NAME_TEXT)};
#undef NAME_TEXT

/* fields.FIELD_ALIASES: server name -> Event attribute and kind (the test compares the two tables). */
enum { KIND_INT, KIND_FLOAT, KIND_BOOL, KIND_STR };
static const char *const KIND_NAMES[] = {"int", "float", "bool", "str"};
typedef struct {
    const char *name;
    const char *attribute;
    int kind;
} Alias;
static const Alias ALIASES[] = {
    {"durationMillis", "duration_ms", KIND_FLOAT}, {"millis", "duration_ms", KIND_FLOAT},
    {"keysExamined", "keys_examined", KIND_INT}, {"nscanned", "keys_examined", KIND_INT},
    {"docsExamined", "docs_examined", KIND_INT}, {"nscannedObjects", "docs_examined", KIND_INT},
    {"nreturned", "nreturned", KIND_INT}, {"nReturned", "nreturned", KIND_INT},
    {"nMatched", "n_matched", KIND_INT}, {"nmatched", "n_matched", KIND_INT},
    {"ndeleted", "n_deleted", KIND_INT}, {"nDeleted", "n_deleted", KIND_INT},
    {"ninserted", "n_inserted", KIND_INT}, {"nInserted", "n_inserted", KIND_INT},
    {"planSummary", "plan_summary", KIND_STR}, {"hasSortStage", "has_sort_stage", KIND_BOOL},
    {"scanAndOrder", "has_sort_stage", KIND_BOOL}, {"usedDisk", "used_disk", KIND_BOOL},
    {"sortSpills", "spills", KIND_INT}, {"sortSpilledBytes", "spills", KIND_INT},
    {"sortSpillBytes", "spills", KIND_INT}, {"groupSpills", "spills", KIND_INT},
    {"groupSpilledBytes", "spills", KIND_INT}, {"setWindowFieldsSpills", "spills", KIND_INT},
    {"graphLookupSpills", "spills", KIND_INT}, {"hashLookupSpills", "spills", KIND_INT},
    {"bucketAutoSpills", "spills", KIND_INT}, {"textOrSpills", "spills", KIND_INT},
    {"appName", "app_name", KIND_STR}, {"remote", "remote", KIND_STR}, {"client", "remote", KIND_STR},
    {"queryHash", "query_hash", KIND_STR}, {"planCacheShapeHash", "plan_cache_shape_hash", KIND_STR},
    {"queryShapeHash", "query_shape_hash", KIND_STR}, {"planCacheKey", "plan_cache_key", KIND_STR},
    {"numYields", "num_yields", KIND_INT}, {"numYield", "num_yields", KIND_INT},
    {"reslen", "response_length", KIND_INT}, {"responseLength", "response_length", KIND_INT},
    {"replanned", "replanned", KIND_BOOL}, {"errMsg", "error", KIND_STR}, {"exception", "error", KIND_STR},
    {"errName", "error", KIND_STR},
};
#define ALIAS_COUNT ((Py_ssize_t)(sizeof(ALIASES) / sizeof(ALIASES[0])))

/* classify.OP_SPELLINGS, INTERNAL_DATABASES, INTERNAL_APP_PREFIXES */
static const char *const OP_SPELLINGS[][2] = {
    {"query", "find"}, {"getmore", "getMore"}, {"remove", "delete"}, {"killcursors", "killCursors"},
    {"findandmodify", "findAndModify"}, {"mapreduce", "mapReduce"}, {"ismaster", "isMaster"},
    {"geonear", "geoNear"}, {"createindexes", "createIndexes"},
};
#define OP_SPELLING_COUNT (sizeof(OP_SPELLINGS) / sizeof(OP_SPELLINGS[0]))
static const char *const INTERNAL_DATABASES[] = {"admin", "local", "config"};
static const char *const INTERNAL_APP_PREFIXES[] = {
    "MongoDB Automation Agent", "MongoDB Monitoring Module", "MongoDB Backup Agent", "MongoDB CPS Module",
    "MongoDB Internal Client", "OplogFetcher", "mongot", "NetworkInterfaceTL",
};
#define APP_PREFIX_COUNT (sizeof(INTERNAL_APP_PREFIXES) / sizeof(INTERNAL_APP_PREFIXES[0]))

/* shape.py's operator classes, in sorted order: a set of them is a bit mask, read out sorted. */
#define CLASS_LIST(X) \
    X(ALL, "all") X(BITS, "bits") X(EQ, "eq") X(EXISTS, "exists") X(EXPR, "expr") X(GEO, "geo") X(IN, "in") \
    X(MOD, "mod") X(NE, "ne") X(NIN, "nin") X(NOT, "not") X(OTHER, "other") X(RANGE, "range") X(SIZE, "size") \
    X(TEXT, "text") X(TYPE, "type") X(WHERE, "where")
#define CLASS_ENUM(symbol, text) C_##symbol,
enum { CLASS_LIST(CLASS_ENUM) CLASS_COUNT };
#undef CLASS_ENUM
#define CLASS_TEXT(symbol, text) text,
static const char *const CLASS_TEXTS[CLASS_COUNT] = {CLASS_LIST(CLASS_TEXT)};
#undef CLASS_TEXT

typedef struct {
    const char *name;
    int class_index;
} OperatorClass;
/* shape._FIELD_OPERATORS and _RANGE_OPERATORS (every other "$..." operator on a field is "other") */
static const OperatorClass FIELD_OPERATORS[] = {
    {"$eq", C_EQ}, {"$in", C_IN}, {"$ne", C_NE}, {"$nin", C_NIN}, {"$not", C_NOT}, {"$exists", C_EXISTS},
    {"$type", C_TYPE}, {"$size", C_SIZE}, {"$all", C_ALL}, {"$mod", C_MOD}, {"$geoWithin", C_GEO},
    {"$geoIntersects", C_GEO}, {"$near", C_GEO}, {"$nearSphere", C_GEO}, {"$within", C_GEO},
    {"$maxDistance", C_GEO}, {"$minDistance", C_GEO}, {"$bitsAllSet", C_BITS}, {"$bitsAllClear", C_BITS},
    {"$bitsAnySet", C_BITS}, {"$bitsAnyClear", C_BITS}, {"$jsonSchema", C_OTHER},
    {"$gt", C_RANGE}, {"$gte", C_RANGE}, {"$lt", C_RANGE}, {"$lte", C_RANGE},
};
/* shape._TOP_LEVEL_OPERATORS */
static const OperatorClass TOP_LEVEL_OPERATORS[] = {
    {"$expr", C_EXPR}, {"$text", C_TEXT}, {"$where", C_WHERE}, {"$jsonSchema", C_OTHER}, {"$sampleRate", C_OTHER},
    {"$alwaysTrue", C_OTHER}, {"$alwaysFalse", C_OTHER},
};
/* models.values.EXTENDED_JSON_MARKERS */
static const char *const EXTENDED_JSON_MARKERS[] = {
    "$oid", "$date", "$numberInt", "$numberLong", "$numberDouble", "$numberDecimal", "$binary", "$uuid",
    "$timestamp", "$regularExpression", "$minKey", "$maxKey", "$undefined", "$symbol", "$code", "$dbPointer",
};
/* shape._NUMBER_MARKERS */
static const char *const NUMBER_MARKERS[] = {"$numberInt", "$numberLong", "$numberDouble", "$numberDecimal"};
#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

typedef struct {
    PyObject *names[NAME_COUNT];
    PyObject *classes[CLASS_COUNT];
    PyObject *aliases;          /* dict: server name -> index into ALIASES */
    PyObject *alias_attributes; /* tuple: ALIASES[i].attribute, interned */
    PyObject *op_spellings;     /* dict: spelling -> canonical name */
    PyObject *field_operators;  /* dict: operator -> class index */
    PyObject *top_level_operators;
    PyObject *extended_markers; /* frozenset */
    PyObject *number_markers;   /* frozenset */
    PyObject *app_prefixes;     /* tuple: INTERNAL_APP_PREFIXES */
    PyObject *fromisoformat;    /* datetime.datetime.fromisoformat */
    PyObject *datetime_type;    /* datetime.datetime */
    PyObject *utc;              /* datetime.timezone.utc */
    PyObject *zero;             /* the int 0 */
    PyObject *one;              /* the int 1 */
} State;

static State *module_state(PyObject *module)
{
    return (State *)PyModule_GetState(module);
}

static int state_traverse(PyObject *module, visitproc visit, void *arg)
{
    State *state = module_state(module);
    if (state == NULL) {
        return 0;
    }
    for (int i = 0; i < NAME_COUNT; i++) {
        Py_VISIT(state->names[i]);
    }
    for (int i = 0; i < CLASS_COUNT; i++) {
        Py_VISIT(state->classes[i]);
    }
    Py_VISIT(state->aliases);
    Py_VISIT(state->alias_attributes);
    Py_VISIT(state->op_spellings);
    Py_VISIT(state->field_operators);
    Py_VISIT(state->top_level_operators);
    Py_VISIT(state->extended_markers);
    Py_VISIT(state->number_markers);
    Py_VISIT(state->app_prefixes);
    Py_VISIT(state->fromisoformat);
    Py_VISIT(state->datetime_type);
    Py_VISIT(state->utc);
    Py_VISIT(state->zero);
    Py_VISIT(state->one);
    return 0;
}

static int state_clear(PyObject *module)
{
    State *state = module_state(module);
    if (state == NULL) {
        return 0;
    }
    for (int i = 0; i < NAME_COUNT; i++) {
        Py_CLEAR(state->names[i]);
    }
    for (int i = 0; i < CLASS_COUNT; i++) {
        Py_CLEAR(state->classes[i]);
    }
    Py_CLEAR(state->aliases);
    Py_CLEAR(state->alias_attributes);
    Py_CLEAR(state->op_spellings);
    Py_CLEAR(state->field_operators);
    Py_CLEAR(state->top_level_operators);
    Py_CLEAR(state->extended_markers);
    Py_CLEAR(state->number_markers);
    Py_CLEAR(state->app_prefixes);
    Py_CLEAR(state->fromisoformat);
    Py_CLEAR(state->datetime_type);
    Py_CLEAR(state->utc);
    Py_CLEAR(state->zero);
    Py_CLEAR(state->one);
    return 0;
}

static void state_free(void *module)
{
    state_clear((PyObject *)module);
}

static PyObject *operator_table(const OperatorClass *table, size_t count, PyObject *const *classes)
{
    PyObject *dict = PyDict_New();
    if (dict == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        if (PyDict_SetItemString(dict, table[i].name, classes[table[i].class_index]) < 0) {
            Py_DECREF(dict);
            return NULL;
        }
    }
    return dict;
}

static PyObject *string_set(const char *const *texts, size_t count)
{
    PyObject *set = PyFrozenSet_New(NULL);
    if (set == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        PyObject *text = PyUnicode_InternFromString(texts[i]);
        if (text == NULL || PySet_Add(set, text) < 0) {
            Py_XDECREF(text);
            Py_DECREF(set);
            return NULL;
        }
        Py_DECREF(text);
    }
    return set;
}

static int add_execution_slots(PyObject *module); /* with add_execution, below */

static int speedups_exec(PyObject *module)
{
    State *state = module_state(module);
    /* observe_literals keeps FieldLiterals.distinct as packed bytes (an older build kept a set: see shapes/digest.py) */
    if (PyModule_AddIntConstant(module, "LITERALS_PACKED", 1) < 0 || add_execution_slots(module) < 0) {
        return -1;
    }
    for (int i = 0; i < NAME_COUNT; i++) {
        if ((state->names[i] = PyUnicode_InternFromString(NAME_TEXTS[i])) == NULL) {
            return -1;
        }
    }
    for (int i = 0; i < CLASS_COUNT; i++) {
        if ((state->classes[i] = PyUnicode_InternFromString(CLASS_TEXTS[i])) == NULL) {
            return -1;
        }
    }
    if ((state->aliases = PyDict_New()) == NULL || (state->alias_attributes = PyTuple_New(ALIAS_COUNT)) == NULL) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < ALIAS_COUNT; i++) {
        PyObject *index = PyLong_FromSsize_t(i);
        int failed = index == NULL || PyDict_SetItemString(state->aliases, ALIASES[i].name, index) < 0;
        Py_XDECREF(index);
        PyObject *attribute = failed ? NULL : PyUnicode_InternFromString(ALIASES[i].attribute);
        if (attribute == NULL) {
            return -1;
        }
        PyTuple_SET_ITEM(state->alias_attributes, i, attribute);
    }
    if ((state->op_spellings = PyDict_New()) == NULL) {
        return -1;
    }
    for (size_t i = 0; i < OP_SPELLING_COUNT; i++) {
        PyObject *canonical = PyUnicode_InternFromString(OP_SPELLINGS[i][1]);
        int failed = canonical == NULL || PyDict_SetItemString(state->op_spellings, OP_SPELLINGS[i][0], canonical) < 0;
        Py_XDECREF(canonical);
        if (failed) {
            return -1;
        }
    }
    state->field_operators = operator_table(FIELD_OPERATORS, COUNT_OF(FIELD_OPERATORS), state->classes);
    state->top_level_operators = operator_table(TOP_LEVEL_OPERATORS, COUNT_OF(TOP_LEVEL_OPERATORS), state->classes);
    state->extended_markers = string_set(EXTENDED_JSON_MARKERS, COUNT_OF(EXTENDED_JSON_MARKERS));
    state->number_markers = string_set(NUMBER_MARKERS, COUNT_OF(NUMBER_MARKERS));
    if (state->field_operators == NULL || state->top_level_operators == NULL || state->extended_markers == NULL ||
        state->number_markers == NULL || (state->zero = PyLong_FromLong(0)) == NULL ||
        (state->one = PyLong_FromLong(1)) == NULL) {
        return -1;
    }
    if ((state->app_prefixes = PyTuple_New((Py_ssize_t)APP_PREFIX_COUNT)) == NULL) {
        return -1;
    }
    for (size_t i = 0; i < APP_PREFIX_COUNT; i++) {
        PyObject *prefix = PyUnicode_InternFromString(INTERNAL_APP_PREFIXES[i]);
        if (prefix == NULL) {
            return -1;
        }
        PyTuple_SET_ITEM(state->app_prefixes, (Py_ssize_t)i, prefix);
    }
    PyObject *datetime_module = PyImport_ImportModule("datetime");
    if (datetime_module == NULL) {
        return -1;
    }
    PyObject *timezone_type = PyObject_GetAttrString(datetime_module, "timezone");
    state->datetime_type = PyObject_GetAttrString(datetime_module, "datetime");
    Py_DECREF(datetime_module);
    if (timezone_type == NULL || state->datetime_type == NULL) {
        Py_XDECREF(timezone_type);
        return -1;
    }
    state->utc = PyObject_GetAttrString(timezone_type, "utc");
    Py_DECREF(timezone_type);
    state->fromisoformat = PyObject_GetAttrString(state->datetime_type, "fromisoformat");
    return state->fromisoformat == NULL || state->utc == NULL ? -1 : 0;
}

PyDoc_STRVAR(tables_doc,
"tables(/)\n--\n\n"
"The tables the C code was written from, as Python structures, for the test that keeps them equal to the Python\n"
"ones: field aliases {name: (attribute, kind)}, op spellings, internal databases, internal application prefixes,\n"
"field operators {operator: class}, top-level operators, Extended JSON markers, number markers.");

static PyObject *tables(PyObject *module, PyObject *unused)
{
    (void)unused;
    State *state = module_state(module);
    PyObject *aliases = PyDict_New();
    PyObject *spellings = PyDict_New();
    PyObject *databases = PyTuple_New((Py_ssize_t)COUNT_OF(INTERNAL_DATABASES));
    PyObject *prefixes = Py_NewRef(state->app_prefixes);
    PyObject *result = NULL;
    if (aliases == NULL || spellings == NULL || databases == NULL || prefixes == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < ALIAS_COUNT; i++) {
        PyObject *row = Py_BuildValue("(ss)", ALIASES[i].attribute, KIND_NAMES[ALIASES[i].kind]);
        int failed = row == NULL || PyDict_SetItemString(aliases, ALIASES[i].name, row) < 0;
        Py_XDECREF(row);
        if (failed) {
            goto done;
        }
    }
    for (size_t i = 0; i < OP_SPELLING_COUNT; i++) {
        PyObject *canonical = PyUnicode_FromString(OP_SPELLINGS[i][1]);
        int failed = canonical == NULL || PyDict_SetItemString(spellings, OP_SPELLINGS[i][0], canonical) < 0;
        Py_XDECREF(canonical);
        if (failed) {
            goto done;
        }
    }
    for (size_t i = 0; i < COUNT_OF(INTERNAL_DATABASES); i++) {
        PyObject *name = PyUnicode_FromString(INTERNAL_DATABASES[i]);
        if (name == NULL) {
            goto done;
        }
        PyTuple_SET_ITEM(databases, (Py_ssize_t)i, name);
    }
    /* copies of the module's dicts: a caller changing what it gets must not change what the C code looks up */
    result = Py_BuildValue("{sOsOsOsOsNsNsOsO}", "aliases", aliases, "op_spellings", spellings,
                           "internal_databases", databases, "internal_app_prefixes", prefixes,
                           "field_operators", PyDict_Copy(state->field_operators), "top_level_operators",
                           PyDict_Copy(state->top_level_operators), "extended_json_markers", state->extended_markers,
                           "number_markers", state->number_markers);
done:
    Py_XDECREF(aliases);
    Py_XDECREF(spellings);
    Py_XDECREF(databases);
    Py_XDECREF(prefixes);
    return result;
}

/* ---- event fields: jsonlog.event_from_entry ------------------------------------------------------------------ */

#define NAME(symbol) (state->names[N_##symbol])

/* A dict's item, borrowed; NULL when absent (check PyErr_Occurred: a lookup can fail). */
static PyObject *item(PyObject *dict, PyObject *key)
{
    return PyDict_GetItemWithError(dict, key);
}

/* What a C helper says besides a value: done, or hand the whole piece back to Python (FALLBACK), or a Python
 * error is set (FAILED). */
enum { DONE = 0, FALLBACK = 1, FAILED = -1 };

/* fields.MAX_COUNTER is 2**64 - 1: counters above 2**63 - 1 are real, but rare enough to leave to Python. */
static int is_counter(PyObject *value)
{
    if (!PyLong_CheckExact(value)) {
        return 0;
    }
    int overflow;
    long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
    return overflow == 0 && number >= 0;
}

/* timing._valid, for a plain number: 0 <= value <= MAX_COMPONENT (1e15); *out the value as a float. */
static int component_value(PyObject *value, double *out)
{
    if (PyLong_CheckExact(value)) {
        int overflow;
        long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow != 0 || number < 0 || number > 1000000000000000LL) {
            return 0;
        }
        *out = (double)number;
        return 1;
    }
    if (PyFloat_CheckExact(value)) {
        double number = PyFloat_AS_DOUBLE(value);
        if (!(number >= 0.0 && number <= 1e15)) {
            return 0;
        }
        *out = number;
        return 1;
    }
    return 0;
}

static int put_float(PyObject *dict, PyObject *key, double value)
{
    PyObject *number = PyFloat_FromDouble(value);
    if (number == NULL) {
        return FAILED;
    }
    int failed = PyDict_SetItem(dict, key, number);
    Py_DECREF(number);
    return failed < 0 ? FAILED : DONE;
}

/* One component at dict[key] when key is there (present_only) or its value is not None; FALLBACK when it is not a
 * plain number in range (Python names it as damaged, or reads Extended JSON). */
static int timing_component(PyObject *timing, PyObject *dict, PyObject *key, PyObject *name, double factor,
                            int present_only)
{
    PyObject *value = item(dict, key);
    if (value == NULL) {
        return PyErr_Occurred() ? FAILED : DONE;
    }
    if (value == Py_None && !present_only) {
        return DONE;
    }
    double number;
    if (!component_value(value, &number)) {
        return FALLBACK;
    }
    return put_float(timing, name, number * factor);
}

/* timing.read_timing(attr) for the lines whose components are all plain numbers in range: *timing a new dict, or
 * NULL when there are none; FALLBACK for anything damaged or in Extended JSON. */
static int read_timing(State *state, PyObject *attr, PyObject **timing_out)
{
    static const int FLAT[][2] = {{N_WORKING_MILLIS, N_WORKING_MS}, {N_OPLOG_SLOT, N_OPLOG_SLOT_MS},
                                  {N_WRITE_CONCERN, N_WRITE_CONCERN_MS}, {N_WRITE_CONFLICTS, N_WRITE_CONFLICTS_NAME},
                                  {N_PLANNING, N_PLANNING_MS}, {N_CPU_NANOS, N_CPU_MS}};
    static const double FLAT_FACTORS[] = {1.0, 1e-3, 1.0, 1.0, 1e-3, 1e-6};
    static const int QUEUES[][3] = {{N_EXECUTION, N_QUEUED_MICROS, N_QUEUED_MS},
                                    {N_INGRESS, N_QUEUED_MICROS, N_INGRESS_QUEUED_MS},
                                    {N_EXECUTION, N_ADMISSIONS, N_ADMISSIONS}};
    static const double QUEUE_FACTORS[] = {1e-3, 1e-3, 1.0};
    static const int STORAGE[][2] = {{N_READING_MICROS, N_DISK_READ_MS}, {N_BYTES_READ, N_BYTES_READ_NAME}};
    static const double STORAGE_FACTORS[] = {1e-3, 1.0};

    *timing_out = NULL;
    PyObject *queues = item(attr, NAME(QUEUES)), *storage = NULL, *locks = NULL, *flow = NULL;
    if (queues == NULL && PyErr_Occurred()) {
        return FAILED;
    }
    int any = queues != NULL;
    if (!any) {
        static const int KEYS[] = {N_WORKING_MILLIS, N_STORAGE, N_LOCKS, N_FLOW_CONTROL, N_OPLOG_SLOT,
                                   N_WRITE_CONCERN, N_WRITE_CONFLICTS, N_PLANNING, N_CPU_NANOS};
        for (size_t i = 0; i < COUNT_OF(KEYS) && !any; i++) {
            int found = PyDict_Contains(attr, state->names[KEYS[i]]);
            if (found < 0) {
                return FAILED;
            }
            any = found;
        }
        if (!any) {
            return DONE;
        }
    }
    PyObject *timing = PyDict_New();
    if (timing == NULL) {
        return FAILED;
    }
    int status = DONE;
    for (size_t i = 0; i < COUNT_OF(FLAT) && status == DONE; i++) {
        status = timing_component(timing, attr, state->names[FLAT[i][0]], state->names[FLAT[i][1]], FLAT_FACTORS[i],
                                  0);
    }
    if (status == DONE && queues != NULL && PyDict_CheckExact(queues)) {
        for (size_t i = 0; i < COUNT_OF(QUEUES) && status == DONE; i++) {
            PyObject *inner = item(queues, state->names[QUEUES[i][0]]);
            if (inner == NULL) {
                status = PyErr_Occurred() ? FAILED : DONE;
            } else if (PyDict_CheckExact(inner)) {
                status = timing_component(timing, inner, state->names[QUEUES[i][1]], state->names[QUEUES[i][2]],
                                          QUEUE_FACTORS[i], 1);
            }
        }
    }
    if (status == DONE && (storage = item(attr, NAME(STORAGE))) != NULL && PyDict_CheckExact(storage)) {
        PyObject *data = item(storage, NAME(DATA));
        if (data != NULL && PyDict_CheckExact(data)) {
            for (size_t i = 0; i < COUNT_OF(STORAGE) && status == DONE; i++) {
                status = timing_component(timing, data, state->names[STORAGE[i][0]], state->names[STORAGE[i][1]],
                                          STORAGE_FACTORS[i], 1);
            }
        }
    }
    if (status == DONE && PyErr_Occurred()) {
        status = FAILED;
    }
    if (status == DONE && (locks = item(attr, NAME(LOCKS))) != NULL && PyDict_CheckExact(locks)) {
        /* timing._lock_waits: every resource's waits, every mode, summed in the order Python sums them */
        double total = 0.0;
        int found = 0;
        Py_ssize_t position = 0;
        PyObject *resource, *counters;
        while (status == DONE && PyDict_Next(locks, &position, &resource, &counters)) {
            if (!PyDict_CheckExact(counters)) {
                continue;
            }
            PyObject *by_mode = item(counters, NAME(ACQUIRING_MICROS));
            if (by_mode == NULL) {
                status = PyErr_Occurred() ? FAILED : DONE;
                continue;
            }
            double number;
            if (PyDict_CheckExact(by_mode)) {
                Py_ssize_t mode_position = 0;
                PyObject *mode, *value;
                if (PyDict_GET_SIZE(by_mode) == 1) {
                    PyDict_Next(by_mode, &mode_position, &mode, &value);
                    mode_position = 0;
                    if (!PyUnicode_Check(mode) || PyUnicode_GET_LENGTH(mode) == 0 ||
                        PyUnicode_READ_CHAR(mode, 0) == '$') {
                        status = FALLBACK; /* one Extended JSON number, or a key Python cannot test */
                        continue;
                    }
                }
                while (status == DONE && PyDict_Next(by_mode, &mode_position, &mode, &value)) {
                    if (!component_value(value, &number)) {
                        status = FALLBACK;
                    } else {
                        total += number;
                        found = 1;
                    }
                }
            } else if (!component_value(by_mode, &number)) {
                status = FALLBACK;
            } else {
                total += number;
                found = 1;
            }
        }
        if (status == DONE && found) {
            status = put_float(timing, NAME(LOCK_WAIT_MS), total * 1e-3);
        }
    }
    if (status == DONE && PyErr_Occurred()) {
        status = FAILED;
    }
    if (status == DONE && (flow = item(attr, NAME(FLOW_CONTROL))) != NULL && PyDict_CheckExact(flow)) {
        status = timing_component(timing, flow, NAME(ACQUIRING_MICROS), NAME(FLOW_CONTROL_MS), 1e-3, 1);
    }
    if (status == DONE && PyErr_Occurred()) {
        status = FAILED;
    }
    if (status != DONE || PyDict_GET_SIZE(timing) == 0) {
        Py_DECREF(timing);
        return status;
    }
    *timing_out = timing;
    return DONE;
}

/* One attr value of an alias's kind, as read_entry_fields takes it without converting (anything else: FALLBACK). */
static int accepted(int kind, PyObject *value)
{
    switch (kind) {
    case KIND_INT:
        return is_counter(value);
    case KIND_FLOAT:
        return PyLong_CheckExact(value) || PyFloat_CheckExact(value);
    case KIND_BOOL:
        return PyBool_Check(value);
    default:
        return PyUnicode_CheckExact(value);
    }
}

/* fields.read_entry_fields(attr), for an attr whose aliased values are all of their kind and whose duration is
 * real; FALLBACK otherwise (Python converts, or counts a problem). */
static int read_entry_fields(State *state, PyObject *attr, PyObject *fields)
{
    if (PyDict_GET_SIZE(attr) > 64) { /* fields.LAYOUT_KEY_LIMIT: Python takes read_fields */
        return FALLBACK;
    }
    Py_ssize_t position = 0;
    PyObject *key, *value;
    while (PyDict_Next(attr, &position, &key, &value)) {
        PyObject *index = item(state->aliases, key);
        if (index == NULL) {
            if (PyErr_Occurred()) {
                return FAILED;
            }
            continue;
        }
        const Alias *alias = &ALIASES[PyLong_AsSsize_t(index)];
        if (value == Py_None) {
            if (alias->kind == KIND_FLOAT) {
                return FALLBACK; /* "durationMillis": null is a problem */
            }
            continue;
        }
        if (!accepted(alias->kind, value)) {
            return FALLBACK;
        }
        if (PyDict_SetItem(fields, PyTuple_GET_ITEM(state->alias_attributes, PyLong_AsSsize_t(index)), value) < 0) {
            return FAILED;
        }
    }
    PyObject *duration = item(fields, NAME(DURATION_MS));
    if (duration == NULL) {
        return PyErr_Occurred() ? FAILED : DONE;
    }
    if (PyFloat_CheckExact(duration)) {
        double number = PyFloat_AS_DOUBLE(duration);
        return number >= 0.0 && number <= 1e12 ? DONE : FALLBACK;
    }
    int overflow;
    long long number = PyLong_AsLongLongAndOverflow(duration, &overflow);
    return overflow == 0 && number >= 0 && number <= 1000000000000LL ? DONE : FALLBACK;
}

static int has_prefix(PyObject *text, PyObject *prefix)
{
    return (int)PyUnicode_Tailmatch(text, prefix, 0, PY_SSIZE_T_MAX, -1);
}

/* classify.internal_reason: a new reference to the reason, Py_None, or NULL with an error. */
static PyObject *internal_reason(State *state, PyObject *ns, PyObject *connection, PyObject *app_name,
                                 PyObject *from_user_connection)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(ns);
    Py_ssize_t dot = PyUnicode_FindChar(ns, '.', 0, length, 1);
    if (dot == -2) {
        return NULL;
    }
    PyObject *database = PyUnicode_Substring(ns, 0, dot < 0 ? length : dot);
    if (database == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < COUNT_OF(INTERNAL_DATABASES); i++) {
        if (PyUnicode_CompareWithASCIIString(database, INTERNAL_DATABASES[i]) == 0) {
            PyObject *reason = PyUnicode_FromFormat("internal database '%U'", database);
            Py_DECREF(database);
            return reason;
        }
    }
    Py_DECREF(database);
    if (dot >= 0) {
        PyObject *collection = PyUnicode_Substring(ns, dot + 1, length);
        if (collection == NULL) {
            return NULL;
        }
        int is_system = (int)PyUnicode_Tailmatch(collection, NAME(SYSTEM_PREFIX), 0, PY_SSIZE_T_MAX, -1);
        if (is_system == 0) {
            is_system = PyUnicode_Contains(collection, NAME(SYSTEM_INFIX));
        }
        Py_DECREF(collection);
        if (is_system < 0) {
            return NULL;
        }
        if (is_system) {
            return Py_NewRef(NAME(SYSTEM_COLLECTION));
        }
    }
    if (from_user_connection == Py_False) {
        return Py_NewRef(NAME(INTERNAL_CONNECTION));
    }
    if (connection != Py_None && PyUnicode_GET_LENGTH(connection) > 0) {
        int user = has_prefix(connection, NAME(CONN));
        if (user < 0) {
            return NULL;
        }
        if (!user) {
            return PyUnicode_FromFormat("internal thread '%U'", connection);
        }
    }
    if (app_name != NULL && PyUnicode_GET_LENGTH(app_name) > 0) {
        for (size_t i = 0; i < APP_PREFIX_COUNT; i++) {
            int matched = has_prefix(app_name, PyTuple_GET_ITEM(state->app_prefixes, (Py_ssize_t)i));
            if (matched < 0) {
                return NULL;
            }
            if (matched) {
                return PyUnicode_FromFormat("internal client '%U'", app_name);
            }
        }
    }
    Py_RETURN_NONE;
}

/* jsonlog.parse_timestamp, where checked_timestamp keeps the stamp as it is (an offset, a year strictly inside
 * 1970-9999 but the last): *ts a new reference; FALLBACK for the rest. */
static int parse_timestamp(State *state, PyObject *entry, PyObject **ts)
{
    *ts = NULL;
    PyObject *stamp = item(entry, NAME(T));
    PyObject *text = stamp != NULL && PyDict_CheckExact(stamp) ? item(stamp, NAME(DATE)) : NULL;
    if (PyErr_Occurred()) {
        return FAILED;
    }
    if (text == NULL || !PyUnicode_CheckExact(text)) {
        *ts = Py_NewRef(Py_None);
        return DONE;
    }
    PyObject *parsed = PyObject_CallOneArg(state->fromisoformat, text);
    if (parsed == NULL) {
        PyErr_Clear(); /* Python reads it as no timestamp (ValueError), or fails the same way itself */
        return FALLBACK;
    }
    PyObject *tzinfo = PyObject_GetAttr(parsed, NAME(TZINFO));
    PyObject *year = tzinfo != NULL ? PyObject_GetAttr(parsed, NAME(YEAR)) : NULL;
    int status = FAILED;
    if (year != NULL) {
        long value = PyLong_AsLong(year);
        if (value == -1 && PyErr_Occurred()) {
            status = FAILED;
        } else {
            status = tzinfo != Py_None && value > 1970 && value < 9998 ? DONE : FALLBACK;
        }
    }
    Py_XDECREF(tzinfo);
    Py_XDECREF(year);
    if (status == DONE) {
        *ts = parsed;
    } else {
        Py_DECREF(parsed);
    }
    return status;
}

/* The first key of a non-empty dict, borrowed. */
static PyObject *first_key(PyObject *dict)
{
    Py_ssize_t position = 0;
    PyObject *key, *value;
    return PyDict_Next(dict, &position, &key, &value) ? key : NULL;
}

/* The op of event_from_entry, borrowed: the first key of the command (or the entry's type), canonically spelled. */
static PyObject *entry_op(State *state, PyObject *command, PyObject *entry_type)
{
    PyObject *name = NULL;
    if (command != Py_None && PyDict_GET_SIZE(command) > 0) {
        Py_ssize_t position = 0;
        PyObject *value;
        PyDict_Next(command, &position, &name, &value);
        if (PyUnicode_GET_LENGTH(name) == 0) {
            name = NULL;
        }
    }
    if (name == NULL) {
        name = entry_type != NULL && PyUnicode_CheckExact(entry_type) ? entry_type : NAME(EMPTY);
    }
    if (PyUnicode_GET_LENGTH(name) == 0) {
        return NAME(UNKNOWN);
    }
    PyObject *canonical = item(state->op_spellings, name);
    if (canonical == NULL && !PyErr_Occurred()) {
        return name;
    }
    return canonical;
}

/* classify.resolve_namespace: a new reference. */
static PyObject *resolve_namespace(State *state, PyObject *ns, PyObject *op, PyObject *command)
{
    int suffixed = (int)PyUnicode_Tailmatch(ns, NAME(CMD_SUFFIX), 0, PY_SSIZE_T_MAX, 1);
    if (suffixed < 0) {
        return NULL;
    }
    if (suffixed && command != Py_None) {
        PyObject *target = item(command, op);
        if (target == NULL && PyErr_Occurred()) {
            return NULL;
        }
        if (target != NULL && PyUnicode_CheckExact(target) && PyUnicode_GET_LENGTH(target) > 0) {
            PyObject *database = PyUnicode_Substring(ns, 0, PyUnicode_GET_LENGTH(ns) - 4);
            if (database == NULL) {
                return NULL;
            }
            PyObject *resolved = PyUnicode_Concat(database, target);
            Py_DECREF(database);
            return resolved;
        }
    }
    return Py_NewRef(ns);
}

static int set_item(PyObject *fields, PyObject *key, PyObject *value)
{
    return PyDict_SetItem(fields, key, value) < 0 ? FAILED : DONE;
}

/* The body of event_fields once attr is known to be a dict: fills fields; FALLBACK or FAILED as above. */
static int entry_fields(State *state, PyObject *entry, PyObject *attr, PyObject *fields)
{
    int status = read_entry_fields(state, attr, fields);
    if (status != DONE) {
        return status;
    }
    PyObject *command = item(attr, NAME(COMMAND));
    PyObject *entry_type = command != NULL || !PyErr_Occurred() ? item(attr, NAME(TYPE)) : NULL;
    PyObject *raw_ns = entry_type != NULL || !PyErr_Occurred() ? item(attr, NAME(NS)) : NULL;
    if (PyErr_Occurred()) {
        return FAILED;
    }
    if (command == NULL || !PyDict_CheckExact(command)) {
        command = Py_None;
    }
    if (command != Py_None && PyDict_GET_SIZE(command) > 0 && !PyUnicode_CheckExact(first_key(command))) {
        return FALLBACK; /* not from orjson: Python spells the op from whatever the key is */
    }
    int statement = 0;
    PyObject *op;
    if (entry_type != NULL && PyUnicode_Check(entry_type) &&
        (PyUnicode_Compare(entry_type, NAME(UPDATE)) == 0 || PyUnicode_Compare(entry_type, NAME(REMOVE)) == 0)) {
        statement = 1;
        op = PyUnicode_Compare(entry_type, NAME(UPDATE)) == 0 ? NAME(UPDATE) : NAME(DELETE);
    } else if ((op = entry_op(state, command, entry_type)) == NULL) {
        return FAILED;
    }
    PyObject *ns = raw_ns != NULL && PyUnicode_CheckExact(raw_ns) ? raw_ns : NAME(EMPTY);
    ns = statement ? Py_NewRef(ns) : resolve_namespace(state, ns, op, command);
    if (ns == NULL) {
        return FAILED;
    }
    PyObject *connection = item(entry, NAME(CTX)), *ts = NULL, *internal = NULL;
    if (connection == NULL || !PyUnicode_CheckExact(connection)) {
        connection = Py_None;
    }
    PyObject *originating = item(attr, NAME(ORIGINATING));
    if (originating != NULL && PyDict_CheckExact(originating)) {
        if ((status = set_item(fields, NAME(ORIGINATING_COMMAND), originating)) != DONE) {
            goto done;
        }
    }
    PyObject *truncated = item(entry, NAME(TRUNCATED));
    if (truncated != NULL && PyDict_CheckExact(truncated)) {
        int cut = PyDict_Contains(truncated, NAME(COMMAND));
        if (cut == 0) {
            cut = PyDict_Contains(truncated, NAME(ORIGINATING));
        }
        if (cut < 0 || (cut && (status = set_item(fields, NAME(TRUNCATED), Py_True)) != DONE)) {
            status = FAILED;
            goto done;
        }
    }
    PyObject *ok = item(attr, NAME(OK));
    if (ok != NULL) {
        int failed_op = PyObject_RichCompareBool(ok, state->zero, Py_EQ);
        int has_error = failed_op > 0 ? PyDict_Contains(fields, NAME(ERROR)) : 0;
        if (failed_op < 0 || has_error < 0) {
            status = FAILED;
            goto done;
        }
        if (failed_op && !has_error && (status = set_item(fields, NAME(ERROR), NAME(FAILED))) != DONE) {
            goto done;
        }
    }
    if (PyErr_Occurred()) {
        status = FAILED;
        goto done;
    }
    PyObject *timing;
    if ((status = read_timing(state, attr, &timing)) != DONE) {
        goto done;
    }
    if (timing != NULL) {
        status = set_item(fields, NAME(TIMING), timing);
        Py_DECREF(timing);
        if (status != DONE) {
            goto done;
        }
    }
    PyObject *from_user = item(attr, NAME(FROM_USER));
    PyObject *app_name = from_user != NULL || !PyErr_Occurred() ? item(fields, NAME(APP_NAME)) : NULL;
    if (PyErr_Occurred() || (internal = internal_reason(state, ns, connection, app_name, from_user)) == NULL) {
        status = FAILED;
        goto done;
    }
    if (internal != Py_None && (status = set_item(fields, NAME(INTERNAL), internal)) != DONE) {
        goto done;
    }
    if ((status = parse_timestamp(state, entry, &ts)) != DONE) {
        goto done;
    }
    if (set_item(fields, NAME(NS), ns) != DONE || set_item(fields, NAME(OP), op) != DONE ||
        set_item(fields, NAME(TS), ts) != DONE || set_item(fields, NAME(COMMAND), command) != DONE ||
        set_item(fields, NAME(CONNECTION), connection) != DONE ||
        set_item(fields, NAME(STATEMENT), statement ? Py_True : Py_False) != DONE) {
        status = FAILED;
    }
done:
    Py_DECREF(ns);
    Py_XDECREF(ts);
    Py_XDECREF(internal);
    return status;
}

PyDoc_STRVAR(event_fields_doc,
"event_fields(entry, /)\n--\n\n"
"The fields dict jsonlog.event_from_entry builds for one orjson-parsed slow-query entry (Event.from_fields takes\n"
"it), or None where the Python path must build the event: no attr, a value of the wrong kind, a damaged duration\n"
"or time component, Extended JSON numbers, a timestamp without an offset or near the ends of 1970-9999 ...");

static PyObject *event_fields(PyObject *module, PyObject *entry)
{
    State *state = module_state(module);
    if (!PyDict_CheckExact(entry)) {
        Py_RETURN_NONE;
    }
    PyObject *attr = item(entry, NAME(ATTR));
    if (attr == NULL || !PyDict_CheckExact(attr)) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    PyObject *fields = PyDict_New();
    if (fields == NULL) {
        return NULL;
    }
    int status = entry_fields(state, entry, attr, fields);
    if (status == DONE) {
        return fields;
    }
    Py_DECREF(fields);
    if (status == FAILED) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ---- a text log's slow-operation line: textlog.split_line + textlog.slow_operation_match ---------------------- */
/* Only the common line is read here: an ISO-8601 timestamp with an offset or a ctime one, ASCII up to the thread, no truncation
 * warning, a duration of plain ASCII digits. Anything else is handed back (None) and the Python path reads the line,
 * whole. Characters are read through PyUnicode_READ, so a line of any kind is taken; the class tests are the ones
 * re uses for str patterns (\s is Py_UNICODE_ISSPACE), and a non-ASCII character where LINE reads digits, zones or
 * severities makes the C code decline, since \d takes any Unicode digit. */

static const char *const TEXT_OP_WORDS[] = {"query", "getmore", "update", "remove", "insert", "command", "killcursors"};
#define MAX_DURATION_DIGITS 13 /* len(str(int(fields.MAX_DURATION_MS))) */

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t length;
} Text;

static Py_UCS4 text_at(const Text *text, Py_ssize_t index)
{
    return index < text->length ? PyUnicode_READ(text->kind, text->data, index) : 0;
}

static int ascii_digits(const Text *text, Py_ssize_t start, Py_ssize_t count)
{
    for (Py_ssize_t i = start; i < start + count; i++) {
        Py_UCS4 c = text_at(text, i);
        if (c < '0' || c > '9') {
            return 0;
        }
    }
    return 1;
}

static int text_has(const Text *text, Py_ssize_t at, const char *literal)
{
    for (Py_ssize_t i = 0; literal[i] != '\0'; i++) {
        if (text_at(text, at + i) != (Py_UCS4)(unsigned char)literal[i]) {
            return 0;
        }
    }
    return 1;
}

/* The end of LINE's ISO timestamp from 0, or -1 when the line does not start with one this code reads. */
static Py_ssize_t iso_end(const Text *text)
{
    static const char LAYOUT[] = "dddd-dd-ddTdd:dd:dd";
    Py_ssize_t at = 0;
    for (; LAYOUT[at] != '\0'; at++) {
        Py_UCS4 c = text_at(text, at);
        if (LAYOUT[at] == 'd' ? (c < '0' || c > '9') : c != (Py_UCS4)LAYOUT[at]) {
            return -1;
        }
    }
    if (text_at(text, at) == '.') {
        Py_ssize_t digits = at + 1;
        while (ascii_digits(text, digits, 1)) {
            digits++;
        }
        if (digits == at + 1) {
            return -1;
        }
        at = digits;
    }
    Py_UCS4 sign = text_at(text, at);
    if (sign == 'Z') {
        return at + 1;
    }
    if (sign != '+' && sign != '-') {
        return -1; /* no zone: a naive stamp, which checked_timestamp makes UTC (left to Python) */
    }
    if (!ascii_digits(text, at + 1, 2)) {
        return -1;
    }
    Py_ssize_t minutes = text_at(text, at + 3) == ':' ? at + 4 : at + 3;
    return ascii_digits(text, minutes, 2) ? minutes + 2 : -1;
}

/* At least one whitespace character from at: the end of the run, or -1. A non-ASCII one declines (it is whitespace to
 * re only sometimes, and this code does not need to know which). */
static Py_ssize_t spaces_end(const Text *text, Py_ssize_t at)
{
    Py_ssize_t start = at;
    while (at < text->length && text_at(text, at) < 128 && Py_UNICODE_ISSPACE(text_at(text, at))) {
        at++;
    }
    if (at == start || (at < text->length && text_at(text, at) >= 128)) {
        return -1;
    }
    return at;
}

/* The start of LINE's "[context]" after the timestamp (past the optional severity and component), or -1. */
static Py_ssize_t context_start(const Text *text, Py_ssize_t at)
{
    if ((at = spaces_end(text, at)) < 0) {
        return -1;
    }
    Py_UCS4 c = text_at(text, at);
    if (c == 'F' || c == 'E' || c == 'W' || c == 'I' || c == 'D') {
        at++;
        if (ascii_digits(text, at, 1)) {
            at++;
        }
        if ((at = spaces_end(text, at)) < 0) {
            return -1;
        }
        if (text_at(text, at) == '-') {
            at++;
        } else {
            Py_ssize_t word = at;
            for (c = text_at(text, at); (c >= 'A' && c <= 'Z') || c == '_'; c = text_at(text, ++at)) {
            }
            if (at == word) {
                return -1;
            }
        }
        if ((at = spaces_end(text, at)) < 0) {
            return -1;
        }
    }
    return text_at(text, at) == '[' ? at : -1;
}

/* fromisoformat(stamp), kept when checked_timestamp keeps it as it is (an offset, a year well inside 1970-9999):
 * a new reference, NULL with no error set to decline, NULL with an error on failure. */
static PyObject *iso_timestamp(State *state, PyObject *stamp)
{
    PyObject *parsed = PyObject_CallOneArg(state->fromisoformat, stamp);
    if (parsed == NULL) {
        PyErr_Clear(); /* a ValueError is no timestamp to Python: its path says so itself */
        return NULL;
    }
    PyObject *tzinfo = PyObject_GetAttr(parsed, NAME(TZINFO));
    PyObject *year = tzinfo != NULL ? PyObject_GetAttr(parsed, NAME(YEAR)) : NULL;
    long value = year != NULL ? PyLong_AsLong(year) : -1;
    int keep = year != NULL && !PyErr_Occurred() && tzinfo != Py_None && value > 1970 && value < 9998;
    Py_XDECREF(tzinfo);
    Py_XDECREF(year);
    if (!keep) {
        Py_CLEAR(parsed);
    }
    return parsed;
}

/* The end of LINE's ctime timestamp ("Fri Jun  1 10:00:00.123") from 0, with its parts, or -1. */
typedef struct {
    int weekday, month, day, hour, minute, second, micros;
} Ctime;

static int two_digits(const Text *text, Py_ssize_t at)
{
    return (int)(text_at(text, at) - '0') * 10 + (int)(text_at(text, at + 1) - '0');
}

static Py_ssize_t ctime_end(const Text *text, Ctime *parts)
{
    parts->weekday = parts->month = -1;
    for (int i = 0; i < 7; i++) {
        if (text_has(text, 0, WEEKDAYS[i])) {
            parts->weekday = i;
        }
    }
    for (int i = 0; i < 12; i++) {
        if (text_has(text, 4, MONTHS[i])) {
            parts->month = i + 1;
        }
    }
    if (parts->weekday < 0 || parts->month < 0 || text_at(text, 3) != ' ' || text_at(text, 7) != ' ') {
        return -1;
    }
    Py_ssize_t at = text_at(text, 8) == ' ' ? 9 : 8;
    if (!ascii_digits(text, at, 1)) {
        return -1;
    }
    parts->day = (int)(text_at(text, at) - '0');
    if (ascii_digits(text, ++at, 1)) {
        parts->day = parts->day * 10 + (int)(text_at(text, at++) - '0');
    }
    if (!text_has(text, at, " ") || !ascii_digits(text, at + 1, 2) || text_at(text, at + 3) != ':' ||
        !ascii_digits(text, at + 4, 2) || text_at(text, at + 6) != ':' || !ascii_digits(text, at + 7, 2)) {
        return -1;
    }
    parts->hour = two_digits(text, at + 1);
    parts->minute = two_digits(text, at + 4);
    parts->second = two_digits(text, at + 7);
    at += 9;
    parts->micros = 0;
    if (text_at(text, at) == '.') {
        Py_ssize_t digits = at + 1;
        int scale = 100000;
        while (ascii_digits(text, digits, 1)) {
            parts->micros += (int)(text_at(text, digits) - '0') * scale; /* (fraction + "000000")[:6] */
            scale /= 10;
            digits++;
        }
        if (digits == at + 1) {
            return -1;
        }
        at = digits;
    }
    return at;
}

static int days_in_month(int year, int month)
{
    static const int DAYS[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : DAYS[month - 1];
}

/* datetime(year, month, day).weekday(): Monday is 0. */
static int weekday_of(int year, int month, int day)
{
    static const int OFFSETS[] = {0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4};
    year -= month < 3;
    int sunday_first = (year + year / 4 - year / 100 + year / 400 + OFFSETS[month - 1] + day) % 7;
    return (sunday_first + 6) % 7;
}

/* textlog._timestamp for a ctime stamp: the UTC datetime of the latest year <= reference_year (within 40) on which
 * the date fell on its weekday, as checked_timestamp keeps it; NULL without an error to decline (no such year, a
 * time of day datetime refuses, a year near the ends of 1970-9999), NULL with an error on failure. */
static PyObject *ctime_timestamp(State *state, const Ctime *parts, long reference_year)
{
    if (reference_year < 2000 || reference_year > 9997 || parts->hour > 23 || parts->minute > 59 ||
        parts->second > 59 || parts->day < 1) {
        return NULL;
    }
    for (long year = reference_year; year > reference_year - 40; year--) {
        if (parts->day > days_in_month((int)year, parts->month)) {
            continue;
        }
        if (weekday_of((int)year, parts->month, parts->day) != parts->weekday) {
            continue;
        }
        if (year <= 1970) {
            return NULL;
        }
        PyObject *args[8] = {PyLong_FromLong(year), PyLong_FromLong(parts->month), PyLong_FromLong(parts->day),
                             PyLong_FromLong(parts->hour), PyLong_FromLong(parts->minute),
                             PyLong_FromLong(parts->second), PyLong_FromLong(parts->micros), state->utc};
        PyObject *stamp = NULL;
        if (args[0] != NULL && args[1] != NULL && args[2] != NULL && args[3] != NULL && args[4] != NULL &&
            args[5] != NULL && args[6] != NULL) {
            stamp = PyObject_Vectorcall(state->datetime_type, args, 8, NULL);
        }
        for (int i = 0; i < 7; i++) {
            Py_XDECREF(args[i]);
        }
        return stamp;
    }
    return NULL;
}

PyDoc_STRVAR(text_slow_line_doc,
"text_slow_line(line, reference_year, /)\n--\n\n"
"What textlog.split_line and textlog.slow_operation_match give for a common slow-operation line of a text log:\n"
"(ts, context, op, ns, body, duration), with duration an int of at most 13 digits and the line not truncated.\n"
"None where the Python path must read the line, whole: another timestamp layout or none, a truncation warning, a\n"
"damaged or missing duration, a line that is no slow operation, a timestamp Python would not keep as it is.");

static PyObject *text_slow_line(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "text_slow_line expected 2 arguments, got %zd", nargs);
        return NULL;
    }
    PyObject *line = args[0];
    if (!PyUnicode_CheckExact(line)) {
        PyErr_SetString(PyExc_TypeError, "text_slow_line: line must be a str");
        return NULL;
    }
    long reference_year = PyLong_Check(args[1]) ? PyLong_AsLong(args[1]) : 0;
    if (reference_year == -1 && PyErr_Occurred()) {
        PyErr_Clear(); /* far out of range: ctime lines are declined (ctime_timestamp) */
        reference_year = 0;
    }
    Text text = {PyUnicode_KIND(line), PyUnicode_DATA(line), PyUnicode_GET_LENGTH(line)};
    Ctime ctime = {0, 0, 0, 0, 0, 0, 0};
    int is_ctime = 0;
    Py_ssize_t stamp_end = iso_end(&text);
    if (stamp_end < 0) {
        stamp_end = ctime_end(&text, &ctime);
        is_ctime = stamp_end >= 0;
    }
    Py_ssize_t open = stamp_end < 0 ? -1 : context_start(&text, stamp_end);
    if (open < 0) {
        Py_RETURN_NONE;
    }
    Py_ssize_t close = PyUnicode_FindChar(line, ']', open + 1, text.length, 1);
    if (close == -2) {
        return NULL;
    }
    if (close < 0 || text_at(&text, close + 1) != ' ') {
        Py_RETURN_NONE;
    }
    Py_ssize_t message = close + 2;
    if (text_has(&text, message, "warning: ")) {
        Py_RETURN_NONE; /* maybe a truncation warning: cut lines are Python's */
    }
    Py_ssize_t op_end = -1;
    for (size_t i = 0; i < COUNT_OF(TEXT_OP_WORDS) && op_end < 0; i++) {
        if (text_has(&text, message, TEXT_OP_WORDS[i])) {
            op_end = message + (Py_ssize_t)strlen(TEXT_OP_WORDS[i]);
        }
    }
    if (op_end < 0 || text_at(&text, op_end) != ' ') {
        Py_RETURN_NONE;
    }
    Py_ssize_t ns_end = op_end + 1;
    while (ns_end < text.length && !Py_UNICODE_ISSPACE(text_at(&text, ns_end))) {
        ns_end++;
    }
    Py_ssize_t end = text.length; /* message.rstrip() */
    while (end > ns_end && Py_UNICODE_ISSPACE(text_at(&text, end - 1))) {
        end--;
    }
    if (ns_end == op_end + 1 || end - 2 <= ns_end || text_at(&text, end - 2) != 'm' || text_at(&text, end - 1) != 's') {
        Py_RETURN_NONE;
    }
    Py_ssize_t last_space = PyUnicode_FindChar(line, ' ', ns_end, end, -1);
    if (last_space == -2) {
        return NULL;
    }
    Py_ssize_t digits = end - 2 - (last_space + 1);
    if (last_space < 0 || digits < 1 || digits > MAX_DURATION_DIGITS || !ascii_digits(&text, last_space + 1, digits)) {
        Py_RETURN_NONE;
    }
    long long duration = 0;
    for (Py_ssize_t i = last_space + 1; i < end - 2; i++) {
        duration = duration * 10 + (long long)(text_at(&text, i) - '0');
    }
    State *state = module_state(module);
    PyObject *ts = NULL;
    if (is_ctime) {
        ts = ctime_timestamp(state, &ctime, reference_year);
    } else {
        PyObject *stamp = PyUnicode_Substring(line, 0, stamp_end);
        ts = stamp != NULL ? iso_timestamp(state, stamp) : NULL;
        Py_XDECREF(stamp);
    }
    if (ts == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    PyObject *result = PyTuple_New(6);
    if (result == NULL) {
        Py_DECREF(ts);
        return NULL;
    }
    PyTuple_SET_ITEM(result, 0, ts);
    PyObject *parts[5] = {
        PyUnicode_Substring(line, open + 1, close), PyUnicode_Substring(line, message, op_end),
        PyUnicode_Substring(line, op_end + 1, ns_end), PyUnicode_Substring(line, ns_end, last_space),
        PyLong_FromLongLong(duration),
    };
    int failed = 0;
    for (int i = 0; i < 5; i++) {
        failed = failed || parts[i] == NULL;
        PyTuple_SET_ITEM(result, i + 1, parts[i]); /* a NULL item is skipped when the tuple is freed */
    }
    if (failed) {
        Py_DECREF(result);
        return NULL;
    }
    return result;
}

/* A str, or NULL for None (internal_reason's app_name); -1 for anything else (declined). */
static int optional_text(PyObject *value, PyObject **text)
{
    *text = value == Py_None ? NULL : value;
    return value == Py_None || PyUnicode_CheckExact(value) ? 0 : -1;
}

PyDoc_STRVAR(text_event_doc,
"text_event(parts, memo, from_fields, source_format, /)\n--\n\n"
"textlog.event_from_parts(*parts) for the parts text_slow_line gave, when the line's body is in memo\n"
"(textlog._BODY_MEMO): (event, problem), the event built with from_fields (Event.from_fields) from the same fields in\n"
"the same order, its internal reason set. None where the Python function must build it: a body not remembered, a\n"
"duration above MAX_DURATION_MS.");

static PyObject *text_event(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != 6 || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "text_event expects (parts, memo, from_fields, source_format)");
        return NULL;
    }
    State *state = module_state(module);
    PyObject *parts = args[0];
    PyObject *ts = PyTuple_GET_ITEM(parts, 0), *context = PyTuple_GET_ITEM(parts, 1);
    PyObject *op_word = PyTuple_GET_ITEM(parts, 2), *ns = PyTuple_GET_ITEM(parts, 3);
    PyObject *body = PyTuple_GET_ITEM(parts, 4), *duration = PyTuple_GET_ITEM(parts, 5);
    if (!PyLong_CheckExact(duration) || !PyUnicode_CheckExact(op_word)) {
        Py_RETURN_NONE;
    }
    long long milliseconds = PyLong_AsLongLong(duration);
    if (milliseconds == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (milliseconds > 1000000000000LL) { /* fields.MAX_DURATION_MS: a counted problem, built in Python */
        Py_RETURN_NONE;
    }
    PyObject *key = PyTuple_Pack(4, op_word, ns, body, Py_False);
    if (key == NULL) {
        return NULL;
    }
    PyObject *known = PyDict_GetItemWithError(args[1], key); /* borrowed */
    Py_DECREF(key);
    if (known == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    if (!PyTuple_CheckExact(known) || PyTuple_GET_SIZE(known) != 2 || !PyDict_CheckExact(PyTuple_GET_ITEM(known, 0))) {
        Py_RETURN_NONE;
    }
    Py_INCREF(known); /* held while Python code (from_fields) may change the memo */
    PyObject *op = PyDict_GetItemWithError(state->op_spellings, op_word); /* classify.canonical_op */
    if (op == NULL && PyErr_Occurred()) {
        Py_DECREF(known);
        return NULL;
    }
    PyObject *fields = PyDict_New();
    if (fields == NULL || PyDict_SetItem(fields, NAME(NS), ns) < 0 ||
        PyDict_SetItem(fields, NAME(OP), op != NULL ? op : op_word) < 0 || PyDict_SetItem(fields, NAME(TS), ts) < 0 ||
        PyDict_SetItem(fields, NAME(CONNECTION), context) < 0 ||
        PyDict_SetItem(fields, NAME(SOURCE_FORMAT), args[3]) < 0 ||
        PyDict_SetItem(fields, NAME(DURATION_MS), duration) < 0 ||
        PyDict_Update(fields, PyTuple_GET_ITEM(known, 0)) < 0) {
        Py_XDECREF(fields);
        Py_DECREF(known);
        return NULL;
    }
    PyObject *event = PyObject_CallOneArg(args[2], fields);
    Py_DECREF(fields);
    if (event == NULL) {
        Py_DECREF(known);
        return NULL;
    }
    PyObject *event_ns = PyObject_GetAttr(event, NAME(NS));
    PyObject *connection = event_ns != NULL ? PyObject_GetAttr(event, NAME(CONNECTION)) : NULL;
    PyObject *app_name = connection != NULL ? PyObject_GetAttr(event, NAME(APP_NAME)) : NULL;
    PyObject *result = NULL;
    if (app_name != NULL) {
        PyObject *app_text = NULL, *unused = NULL;
        if (!PyUnicode_CheckExact(event_ns) || optional_text(connection, &unused) < 0 ||
            optional_text(app_name, &app_text) < 0) {
            result = Py_NewRef(Py_None); /* not of the kinds the parser makes: Python builds the event */
        } else {
            PyObject *reason = internal_reason(state, event_ns, connection, app_text, Py_None);
            if (reason != NULL && PyObject_SetAttr(event, NAME(INTERNAL), reason) == 0) {
                result = PyTuple_Pack(2, event, PyTuple_GET_ITEM(known, 1));
            }
            Py_XDECREF(reason);
        }
    }
    Py_XDECREF(event_ns);
    Py_XDECREF(connection);
    Py_XDECREF(app_name);
    Py_DECREF(event);
    Py_DECREF(known);
    return result;
}

/* ---- the query shape: shape._shape_command and shape._skip_of ------------------------------------------------ */
/* Shape helpers return a new reference, or NULL: with a Python error set (a failure), or without one (FALLBACK: the
 * Python path shapes the whole command). */

#define SHAPE_FALLBACK NULL

typedef struct {
    State *state;
    Py_ssize_t in_length; /* the longest $in list met */
} Shaper;

#define SNAME(symbol) (shaper->state->names[N_##symbol])

enum { NUMBER_NONE, NUMBER_INT, NUMBER_BIG, NUMBER_FLOAT, NUMBER_UNSURE };
typedef struct {
    int kind;
    long long integer; /* NUMBER_INT */
    int sign;          /* NUMBER_BIG: past a long long, +1 or -1 */
    double real;       /* NUMBER_FLOAT */
} Number;

/* shape._number: a plain int or float; UNSURE for an Extended JSON number (Python parses its text); NONE else. */
static int number_of(Shaper *shaper, PyObject *value, Number *number)
{
    number->kind = NUMBER_NONE;
    if (value == NULL) {
        return DONE;
    }
    if (PyLong_CheckExact(value)) {
        int overflow;
        number->integer = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (number->integer == -1 && PyErr_Occurred()) {
            return FAILED;
        }
        number->kind = overflow ? NUMBER_BIG : NUMBER_INT;
        number->sign = overflow;
    } else if (PyFloat_CheckExact(value)) {
        number->kind = NUMBER_FLOAT;
        number->real = PyFloat_AS_DOUBLE(value);
    } else if (PyDict_CheckExact(value) && PyDict_GET_SIZE(value) == 1) {
        int marked = PySet_Contains(shaper->state->number_markers, first_key(value));
        if (marked < 0) {
            return FAILED;
        }
        if (marked) {
            number->kind = NUMBER_UNSURE;
        }
    }
    return DONE;
}

static int number_is(const Number *number, long long value)
{
    return (number->kind == NUMBER_INT && number->integer == value) ||
           (number->kind == NUMBER_FLOAT && number->real == (double)value);
}

static int number_is_negative(const Number *number)
{
    return (number->kind == NUMBER_INT && number->integer < 0) || (number->kind == NUMBER_BIG && number->sign < 0) ||
           (number->kind == NUMBER_FLOAT && number->real < 0.0);
}

/* A borrowed item, NULL when absent or on error (check PyErr_Occurred). */
#define GET(dict, symbol) item((dict), SNAME(symbol))

static int starts_with_dollar(PyObject *text)
{
    return PyUnicode_GET_LENGTH(text) > 0 && PyUnicode_READ_CHAR(text, 0) == '$';
}

/* shape._direction */
static PyObject *direction(Shaper *shaper, PyObject *value)
{
    if (PyBool_Check(value)) {
        return PyLong_FromLong(1);
    }
    if (PyDict_CheckExact(value)) {
        PyObject *meta = GET(value, META);
        if (meta != NULL) {
            return PyUnicode_CheckExact(meta) ? PyUnicode_FromFormat("$meta:%U", meta) : SHAPE_FALLBACK;
        }
        if (PyErr_Occurred()) {
            return NULL;
        }
    }
    Number number;
    if (number_of(shaper, value, &number) != DONE || number.kind == NUMBER_UNSURE) {
        return SHAPE_FALLBACK;
    }
    if (number.kind == NUMBER_NONE || (number.kind == NUMBER_FLOAT && number.real != number.real)) {
        return Py_NewRef(SNAME(UNKNOWN_VALUE));
    }
    return PyLong_FromLong(number_is_negative(&number) ? -1 : 1);
}

/* shape.shape_sort */
static PyObject *shape_sort(Shaper *shaper, PyObject *sort)
{
    if (sort == NULL || !PyDict_CheckExact(sort)) {
        return PyTuple_New(0);
    }
    PyObject *result = PyTuple_New(PyDict_GET_SIZE(sort));
    if (result == NULL) {
        return NULL;
    }
    Py_ssize_t position = 0, index = 0;
    PyObject *key, *value;
    while (PyDict_Next(sort, &position, &key, &value)) {
        PyObject *shaped = direction(shaper, value);
        PyObject *pair = shaped != NULL ? PyTuple_Pack(2, key, shaped) : NULL;
        Py_XDECREF(shaped);
        if (pair == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyTuple_SET_ITEM(result, index++, pair);
    }
    return result;
}

/* A list sorted, as a tuple (its items' first elements differ: they are a dict's keys). */
static PyObject *sorted_tuple(PyObject *list)
{
    if (list == NULL) {
        return NULL;
    }
    PyObject *result = PyList_Sort(list) < 0 ? NULL : PyList_AsTuple(list);
    Py_DECREF(list);
    return result;
}

/* shape.shape_projection */
static PyObject *shape_projection(Shaper *shaper, PyObject *projection)
{
    if (projection == NULL || !PyDict_CheckExact(projection)) {
        return PyTuple_New(0);
    }
    PyObject *shaped = PyList_New(0);
    if (shaped == NULL) {
        return NULL;
    }
    Py_ssize_t position = 0;
    PyObject *key, *value;
    while (PyDict_Next(projection, &position, &key, &value)) {
        PyObject *kind;
        if (!PyUnicode_CheckExact(key)) {
            Py_DECREF(shaped);
            return SHAPE_FALLBACK;
        }
        if (value == Py_True || value == Py_False) {
            kind = value == Py_True ? SNAME(ONE_TEXT) : SNAME(ZERO_TEXT);
        } else {
            Number number;
            if (number_of(shaper, value, &number) != DONE || number.kind == NUMBER_UNSURE) {
                Py_DECREF(shaped);
                return SHAPE_FALLBACK;
            }
            kind = number.kind == NUMBER_NONE ? shaper->state->classes[C_EXPR]
                   : number_is(&number, 0)    ? SNAME(ZERO_TEXT)
                                              : SNAME(ONE_TEXT);
        }
        PyObject *pair = PyTuple_Pack(2, key, kind);
        int failed = pair == NULL || PyList_Append(shaped, pair) < 0;
        Py_XDECREF(pair);
        if (failed) {
            Py_DECREF(shaped);
            return NULL;
        }
    }
    return sorted_tuple(shaped);
}

/* shape._present: *present set; FALLBACK for an Extended JSON number. */
static int present(Shaper *shaper, PyObject *command, PyObject *key, int *is_present)
{
    PyObject *value = item(command, key);
    *is_present = 0;
    if (value == NULL) {
        return PyErr_Occurred() ? FAILED : DONE;
    }
    if (value == Py_None || value == Py_False) {
        return DONE;
    }
    Number number;
    if (number_of(shaper, value, &number) != DONE) {
        return FAILED;
    }
    if (number.kind == NUMBER_UNSURE) {
        return FALLBACK;
    }
    *is_present = number.kind == NUMBER_NONE || !number_is(&number, 0);
    return DONE;
}

/* Append name to options when present(command, name). */
static int option_if_present(Shaper *shaper, PyObject *options, PyObject *command, PyObject *name)
{
    int is_present;
    int status = present(shaper, command, name, &is_present);
    if (status == DONE && is_present && PyList_Append(options, name) < 0) {
        return FAILED;
    }
    return status;
}

static PyObject *joined(const char *separator, PyObject *parts)
{
    PyObject *glue = PyUnicode_FromString(separator);
    PyObject *result = glue != NULL ? PyUnicode_Join(glue, parts) : NULL;
    Py_XDECREF(glue);
    return result;
}

/* shape._hint, appended to options. */
static int add_hint(Shaper *shaper, PyObject *options, PyObject *command)
{
    PyObject *hint = GET(command, HINT), *option = NULL;
    if (hint == NULL) {
        return PyErr_Occurred() ? FAILED : DONE;
    }
    if (PyDict_CheckExact(hint) && PyDict_GET_SIZE(hint) > 0) {
        PyObject *parts = PyList_New(0);
        if (parts == NULL) {
            return FAILED;
        }
        Py_ssize_t position = 0;
        PyObject *key, *value;
        while (PyDict_Next(hint, &position, &key, &value)) {
            PyObject *shaped = direction(shaper, value);
            PyObject *part = shaped != NULL ? PyUnicode_FromFormat("%S:%S", key, shaped) : NULL;
            Py_XDECREF(shaped);
            if (part == NULL || PyList_Append(parts, part) < 0) {
                Py_XDECREF(part);
                Py_DECREF(parts);
                return PyErr_Occurred() ? FAILED : FALLBACK;
            }
            Py_DECREF(part);
        }
        PyObject *text = joined(",", parts);
        Py_DECREF(parts);
        option = text != NULL ? PyUnicode_FromFormat("hint:%U", text) : NULL;
        Py_XDECREF(text);
    } else if (PyUnicode_CheckExact(hint) && PyUnicode_GET_LENGTH(hint) > 0) {
        option = PyUnicode_FromFormat("hint:%U", hint);
    } else {
        return DONE;
    }
    if (option == NULL || PyList_Append(options, option) < 0) {
        Py_XDECREF(option);
        return FAILED;
    }
    Py_DECREF(option);
    return DONE;
}

static int add_collation(Shaper *shaper, PyObject *options, PyObject *command)
{
    PyObject *collation = GET(command, COLLATION);
    if (collation != NULL && PyDict_CheckExact(collation)) {
        return PyList_Append(options, SNAME(COLLATION)) < 0 ? FAILED : DONE;
    }
    return PyErr_Occurred() ? FAILED : DONE;
}

/* shape._common_options, as a list */
static int common_options(Shaper *shaper, PyObject *options, PyObject *command)
{
    int status = option_if_present(shaper, options, command, SNAME(LIMIT));
    if (status == DONE) {
        status = option_if_present(shaper, options, command, SNAME(SKIP));
    }
    if (status == DONE) {
        status = add_hint(shaper, options, command); /* `"hint" in command`: add_hint skips an absent one */
    }
    return status == DONE ? add_collation(shaper, options, command) : status;
}

/* _Shaper._operators, without $regex and $elemMatch (FALLBACK). */
static PyObject *field_operators(Shaper *shaper, PyObject *value)
{
    unsigned long mask = 0;
    Py_ssize_t position = 0;
    PyObject *operator, *operand;
    while (PyDict_Next(value, &position, &operator, &operand)) {
        if (!PyUnicode_CheckExact(operator)) {
            return SHAPE_FALLBACK;
        }
        if (PyUnicode_Compare(operator, SNAME(REGEX_OP)) == 0 || PyUnicode_Compare(operator, SNAME(ELEM_MATCH_OP)) == 0) {
            return SHAPE_FALLBACK;
        }
        if (PyUnicode_Compare(operator, SNAME(OPTIONS_OP)) == 0) {
            continue;
        }
        if (PyUnicode_Compare(operator, SNAME(IN_OP)) == 0) {
            mask |= 1UL << C_IN;
            if (PyList_CheckExact(operand) && PyList_GET_SIZE(operand) > shaper->in_length) {
                shaper->in_length = PyList_GET_SIZE(operand);
            }
            continue;
        }
        PyObject *class_name = item(shaper->state->field_operators, operator);
        if (class_name != NULL) {
            for (int i = 0; i < CLASS_COUNT; i++) {
                if (shaper->state->classes[i] == class_name) {
                    mask |= 1UL << i;
                }
            }
        } else if (PyErr_Occurred()) {
            return NULL;
        } else {
            mask |= 1UL << (starts_with_dollar(operator) ? C_OTHER : C_EQ);
        }
    }
    int count = 0, only = 0;
    for (int i = 0; i < CLASS_COUNT; i++) {
        if (mask & (1UL << i)) {
            count++;
            only = i;
        }
    }
    if (count == 1) {
        return Py_NewRef(shaper->state->classes[only]);
    }
    PyObject *classes = PyTuple_New(count);
    if (classes == NULL) {
        return NULL;
    }
    for (int i = 0, index = 0; i < CLASS_COUNT; i++) {
        if (mask & (1UL << i)) {
            PyTuple_SET_ITEM(classes, index++, Py_NewRef(shaper->state->classes[i]));
        }
    }
    return classes;
}

/* _Shaper._field */
static PyObject *field_node(Shaper *shaper, PyObject *value)
{
    if (!PyDict_CheckExact(value) || PyDict_GET_SIZE(value) == 0) {
        return Py_NewRef(shaper->state->classes[C_EQ]);
    }
    PyObject *first = first_key(value);
    int extended = 0;
    if (PyDict_GET_SIZE(value) <= 2) {
        extended = PySet_Contains(shaper->state->extended_markers, first);
        if (extended < 0) {
            return NULL;
        }
    }
    if (!extended) {
        if (!PyUnicode_CheckExact(first)) {
            return SHAPE_FALLBACK;
        }
        return starts_with_dollar(first) ? field_operators(shaper, value) : Py_NewRef(shaper->state->classes[C_EQ]);
    }
    int regex = PyDict_Contains(value, SNAME(REGULAR_EXPRESSION));
    if (regex != 0) {
        return regex < 0 ? NULL : SHAPE_FALLBACK;
    }
    return Py_NewRef(shaper->state->classes[C_EQ]);
}

/* _Shaper.filter for a document (NULL: absent), without logical operators (FALLBACK). */
static PyObject *shape_filter(Shaper *shaper, PyObject *document)
{
    if (document == NULL || document == Py_None) {
        return PyTuple_New(0);
    }
    if (!PyDict_CheckExact(document)) {
        PyObject *unknown = PyTuple_Pack(2, SNAME(DOLLAR), SNAME(UNKNOWN_VALUE));
        PyObject *result = unknown != NULL ? PyTuple_Pack(1, unknown) : NULL;
        Py_XDECREF(unknown);
        return result;
    }
    PyObject *nodes = PyList_New(0);
    if (nodes == NULL) {
        return NULL;
    }
    Py_ssize_t position = 0;
    PyObject *key, *value;
    while (PyDict_Next(document, &position, &key, &value)) {
        PyObject *node;
        if (!PyUnicode_CheckExact(key)) {
            Py_DECREF(nodes);
            return SHAPE_FALLBACK;
        }
        if (!starts_with_dollar(key)) {
            node = field_node(shaper, value);
        } else if (PyUnicode_Compare(key, SNAME(COMMENT_OP)) == 0) {
            continue;
        } else if (PyUnicode_Compare(key, SNAME(AND_OP)) == 0 || PyUnicode_Compare(key, SNAME(OR_OP)) == 0 ||
                   PyUnicode_Compare(key, SNAME(NOR_OP)) == 0) {
            Py_DECREF(nodes);
            return SHAPE_FALLBACK;
        } else {
            node = item(shaper->state->top_level_operators, key);
            node = node != NULL ? Py_NewRef(node) : PyErr_Occurred() ? NULL : Py_NewRef(shaper->state->classes[C_OTHER]);
        }
        PyObject *pair = node != NULL ? PyTuple_Pack(2, key, node) : NULL;
        Py_XDECREF(node);
        if (pair == NULL || PyList_Append(nodes, pair) < 0) {
            Py_XDECREF(pair);
            Py_DECREF(nodes);
            return NULL; /* an error, or node's FALLBACK */
        }
        Py_DECREF(pair);
    }
    return sorted_tuple(nodes);
}

/* (ns, op, filter, sort, projection, options, stages, unknown); steals filter, sort, projection, options, stages
 * (NULL for an empty tuple, or options/stages as lists) and returns NULL if any is NULL where it must not be. */
static PyObject *components(PyObject *ns, PyObject *op, PyObject *filter, PyObject *sort, PyObject *projection,
                            PyObject *options, PyObject *stages, PyObject *unknown)
{
    PyObject *parts[5] = {filter, sort, projection, options, stages};
    PyObject *result = NULL;
    int ok = 1;
    for (int i = 0; i < 5; i++) {
        if (parts[i] == NULL) {
            parts[i] = PyErr_Occurred() ? NULL : PyTuple_New(0);
            ok = ok && i > 2 && parts[i] != NULL; /* filter, sort and projection are given, or failed */
        } else if (PyList_CheckExact(parts[i])) {
            PyObject *tuple = PyList_AsTuple(parts[i]);
            Py_DECREF(parts[i]);
            parts[i] = tuple;
            ok = ok && tuple != NULL;
        }
    }
    if (ok && (result = PyTuple_New(8)) != NULL) {
        PyTuple_SET_ITEM(result, 0, Py_NewRef(ns));
        PyTuple_SET_ITEM(result, 1, Py_NewRef(op));
        for (int i = 0; i < 5; i++) {
            PyTuple_SET_ITEM(result, i + 2, parts[i]);
            parts[i] = NULL;
        }
        PyTuple_SET_ITEM(result, 7, Py_NewRef(unknown));
    }
    for (int i = 0; i < 5; i++) {
        Py_XDECREF(parts[i]);
    }
    return result;
}

/* The shape's components for an unknown shape, or a command with no filter to shape. */
static PyObject *bare_components(PyObject *ns, PyObject *op, PyObject *unknown)
{
    return components(ns, op, PyTuple_New(0), PyTuple_New(0), PyTuple_New(0), NULL, NULL, unknown);
}

/* shape._name, for the names Python writes bare (a "$" name, or [A-Za-z_][A-Za-z0-9_.-]* in ASCII); FALLBACK for
 * the names json.dumps quotes. */
static PyObject *bare_name(PyObject *key)
{
    if (!PyUnicode_CheckExact(key)) {
        return SHAPE_FALLBACK;
    }
    if (starts_with_dollar(key)) {
        return Py_NewRef(key);
    }
    if (!PyUnicode_IS_ASCII(key) || PyUnicode_GET_LENGTH(key) == 0) {
        return SHAPE_FALLBACK;
    }
    const char *text = (const char *)PyUnicode_DATA(key);
    Py_ssize_t length = PyUnicode_GET_LENGTH(key);
    for (Py_ssize_t i = 0; i < length; i++) {
        char c = text[i];
        int letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        if (!(letter || (i > 0 && ((c >= '0' && c <= '9') || c == '.' || c == '-')))) {
            return SHAPE_FALLBACK;
        }
    }
    return Py_NewRef(key);
}

/* "name: value" joined with ", " for a sequence of (key, value) pairs, each key through bare_name. */
static PyObject *render_pairs(PyObject *pairs)
{
    PyObject *parts = PyList_New(0);
    if (parts == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(pairs); i++) {
        PyObject *pair = PyTuple_GET_ITEM(pairs, i);
        PyObject *name = bare_name(PyTuple_GET_ITEM(pair, 0));
        PyObject *part = name != NULL ? PyUnicode_FromFormat("%U: %S", name, PyTuple_GET_ITEM(pair, 1)) : NULL;
        Py_XDECREF(name);
        if (part == NULL || PyList_Append(parts, part) < 0) {
            Py_XDECREF(part);
            Py_DECREF(parts);
            return NULL;
        }
        Py_DECREF(part);
    }
    PyObject *text = joined(", ", parts);
    Py_DECREF(parts);
    return text;
}

/* shape._field_path */
static PyObject *field_path(Shaper *shaper, PyObject *value, int depth)
{
    if (value != NULL && PyUnicode_CheckExact(value) && starts_with_dollar(value)) {
        return Py_NewRef(value);
    }
    if (value == NULL || !PyDict_CheckExact(value)) {
        return Py_NewRef(SNAME(CONST));
    }
    if (depth > 64) {
        return SHAPE_FALLBACK; /* Python: "nesting too deep" */
    }
    PyObject *pairs = PyTuple_New(PyDict_GET_SIZE(value));
    if (pairs == NULL) {
        return NULL;
    }
    Py_ssize_t position = 0, index = 0;
    PyObject *key, *inner;
    while (PyDict_Next(value, &position, &key, &inner)) {
        PyObject *path = field_path(shaper, inner, depth + 1);
        PyObject *pair = path != NULL ? PyTuple_Pack(2, key, path) : NULL;
        Py_XDECREF(path);
        if (pair == NULL) {
            Py_DECREF(pairs);
            return NULL;
        }
        PyTuple_SET_ITEM(pairs, index++, pair);
    }
    PyObject *text = render_pairs(pairs);
    Py_DECREF(pairs);
    PyObject *result = text != NULL ? PyUnicode_FromFormat("{%U}", text) : NULL;
    Py_XDECREF(text);
    return result;
}

/* shape._accumulator */
static PyObject *accumulator(Shaper *shaper, PyObject *value)
{
    if (!PyDict_CheckExact(value) || PyDict_GET_SIZE(value) == 0) {
        return Py_NewRef(SNAME(UNKNOWN_VALUE));
    }
    Py_ssize_t position = 0;
    PyObject *operator, *operand;
    PyDict_Next(value, &position, &operator, &operand);
    if (!PyUnicode_CheckExact(operator)) {
        return SHAPE_FALLBACK;
    }
    if (PyUnicode_Compare(operator, SNAME(SUM)) == 0 && !PyBool_Check(operand)) {
        Number number;
        if (number_of(shaper, operand, &number) != DONE) {
            return NULL;
        }
        if (number.kind == NUMBER_UNSURE) {
            return SHAPE_FALLBACK;
        }
        if (number.kind != NUMBER_NONE) {
            return Py_NewRef(SNAME(COUNT_ACCUMULATOR));
        }
    }
    if (PyUnicode_CheckExact(operand) && starts_with_dollar(operand)) {
        return PyUnicode_FromFormat("%U(%U)", operator, operand);
    }
    return Py_NewRef(operator);
}

static PyObject *group_summary(Shaper *shaper, PyObject *body)
{
    PyObject *accumulators = PySet_New(NULL);
    if (accumulators == NULL) {
        return NULL;
    }
    Py_ssize_t position = 0;
    PyObject *key, *value;
    while (PyDict_Next(body, &position, &key, &value)) {
        int is_id = PyObject_RichCompareBool(key, SNAME(ID), Py_EQ);
        if (is_id) {
            if (is_id < 0) {
                Py_DECREF(accumulators);
                return NULL;
            }
            continue;
        }
        PyObject *shaped = accumulator(shaper, value);
        if (shaped == NULL || PySet_Add(accumulators, shaped) < 0) {
            Py_XDECREF(shaped);
            Py_DECREF(accumulators);
            return NULL;
        }
        Py_DECREF(shaped);
    }
    PyObject *ordered = PySequence_List(accumulators);
    Py_DECREF(accumulators);
    if (ordered == NULL || PyList_Sort(ordered) < 0) {
        Py_XDECREF(ordered);
        return NULL;
    }
    PyObject *listed = joined(", ", ordered);
    Py_DECREF(ordered);
    PyObject *id = listed != NULL ? GET(body, ID) : NULL;
    PyObject *path = listed != NULL && !PyErr_Occurred() ? field_path(shaper, id, 0) : NULL;
    PyObject *result = path != NULL ? PyUnicode_FromFormat("$group(_id=%U; %U)", path, listed) : NULL;
    Py_XDECREF(listed);
    Py_XDECREF(path);
    return result;
}

static PyObject *lookup_summary(Shaper *shaper, PyObject *body)
{
    PyObject *from = GET(body, FROM), *parts = NULL, *part = NULL;
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (from == NULL || from == Py_None) {
        part = PyUnicode_FromString("from=None");
    } else if (PyUnicode_CheckExact(from)) {
        part = PyUnicode_FromFormat("from=%U", from);
    } else {
        return SHAPE_FALLBACK; /* Python writes str() of it */
    }
    if (part == NULL || (parts = PyList_New(0)) == NULL || PyList_Append(parts, part) < 0) {
        goto failed;
    }
    Py_CLEAR(part);
    static const int KEYS[] = {N_LOCAL_FIELD, N_FOREIGN_FIELD};
    for (size_t i = 0; i < COUNT_OF(KEYS); i++) {
        PyObject *key = shaper->state->names[KEYS[i]];
        PyObject *value = item(body, key);
        if (value != NULL && PyUnicode_CheckExact(value)) {
            if ((part = PyUnicode_FromFormat("%U=%U", key, value)) == NULL || PyList_Append(parts, part) < 0) {
                goto failed;
            }
            Py_CLEAR(part);
        } else if (PyErr_Occurred()) {
            goto failed;
        }
    }
    int nested = PyDict_Contains(body, SNAME(PIPELINE));
    if (nested < 0 || (nested && PyList_Append(parts, SNAME(PIPELINE)) < 0)) {
        goto failed;
    }
    PyObject *text = joined(", ", parts);
    Py_DECREF(parts);
    PyObject *result = text != NULL ? PyUnicode_FromFormat("$lookup(%U)", text) : NULL;
    Py_XDECREF(text);
    return result;
failed:
    Py_XDECREF(part);
    Py_XDECREF(parts);
    return NULL;
}

/* shape._stage_summary (body NULL: None) */
static PyObject *stage_summary(Shaper *shaper, PyObject *name, PyObject *body)
{
    int is_dict = body != NULL && PyDict_CheckExact(body);
    if (is_dict && PyUnicode_Compare(name, SNAME(GROUP_STAGE)) == 0) {
        return group_summary(shaper, body);
    }
    if (is_dict && PyUnicode_Compare(name, SNAME(LOOKUP_STAGE)) == 0) {
        return lookup_summary(shaper, body);
    }
    if (PyUnicode_Compare(name, SNAME(UNWIND_STAGE)) == 0) {
        PyObject *path = is_dict ? GET(body, PATH) : body;
        if (PyErr_Occurred()) {
            return NULL;
        }
        if (path != NULL && PyUnicode_CheckExact(path)) {
            return PyUnicode_FromFormat("$unwind(%U)", path);
        }
        return PyUnicode_FromString("$unwind(?)");
    }
    if (PyUnicode_Compare(name, SNAME(SORT_STAGE)) == 0) {
        PyObject *sort = shape_sort(shaper, body);
        PyObject *text = sort != NULL ? render_pairs(sort) : NULL;
        Py_XDECREF(sort);
        PyObject *result = text != NULL ? PyUnicode_FromFormat("$sort{%U}", text) : NULL;
        Py_XDECREF(text);
        return result;
    }
    return Py_NewRef(name); /* $match, and every other stage, by its name */
}

static int is_one_of(PyObject *name, PyObject *first, PyObject *second)
{
    return PyUnicode_Compare(name, first) == 0 || PyUnicode_Compare(name, second) == 0;
}

/* shape._shape_pipeline, with one leading $match at most (two are an $and: FALLBACK). */
static PyObject *shape_pipeline(Shaper *shaper, PyObject *ns, PyObject *pipeline)
{
    if (pipeline == NULL || !PyList_CheckExact(pipeline)) {
        return bare_components(ns, SNAME(AGGREGATE), SNAME(PIPELINE_NOT_LOGGED));
    }
    PyObject *match = NULL, *sort = NULL, *options = PyList_New(0), *stages = PyList_New(0);
    int leading = 1, filtering = 1, matches = 0, limit = 0, skip = 0;
    if (options == NULL || stages == NULL) {
        goto failed;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(pipeline); i++) {
        PyObject *stage = PyList_GET_ITEM(pipeline, i), *name = SNAME(UNKNOWN_VALUE), *body = NULL;
        if (PyDict_CheckExact(stage) && PyDict_GET_SIZE(stage) > 0) {
            Py_ssize_t position = 0;
            PyDict_Next(stage, &position, &name, &body);
            if (!PyUnicode_CheckExact(name) || PyUnicode_GET_LENGTH(name) == 0) {
                goto fallback; /* Python names it "?" and looks "?" up in the stage */
            }
        }
        leading = leading && (is_one_of(name, SNAME(MATCH_STAGE), SNAME(SORT_STAGE)) ||
                              is_one_of(name, SNAME(LIMIT_STAGE), SNAME(SKIP_STAGE)));
        if (leading && is_one_of(name, SNAME(LIMIT_STAGE), SNAME(SKIP_STAGE))) {
            int is_limit = PyUnicode_Compare(name, SNAME(LIMIT_STAGE)) == 0;
            if (!(is_limit ? limit : skip)) {
                if (PyList_Append(options, is_limit ? SNAME(LIMIT) : SNAME(SKIP)) < 0) {
                    goto failed;
                }
                *(is_limit ? &limit : &skip) = 1;
            }
            filtering = 0;
        } else if (leading && filtering && PyUnicode_Compare(name, SNAME(MATCH_STAGE)) == 0) {
            if (++matches > 1) {
                goto fallback;
            }
            match = body;
        } else if (leading && filtering && PyUnicode_Compare(name, SNAME(SORT_STAGE)) == 0 &&
                   (sort == NULL || PyTuple_GET_SIZE(sort) == 0)) {
            Py_XDECREF(sort);
            if ((sort = shape_sort(shaper, body)) == NULL) {
                goto failed;
            }
        }
        PyObject *summary = stage_summary(shaper, name, body);
        if (summary == NULL || PyList_Append(stages, summary) < 0) {
            Py_XDECREF(summary);
            goto failed;
        }
        Py_DECREF(summary);
    }
    PyObject *filter = shape_filter(shaper, match);
    if (filter == NULL) {
        goto failed;
    }
    if (sort == NULL && (sort = PyTuple_New(0)) == NULL) {
        Py_DECREF(filter);
        goto failed;
    }
    return components(ns, SNAME(AGGREGATE), filter, sort, PyTuple_New(0), options, stages, Py_None);
fallback:
failed:
    Py_XDECREF(sort);
    Py_XDECREF(options);
    Py_XDECREF(stages);
    return NULL;
}

/* shape._shape_write */
static PyObject *shape_write(Shaper *shaper, PyObject *ns, PyObject *op, PyObject *command, int update)
{
    PyObject *statement = command;
    int has_q = PyDict_Contains(command, SNAME(Q));
    if (has_q < 0) {
        return NULL;
    }
    if (!has_q) {
        PyObject *listed = update ? GET(command, UPDATES) : GET(command, DELETES);
        if (PyErr_Occurred()) {
            return NULL;
        }
        if (listed == NULL || !PyList_CheckExact(listed) || PyList_GET_SIZE(listed) != 1 ||
            !PyDict_CheckExact(PyList_GET_ITEM(listed, 0))) {
            return bare_components(ns, op, SNAME(STATEMENTS_NOT_LOGGED));
        }
        statement = PyList_GET_ITEM(listed, 0);
    }
    PyObject *options = PyList_New(0);
    if (options == NULL) {
        return NULL;
    }
    int status = DONE;
    if (update) {
        status = option_if_present(shaper, options, statement, SNAME(MULTI));
        if (status == DONE) {
            status = option_if_present(shaper, options, statement, SNAME(UPSERT));
        }
        PyObject *change = status == DONE ? GET(statement, U) : NULL;
        if (change != NULL && PyList_CheckExact(change)) {
            status = PyList_Append(options, SNAME(PIPELINE_UPDATE)) < 0 ? FAILED : DONE;
        } else if (change != NULL && PyDict_CheckExact(change) && PyDict_GET_SIZE(change) > 0) {
            PyObject *first = first_key(change);
            if (!PyUnicode_CheckExact(first)) {
                status = FALLBACK;
            } else if (!starts_with_dollar(first)) {
                status = PyList_Append(options, SNAME(REPLACEMENT)) < 0 ? FAILED : DONE;
            }
        } else if (status == DONE && PyErr_Occurred()) {
            status = FAILED;
        }
    } else {
        Number limit;
        PyObject *value = GET(statement, LIMIT);
        if (PyErr_Occurred() || number_of(shaper, value, &limit) != DONE) {
            status = FAILED;
        } else if (limit.kind == NUMBER_UNSURE) {
            status = FALLBACK;
        } else if (number_is(&limit, 1)) {
            status = PyList_Append(options, SNAME(ONE)) < 0 ? FAILED : DONE;
        }
    }
    if (status == DONE) {
        status = add_hint(shaper, options, statement);
    }
    if (status == DONE) {
        status = add_collation(shaper, options, statement);
    }
    PyObject *filter = NULL;
    if (status == DONE) {
        PyObject *q = GET(statement, Q);
        filter = PyErr_Occurred() ? NULL : shape_filter(shaper, q == NULL ? Py_None : q);
    }
    if (filter == NULL) {
        Py_DECREF(options);
        return NULL;
    }
    return components(ns, op, filter, PyTuple_New(0), PyTuple_New(0), options, NULL, Py_None);
}

static int op_is(PyObject *op, const char *name)
{
    return PyUnicode_CompareWithASCIIString(op, name) == 0;
}

/* shape._shape_command */
static PyObject *shape_components(Shaper *shaper, PyObject *ns, PyObject *op, PyObject *command)
{
    PyObject *options = NULL;
    if (op_is(op, "find") || op_is(op, "count")) {
        int find = op_is(op, "find");
        PyObject *document = find ? GET(command, FILTER) : GET(command, QUERY);
        if (PyErr_Occurred() || (options = PyList_New(0)) == NULL) {
            return NULL;
        }
        if (common_options(shaper, options, command) != DONE) {
            Py_DECREF(options);
            return NULL;
        }
        PyObject *filter = shape_filter(shaper, document);
        if (filter == NULL || !find) {
            if (filter == NULL) {
                Py_DECREF(options);
                return NULL;
            }
            return components(ns, op, filter, PyTuple_New(0), PyTuple_New(0), options, NULL, Py_None);
        }
        PyObject *sort = GET(command, SORT);
        sort = PyErr_Occurred() ? NULL : shape_sort(shaper, sort);
        PyObject *projection = GET(command, PROJECTION);
        projection = sort == NULL || PyErr_Occurred() ? NULL : shape_projection(shaper, projection);
        if (projection == NULL) {
            Py_DECREF(filter);
            Py_XDECREF(sort);
            Py_DECREF(options);
            return NULL;
        }
        return components(ns, op, filter, sort, projection, options, NULL, Py_None);
    }
    if (op_is(op, "distinct")) {
        PyObject *key = GET(command, KEY), *option;
        if (PyErr_Occurred()) {
            return NULL;
        }
        option = key != NULL && PyUnicode_CheckExact(key) ? PyUnicode_FromFormat("key:%U", key)
                                                          : PyUnicode_FromString("key:?");
        if (option == NULL || (options = PyList_New(0)) == NULL || PyList_Append(options, option) < 0) {
            Py_XDECREF(option);
            Py_XDECREF(options);
            return NULL;
        }
        Py_DECREF(option);
        PyObject *filter = NULL;
        if (add_hint(shaper, options, command) == DONE) {
            PyObject *query = GET(command, QUERY);
            filter = PyErr_Occurred() ? NULL : shape_filter(shaper, query);
        }
        if (filter == NULL) {
            Py_DECREF(options);
            return NULL;
        }
        return components(ns, op, filter, PyTuple_New(0), PyTuple_New(0), options, NULL, Py_None);
    }
    if (op_is(op, "aggregate")) {
        PyObject *pipeline = GET(command, PIPELINE);
        return PyErr_Occurred() ? NULL : shape_pipeline(shaper, ns, pipeline);
    }
    if (op_is(op, "findAndModify")) {
        PyObject *remove = GET(command, REMOVE);
        int removing = remove == NULL ? 0 : PyObject_IsTrue(remove);
        if (PyErr_Occurred() || removing < 0 || (options = PyList_New(0)) == NULL ||
            PyList_Append(options, removing ? SNAME(REMOVE) : SNAME(UPDATE)) < 0) {
            Py_XDECREF(options);
            return NULL;
        }
        int status = option_if_present(shaper, options, command, SNAME(UPSERT));
        if (status == DONE) {
            status = option_if_present(shaper, options, command, SNAME(NEW));
        }
        if (status == DONE) {
            status = add_hint(shaper, options, command);
        }
        PyObject *filter = NULL, *sort = NULL, *projection = NULL;
        if (status == DONE) {
            PyObject *query = GET(command, QUERY);
            filter = PyErr_Occurred() ? NULL : shape_filter(shaper, query);
        }
        if (filter != NULL) {
            PyObject *sorting = GET(command, SORT);
            sort = PyErr_Occurred() ? NULL : shape_sort(shaper, sorting);
        }
        if (sort != NULL) {
            PyObject *fields = GET(command, FIELDS);
            projection = PyErr_Occurred() ? NULL : shape_projection(shaper, fields);
        }
        if (projection == NULL) {
            Py_XDECREF(filter);
            Py_XDECREF(sort);
            Py_DECREF(options);
            return NULL;
        }
        return components(ns, op, filter, sort, projection, options, NULL, Py_None);
    }
    if (op_is(op, "update") || op_is(op, "delete")) {
        return shape_write(shaper, ns, op, command, op_is(op, "update"));
    }
    if (op_is(op, "unknown")) {
        PyObject *document = GET(command, FILTER);
        PyObject *filter = PyErr_Occurred() ? NULL : shape_filter(shaper, document);
        return filter == NULL ? NULL
                              : components(ns, op, filter, PyTuple_New(0), PyTuple_New(0), NULL, NULL, Py_None);
    }
    return bare_components(ns, op, Py_None);
}

/* shape._skip_of: *skip; FALLBACK for an Extended JSON number. */
static int skip_of(Shaper *shaper, PyObject *op, PyObject *command, long long *skip)
{
    PyObject *value = NULL;
    *skip = 0;
    if (op_is(op, "find") || op_is(op, "count")) {
        value = GET(command, SKIP);
    } else if (op_is(op, "aggregate")) {
        PyObject *pipeline = GET(command, PIPELINE);
        if (pipeline != NULL && PyList_CheckExact(pipeline)) {
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(pipeline) && value == NULL; i++) {
                PyObject *stage = PyList_GET_ITEM(pipeline, i);
                if (PyDict_CheckExact(stage)) {
                    value = GET(stage, SKIP_STAGE);
                    if (value == NULL && PyErr_Occurred()) {
                        return FAILED;
                    }
                }
            }
        }
    }
    if (PyErr_Occurred()) {
        return FAILED;
    }
    if (value == NULL || value == Py_None) {
        return DONE;
    }
    Number number;
    if (number_of(shaper, value, &number) != DONE) {
        return FAILED;
    }
    if (number.kind == NUMBER_UNSURE) {
        return FALLBACK;
    }
    if (number.kind == NUMBER_INT && number.integer > 0 && number.integer < 1000000000000000000LL) {
        *skip = number.integer;
    } else if (number.kind == NUMBER_FLOAT && number.real > 0.0 && number.real < 1e18) {
        *skip = (long long)number.real;
    }
    return DONE;
}

PyDoc_STRVAR(shape_command_doc,
"shape_command(ns, op, command, /)\n--\n\n"
"What shape._shape_command and shape._skip_of work out for one command dict (op canonical, a getMore's already\n"
"resolved to its originating command): (components, in_length, skip), components as shape.finish takes them.\n"
"None where the Python path must shape it: $regex, $elemMatch, $and/$or/$nor, Extended JSON numbers, names\n"
"json.dumps would quote, several leading $match stages ...");

static PyObject *shape_command(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "shape_command() takes exactly 3 arguments");
        return NULL;
    }
    PyObject *ns = args[0], *op = args[1], *command = args[2];
    if (!PyUnicode_CheckExact(op) || !PyDict_CheckExact(command)) {
        Py_RETURN_NONE;
    }
    Shaper shaper = {module_state(module), 0};
    PyObject *shaped = shape_components(&shaper, ns, op, command);
    if (shaped == NULL) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    long long skip;
    int status = skip_of(&shaper, op, command, &skip);
    if (status != DONE) {
        Py_DECREF(shaped);
        if (status == FAILED) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(NnL)", shaped, shaper.in_length, skip);
}

/* ---- the slots of the statistics' classes, read and written in place (add_execution) ----------------------- */

/* What add_execution works with, in the order of digest.execution_context(): the classes it checks or makes, blank
 * objects it makes new ones like, the reference functions it calls back, the limits, and the slots' descriptors. */
enum {
    X_EVENT, X_DATETIME, X_SHAPE_STATS, X_SHAPE_OBSERVATION, X_TIME_BREAKDOWN, X_LATEST_EXECUTION, X_RUN_LOG,
    X_NO_RUNS, X_LITERAL_VALUES, X_NO_LITERAL_VALUES, X_HISTOGRAM, X_BLANK_TIME_BUCKET, X_BLANK_PLAN_COST,
    X_BLANK_CAPPED_SET, X_BLANK_FIELD_LITERALS, X_WIDTHS, X_WHOLE, X_SKETCHED, X_FIRST_REPLY_CAP,
    X_LITERAL_FINGERPRINT, X_IS_BULK_TOOL, X_DUMPS, X_LOG, X_LOG_GAMMA, X_IN_VALUES, X_DISTINCT_CAP, X_EXACT_LIMIT,
    X_FIRST_BATCH, X_SMALL_SET, X_SET_CAP, X_MAX_BUCKETS, X_MAX_RUNS, X_MAX_KEPT, X_SLOTS, CONTEXT_SIZE
};

/* The slots add_execution reads and writes, by class; the context's X_SLOTS holds their member descriptors in this
 * order (digest.py builds it from EXECUTION_SLOTS, which this table makes). */
#define SLOT_LIST(X) \
    X(ST_SHAPE, "ShapeStats", "shape") X(ST_COUNT, "ShapeStats", "count") X(ST_GETMORES, "ShapeStats", "getmores") \
    X(ST_DURATION, "ShapeStats", "duration") X(ST_KEYS_EXAMINED, "ShapeStats", "keys_examined") \
    X(ST_DOCS_EXAMINED, "ShapeStats", "docs_examined") X(ST_NRETURNED, "ShapeStats", "nreturned") \
    X(ST_MEASURED, "ShapeStats", "measured") X(ST_KEYS_MEASURED, "ShapeStats", "keys_measured") \
    X(ST_DOCS_MEASURED, "ShapeStats", "docs_measured") X(ST_PLANS, "ShapeStats", "plans") \
    X(ST_BLOCKING_SORTS, "ShapeStats", "blocking_sorts") X(ST_USED_DISK, "ShapeStats", "used_disk") \
    X(ST_ERRORS, "ShapeStats", "errors") X(ST_TRUNCATED, "ShapeStats", "truncated") \
    X(ST_INTERNAL, "ShapeStats", "internal") X(ST_INTERNAL_REASON, "ShapeStats", "internal_reason") \
    X(ST_MAX_IN_LENGTH, "ShapeStats", "max_in_length") X(ST_APPS, "ShapeStats", "apps") \
    X(ST_CONNECTIONS, "ShapeStats", "connections") X(ST_SERVER_HASHES, "ShapeStats", "server_hashes") \
    X(ST_FIRST_SEEN, "ShapeStats", "first_seen") X(ST_LAST_SEEN, "ShapeStats", "last_seen") \
    X(ST_TIMELINE, "ShapeStats", "timeline") X(ST_LATEST, "ShapeStats", "_latest") X(ST_RUNS, "ShapeStats", "runs") \
    X(ST_LITERAL_VALUES, "ShapeStats", "literal_values") X(ST_NUM_YIELDS, "ShapeStats", "num_yields") \
    X(ST_YIELDS_MEASURED, "ShapeStats", "yields_measured") X(ST_RESPONSE_BYTES, "ShapeStats", "response_bytes") \
    X(ST_RESPONSES_MEASURED, "ShapeStats", "responses_measured") X(ST_REPLANNED, "ShapeStats", "replanned") \
    X(ST_SKIPPED_EXECUTIONS, "ShapeStats", "skipped_executions") X(ST_SKIP_TOTAL, "ShapeStats", "skip_total") \
    X(ST_SKIP_MAX, "ShapeStats", "skip_max") X(ST_UNDER_LIMIT, "ShapeStats", "under_limit") \
    X(ST_UNDER_LIMIT_RETURNED, "ShapeStats", "under_limit_returned") X(ST_PLAN_COSTS, "ShapeStats", "plan_costs") \
    X(ST_PLAN_ORDER, "ShapeStats", "plan_order") X(ST_BULK_WRITTEN, "ShapeStats", "bulk_written") \
    X(ST_LITERALS, "ShapeStats", "literals") X(ST_TIMING, "ShapeStats", "timing") \
    X(ST_POINT_LOOKUP, "ShapeStats", "_point_lookup") X(SH_OP, "QueryShape", "op") \
    X(SH_OPTIONS, "QueryShape", "options") X(OB_IN_LENGTH, "ShapeObservation", "in_length") \
    X(OB_SKIP, "ShapeObservation", "skip") X(HI_COUNTS, "DurationHistogram", "counts") \
    X(HI_N, "DurationHistogram", "n") X(HI_TOTAL, "DurationHistogram", "total") \
    X(HI_MAXIMUM, "DurationHistogram", "maximum") X(TL_WIDTH_MINUTES, "Timeline", "width_minutes") \
    X(TL_BUCKETS, "Timeline", "buckets") X(TB_COUNT, "TimeBucket", "count") \
    X(TB_TOTAL_MS, "TimeBucket", "total_ms") X(TB_MAX_MS, "TimeBucket", "max_ms") \
    X(TB_DOCS_EXAMINED, "TimeBucket", "docs_examined") X(TB_KEYS_EXAMINED, "TimeBucket", "keys_examined") \
    X(TB_BINS, "TimeBucket", "bins") X(PC_COUNT, "PlanCost", "count") X(PC_TOTAL_MS, "PlanCost", "total_ms") \
    X(PC_KEYS_EXAMINED, "PlanCost", "keys_examined") X(PC_DOCS_EXAMINED, "PlanCost", "docs_examined") \
    X(PC_NRETURNED, "PlanCost", "nreturned") X(PO_RUNS, "PlanOrder", "runs") X(PR_LAST_MS, "PlanRun", "last_ms") \
    X(PR_LAST_PLAN, "PlanRun", "last_plan") X(PR_SWITCHES, "PlanRun", "switches") \
    X(CS_MEMBERS, "CappedSet", "members") X(CS_CUTOFF, "CappedSet", "cutoff") X(LE_NS, "LatestExecution", "ns") \
    X(LE_OP, "LatestExecution", "op") X(LE_TS, "LatestExecution", "ts") \
    X(LE_KEPT_COMMAND, "LatestExecution", "kept_command") X(RL_RUNS, "RunLog", "runs") \
    X(LV_COUNTS, "LiteralValues", "counts") X(LV_RUNS, "LiteralValues", "runs") \
    X(LV_CUTOFF, "LiteralValues", "cutoff") \
    X(BD_EXECUTIONS, "TimeBreakdown", "executions") X(BD_DURATION_US, "TimeBreakdown", "duration_us") \
    X(BD_COMPONENTS, "TimeBreakdown", "components") X(BD_HISTOGRAMS, "TimeBreakdown", "histograms") \
    X(FL_VALUES, "FieldLiterals", "values") X(FL_STRINGS, "FieldLiterals", "strings") \
    X(FL_STRING_BYTES, "FieldLiterals", "string_bytes") X(FL_LONGEST, "FieldLiterals", "longest") \
    X(FL_EQUALITIES, "FieldLiterals", "equalities") X(FL_DISTINCT, "FieldLiterals", "distinct") \
    X(FL_DISTINCT_COUNT, "FieldLiterals", "distinct_count") X(FL_MANY, "FieldLiterals", "many") \
    X(LS_EXECUTIONS, "LiteralStats", "executions") X(LS_FIELDS, "LiteralStats", "fields")

#define SLOT_ENUM(symbol, owner, name) SL_##symbol,
enum { SLOT_LIST(SLOT_ENUM) SLOT_COUNT };
#undef SLOT_ENUM
#define SLOT_PAIR(symbol, owner, name) {owner, name},
static const char *const SLOT_NAMES[SLOT_COUNT][2] = {SLOT_LIST(SLOT_PAIR)};
#undef SLOT_PAIR

/* EXECUTION_SLOTS: ((class name, slot name), ...) in the order the context's X_SLOTS gives their descriptors. */
static int add_execution_slots(PyObject *module)
{
    PyObject *pairs = PyTuple_New(SLOT_COUNT);
    if (pairs == NULL) {
        return -1;
    }
    for (Py_ssize_t i = 0; i < SLOT_COUNT; i++) {
        PyObject *pair = Py_BuildValue("(ss)", SLOT_NAMES[i][0], SLOT_NAMES[i][1]);
        if (pair == NULL) {
            Py_DECREF(pairs);
            return -1;
        }
        PyTuple_SET_ITEM(pairs, i, pair);
    }
    int failed = PyModule_AddObjectRef(module, "EXECUTION_SLOTS", pairs) < 0;
    Py_DECREF(pairs);
    return failed ? -1 : 0;
}

/* One slot of a slots class: read and written in place in an object of exactly that class (the descriptor's own
 * offset), through the attribute protocol for anything else. */
typedef struct {
    PyTypeObject *type;
    Py_ssize_t offset;
    PyObject *name; /* borrowed from the descriptor */
} Slot;

typedef struct {
    PyObject *const *types; /* the context tuple's items, borrowed */
    long long exact_limit, first_batch, small_set, set_cap, max_buckets, max_runs, distinct_cap, max_kept;
    Py_ssize_t in_values;
    double log_gamma;
    const Slot *slots; /* SLOT_COUNT of them, in the context's capsule (execution_slots) */
} Context;

#define SLOT(symbol) (&context->slots[SL_##symbol])

/* The slots from their member descriptors (each an object slot of its class, which reads and writes attributes the
 * usual way); -1 with a TypeError for anything else. */
static int read_slots(PyObject *descriptors, Slot *slots)
{
    if (!PyTuple_CheckExact(descriptors) || PyTuple_GET_SIZE(descriptors) != SLOT_COUNT) {
        PyErr_SetString(PyExc_TypeError, "add_execution() needs the member descriptors of EXECUTION_SLOTS");
        return -1;
    }
    for (Py_ssize_t i = 0; i < SLOT_COUNT; i++) {
        PyObject *descriptor = PyTuple_GET_ITEM(descriptors, i);
        if (!Py_IS_TYPE(descriptor, &PyMemberDescr_Type)) {
            PyErr_SetString(PyExc_TypeError, "EXECUTION_SLOTS holds something other than a member descriptor");
            return -1;
        }
        PyMemberDef *member = ((PyMemberDescrObject *)descriptor)->d_member;
        PyTypeObject *type = PyDescr_TYPE(descriptor);
        if (member->type != T_OBJECT_EX || (member->flags & READONLY) || type->tp_getattro != PyObject_GenericGetAttr) {
            PyErr_SetString(PyExc_TypeError, "EXECUTION_SLOTS holds a descriptor that is not a plain object slot");
            return -1;
        }
        slots[i].type = type;
        slots[i].offset = member->offset;
        slots[i].name = PyDescr_NAME(descriptor);
    }
    return 0;
}

static const char SLOTS_CAPSULE[] = "idxadvisor._speedups.execution_slots";

/* A capsule's slot table: the slots, then the descriptors' tuple that keeps their names and classes alive. */
typedef struct {
    Slot slots[SLOT_COUNT];
    PyObject *descriptors;
} SlotTable;

static void slot_table_free(PyObject *capsule)
{
    SlotTable *table = PyCapsule_GetPointer(capsule, SLOTS_CAPSULE);
    if (table != NULL) {
        Py_XDECREF(table->descriptors);
        PyMem_Free(table);
    }
}

PyDoc_STRVAR(execution_slots_doc,
"execution_slots(descriptors, /)\n--\n\n"
"The slot table add_execution reads and writes the statistics through, from the member descriptors of the slots\n"
"EXECUTION_SLOTS names, in that order (checked once, here): a capsule for digest.execution_context().");

static PyObject *execution_slots(PyObject *module, PyObject *descriptors)
{
    (void)module;
    SlotTable *table = PyMem_Malloc(sizeof(SlotTable));
    if (table == NULL) {
        return PyErr_NoMemory();
    }
    if (read_slots(descriptors, table->slots) < 0) {
        PyMem_Free(table);
        return NULL;
    }
    table->descriptors = Py_NewRef(descriptors);
    PyObject *capsule = PyCapsule_New(table, SLOTS_CAPSULE, slot_table_free);
    if (capsule == NULL) {
        Py_DECREF(descriptors);
        PyMem_Free(table);
    }
    return capsule;
}

/* object.slot, a new reference */
static PyObject *slot_get(PyObject *object, const Slot *slot)
{
    if (Py_TYPE(object) == slot->type) {
        PyObject *value = *(PyObject **)((char *)object + slot->offset);
        if (value != NULL) {
            return Py_NewRef(value);
        }
    }
    return PyObject_GetAttr(object, slot->name);
}

/* object.slot, borrowed: only for an object of the slot's class (NULL otherwise, or when unset, without an error) */
static PyObject *slot_peek(PyObject *object, const Slot *slot)
{
    return Py_TYPE(object) == slot->type ? *(PyObject **)((char *)object + slot->offset) : NULL;
}

/* object.slot = value */
static int slot_set(PyObject *object, const Slot *slot, PyObject *value)
{
    if (Py_TYPE(object) == slot->type && slot->type->tp_setattro == PyObject_GenericSetAttr) {
        PyObject **place = (PyObject **)((char *)object + slot->offset);
        PyObject *old = *place;
        *place = Py_NewRef(value);
        Py_XDECREF(old);
        return 0;
    }
    return PyObject_SetAttr(object, slot->name, value);
}

/* object.slot += addend */
static int slot_add(PyObject *object, const Slot *slot, PyObject *addend)
{
    PyObject *value = slot_get(object, slot);
    PyObject *sum = value != NULL ? PyNumber_Add(value, addend) : NULL;
    int failed = sum == NULL || slot_set(object, slot, sum) < 0;
    Py_XDECREF(value);
    Py_XDECREF(sum);
    return failed ? -1 : 0;
}

/* object.slot is (or will be compared as) larger: object.slot = value when value > object.slot */
static int slot_raise(PyObject *object, const Slot *slot, PyObject *value)
{
    PyObject *held = slot_get(object, slot);
    int larger = held != NULL ? PyObject_RichCompareBool(value, held, Py_GT) : -1;
    Py_XDECREF(held);
    return larger < 0 ? -1 : larger ? slot_set(object, slot, value) : 0;
}

static PyObject *blank_like(State *state, PyObject *template); /* with add_execution, below */

/* The slot of an optional context (NULL without one: the attribute protocol). */
#define AT(symbol) (context != NULL ? &context->slots[SL_##symbol] : NULL)

static PyObject *get_at(PyObject *object, const Slot *slot, PyObject *name)
{
    return slot != NULL ? slot_get(object, slot) : PyObject_GetAttr(object, name);
}

static int set_at(PyObject *object, const Slot *slot, PyObject *name, PyObject *value)
{
    return slot != NULL ? slot_set(object, slot, value) : PyObject_SetAttr(object, name, value);
}

/* ---- a shape's time breakdown: timing.TimeBreakdown.add ------------------------------------------------------- */

/* round(value) as Python rounds a float (half to even) into *out; 0 when it is not finite or past a long long.
 * Without libm: the whole part and the fraction of a double are exact (setup.py links no maths library). */
static int rounded(double value, long long *out)
{
    if (!(value > -9e18 && value < 9e18)) {
        return 0;
    }
    long long whole = (long long)value; /* toward zero */
    double fraction = value - (double)whole;
    if (fraction > 0.5 || (fraction == 0.5 && (whole & 1))) {
        whole += 1;
    } else if (fraction < -0.5 || (fraction == -0.5 && (whole & 1))) {
        whole -= 1;
    }
    *out = whole;
    return 1;
}

/* Add addend to the int at list[index] (Python's numbers[index] += addend). */
static int list_add(PyObject *list, Py_ssize_t index, PyObject *addend)
{
    PyObject *sum = PyNumber_Add(PyList_GET_ITEM(list, index), addend);
    return sum == NULL ? -1 : PyList_SetItem(list, index, sum); /* steals sum, releases the old item */
}

static int attribute_add(PyObject *object, const Slot *slot, PyObject *name, PyObject *addend)
{
    PyObject *value = get_at(object, slot, name);
    PyObject *sum = value != NULL ? PyNumber_Add(value, addend) : NULL;
    int failed = sum == NULL || set_at(object, slot, name, sum) < 0;
    Py_XDECREF(value);
    Py_XDECREF(sum);
    return failed ? -1 : 0;
}

/* DurationHistogram.add(bucket) for a whole number of milliseconds under EXACT_LIMIT. */
static int histogram_add(State *state, const Context *context, PyObject *histogram, PyObject *bucket)
{
    PyObject *counts = get_at(histogram, AT(HI_COUNTS), NAME(COUNTS));
    if (counts == NULL) {
        return -1;
    }
    int failed = -1;
    PyObject *one = PyLong_FromLong(1), *count = NULL, *maximum = NULL;
    if (one == NULL || !PyDict_CheckExact(counts)) {
        if (one != NULL) {
            PyErr_SetString(PyExc_TypeError, "DurationHistogram.counts is not a dict");
        }
        goto done;
    }
    PyObject *held = PyDict_GetItemWithError(counts, bucket);
    if (held == NULL && PyErr_Occurred()) {
        goto done;
    }
    count = held != NULL ? PyNumber_Add(held, one) : Py_NewRef(one);
    if (count == NULL || PyDict_SetItem(counts, bucket, count) < 0 ||
        attribute_add(histogram, AT(HI_N), NAME(N_VALUES), one) < 0 ||
        attribute_add(histogram, AT(HI_TOTAL), NAME(TOTAL), bucket) < 0 ||
        (maximum = get_at(histogram, AT(HI_MAXIMUM), NAME(MAXIMUM))) == NULL) {
        goto done;
    }
    int larger = PyObject_RichCompareBool(bucket, maximum, Py_GT);
    if (larger < 0 || (larger && set_at(histogram, AT(HI_MAXIMUM), NAME(MAXIMUM), bucket) < 0)) {
        goto done;
    }
    failed = 0;
done:
    Py_DECREF(counts);
    Py_XDECREF(one);
    Py_XDECREF(count);
    Py_XDECREF(maximum);
    return failed;
}

typedef struct {
    PyObject *name;
    long long whole;      /* the component in whole units (µs for a time), rounded */
    long long bucket;     /* its whole milliseconds, rounded (sketched components) */
    int sketched;
} Component;

/* Whether add_timing can take this execution, and each component's numbers; changes nothing. */
static int timing_plan(PyObject *timing, PyObject *whole, PyObject *sketched, long long exact_limit, Component *plan,
                       Py_ssize_t *count)
{
    Py_ssize_t position = 0, index = 0;
    PyObject *name, *value;
    while (PyDict_Next(timing, &position, &name, &value)) {
        if (index >= 16 || !PyUnicode_CheckExact(name) || !PyFloat_CheckExact(value)) {
            return FALLBACK;
        }
        PyObject *factor = PyDict_GetItemWithError(whole, name);
        if (factor == NULL) {
            return PyErr_Occurred() ? FAILED : FALLBACK;
        }
        long multiplier = PyLong_AsLong(factor);
        if (multiplier == -1 && PyErr_Occurred()) {
            return FAILED;
        }
        double number = PyFloat_AS_DOUBLE(value);
        Component *component = &plan[index++];
        component->name = name;
        if (!rounded(number * (double)multiplier, &component->whole)) {
            return FALLBACK;
        }
        component->sketched = PySet_Contains(sketched, name);
        if (component->sketched < 0) {
            return FAILED;
        }
        if (component->sketched &&
            (!rounded(number, &component->bucket) || component->bucket < 0 || component->bucket >= exact_limit)) {
            return FALLBACK; /* DurationHistogram.add's logarithmic buckets: Python */
        }
    }
    *count = index;
    return DONE;
}

static int add_component(State *state, const Context *context, PyObject *components, PyObject *histograms,
                         PyObject *histogram_type, const Component *component, PyObject *duration)
{
    PyObject *numbers = PyDict_GetItemWithError(components, component->name);
    if (numbers == NULL) {
        if (PyErr_Occurred() || (numbers = Py_BuildValue("[iii]", 0, 0, 0)) == NULL) {
            return -1;
        }
        int failed = PyDict_SetItem(components, component->name, numbers);
        Py_DECREF(numbers); /* the dict holds it */
        if (failed < 0) {
            return -1;
        }
    }
    if (!PyList_CheckExact(numbers) || PyList_GET_SIZE(numbers) != 3) {
        PyErr_SetString(PyExc_TypeError, "TimeBreakdown.components holds a value that is not [sum, executions, us]");
        return -1;
    }
    PyObject *whole = PyLong_FromLongLong(component->whole), *one = PyLong_FromLong(1);
    int failed = whole == NULL || one == NULL || list_add(numbers, 0, whole) < 0 || list_add(numbers, 1, one) < 0 ||
                 list_add(numbers, 2, duration) < 0;
    Py_XDECREF(whole);
    Py_XDECREF(one);
    if (failed || !component->sketched) {
        return failed ? -1 : 0;
    }
    PyObject *histogram = PyDict_GetItemWithError(histograms, component->name);
    if (histogram == NULL) {
        if (PyErr_Occurred() || (histogram = PyObject_CallNoArgs(histogram_type)) == NULL) {
            return -1;
        }
        failed = PyDict_SetItem(histograms, component->name, histogram) < 0;
        Py_DECREF(histogram);
        if (failed) {
            return -1;
        }
    }
    PyObject *bucket = PyLong_FromLongLong(component->bucket);
    failed = bucket == NULL || histogram_add(state, context, histogram, bucket) < 0;
    Py_XDECREF(bucket);
    return failed ? -1 : 0;
}

PyDoc_STRVAR(add_timing_doc,
"add_timing(breakdown, timing, duration_ms, whole, sketched, histogram_type, exact_limit, /)\n--\n\n"
"timing.TimeBreakdown.add(timing, duration_ms) on breakdown, for the usual execution: every component a finite\n"
"float of a name in whole, each sketched one under exact_limit milliseconds once rounded. True when added; False,\n"
"with nothing changed, where Python must add it.");

/* TimeBreakdown.add(timing, duration_ms) on breakdown: DONE, FALLBACK (nothing changed: Python must add it) or
 * FAILED (a Python error is set). */
static int timing_into(State *state, const Context *context, PyObject *breakdown, PyObject *timing,
                       PyObject *duration_ms, PyObject *whole, PyObject *sketched, PyObject *histogram_type,
                       long long exact_limit)
{
    long long duration_us;
    if (!PyDict_CheckExact(timing) || !PyDict_CheckExact(whole) || !PyAnySet_Check(sketched)) {
        return FALLBACK;
    }
    if (PyLong_CheckExact(duration_ms)) {
        int overflow;
        long long milliseconds = PyLong_AsLongLongAndOverflow(duration_ms, &overflow);
        if (overflow || milliseconds > 9000000000000000LL || milliseconds < -9000000000000000LL) {
            return FALLBACK;
        }
        duration_us = milliseconds * 1000;
    } else if (!PyFloat_CheckExact(duration_ms) || !rounded(PyFloat_AS_DOUBLE(duration_ms) * 1000.0, &duration_us)) {
        return FALLBACK;
    }
    Component plan[16];
    Py_ssize_t count = 0;
    int status = timing_plan(timing, whole, sketched, exact_limit, plan, &count);
    if (status != DONE) {
        return status;
    }
    PyObject *components = get_at(breakdown, AT(BD_COMPONENTS), NAME(COMPONENTS));
    PyObject *histograms = components != NULL ? get_at(breakdown, AT(BD_HISTOGRAMS), NAME(HISTOGRAMS)) : NULL;
    PyObject *duration = histograms != NULL ? PyLong_FromLongLong(duration_us) : NULL;
    PyObject *one = duration != NULL ? PyLong_FromLong(1) : NULL;
    status = FAILED;
    if (one == NULL) {
        goto done;
    }
    if (!PyDict_CheckExact(components) || !PyDict_CheckExact(histograms)) {
        status = FALLBACK;
        goto done;
    }
    if (attribute_add(breakdown, AT(BD_EXECUTIONS), NAME(EXECUTIONS), one) < 0 ||
        attribute_add(breakdown, AT(BD_DURATION_US), NAME(DURATION_US), duration) < 0) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (add_component(state, context, components, histograms, histogram_type, &plan[i], duration) < 0) {
            goto done;
        }
    }
    status = DONE;
done:
    Py_XDECREF(components);
    Py_XDECREF(histograms);
    Py_XDECREF(duration);
    Py_XDECREF(one);
    return status;
}

/* True, False or NULL for what a *_into function said. */
static PyObject *status_result(int status)
{
    return status == FAILED ? NULL : Py_NewRef(status == DONE ? Py_True : Py_False);
}

static PyObject *add_timing(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    State *state = module_state(module);
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "add_timing() takes exactly 7 arguments");
        return NULL;
    }
    long long exact_limit = PyLong_AsLongLong(args[6]);
    if (exact_limit == -1 && PyErr_Occurred()) {
        return NULL;
    }
    return status_result(timing_into(state, NULL, args[0], args[1], args[2], args[3], args[4], args[5], exact_limit));
}


static const uint32_t CRC32_TABLE[256] = {
    0x00000000U, 0x77073096U, 0xee0e612cU, 0x990951baU, 0x076dc419U, 0x706af48fU,
    0xe963a535U, 0x9e6495a3U, 0x0edb8832U, 0x79dcb8a4U, 0xe0d5e91eU, 0x97d2d988U,
    0x09b64c2bU, 0x7eb17cbdU, 0xe7b82d07U, 0x90bf1d91U, 0x1db71064U, 0x6ab020f2U,
    0xf3b97148U, 0x84be41deU, 0x1adad47dU, 0x6ddde4ebU, 0xf4d4b551U, 0x83d385c7U,
    0x136c9856U, 0x646ba8c0U, 0xfd62f97aU, 0x8a65c9ecU, 0x14015c4fU, 0x63066cd9U,
    0xfa0f3d63U, 0x8d080df5U, 0x3b6e20c8U, 0x4c69105eU, 0xd56041e4U, 0xa2677172U,
    0x3c03e4d1U, 0x4b04d447U, 0xd20d85fdU, 0xa50ab56bU, 0x35b5a8faU, 0x42b2986cU,
    0xdbbbc9d6U, 0xacbcf940U, 0x32d86ce3U, 0x45df5c75U, 0xdcd60dcfU, 0xabd13d59U,
    0x26d930acU, 0x51de003aU, 0xc8d75180U, 0xbfd06116U, 0x21b4f4b5U, 0x56b3c423U,
    0xcfba9599U, 0xb8bda50fU, 0x2802b89eU, 0x5f058808U, 0xc60cd9b2U, 0xb10be924U,
    0x2f6f7c87U, 0x58684c11U, 0xc1611dabU, 0xb6662d3dU, 0x76dc4190U, 0x01db7106U,
    0x98d220bcU, 0xefd5102aU, 0x71b18589U, 0x06b6b51fU, 0x9fbfe4a5U, 0xe8b8d433U,
    0x7807c9a2U, 0x0f00f934U, 0x9609a88eU, 0xe10e9818U, 0x7f6a0dbbU, 0x086d3d2dU,
    0x91646c97U, 0xe6635c01U, 0x6b6b51f4U, 0x1c6c6162U, 0x856530d8U, 0xf262004eU,
    0x6c0695edU, 0x1b01a57bU, 0x8208f4c1U, 0xf50fc457U, 0x65b0d9c6U, 0x12b7e950U,
    0x8bbeb8eaU, 0xfcb9887cU, 0x62dd1ddfU, 0x15da2d49U, 0x8cd37cf3U, 0xfbd44c65U,
    0x4db26158U, 0x3ab551ceU, 0xa3bc0074U, 0xd4bb30e2U, 0x4adfa541U, 0x3dd895d7U,
    0xa4d1c46dU, 0xd3d6f4fbU, 0x4369e96aU, 0x346ed9fcU, 0xad678846U, 0xda60b8d0U,
    0x44042d73U, 0x33031de5U, 0xaa0a4c5fU, 0xdd0d7cc9U, 0x5005713cU, 0x270241aaU,
    0xbe0b1010U, 0xc90c2086U, 0x5768b525U, 0x206f85b3U, 0xb966d409U, 0xce61e49fU,
    0x5edef90eU, 0x29d9c998U, 0xb0d09822U, 0xc7d7a8b4U, 0x59b33d17U, 0x2eb40d81U,
    0xb7bd5c3bU, 0xc0ba6cadU, 0xedb88320U, 0x9abfb3b6U, 0x03b6e20cU, 0x74b1d29aU,
    0xead54739U, 0x9dd277afU, 0x04db2615U, 0x73dc1683U, 0xe3630b12U, 0x94643b84U,
    0x0d6d6a3eU, 0x7a6a5aa8U, 0xe40ecf0bU, 0x9309ff9dU, 0x0a00ae27U, 0x7d079eb1U,
    0xf00f9344U, 0x8708a3d2U, 0x1e01f268U, 0x6906c2feU, 0xf762575dU, 0x806567cbU,
    0x196c3671U, 0x6e6b06e7U, 0xfed41b76U, 0x89d32be0U, 0x10da7a5aU, 0x67dd4accU,
    0xf9b9df6fU, 0x8ebeeff9U, 0x17b7be43U, 0x60b08ed5U, 0xd6d6a3e8U, 0xa1d1937eU,
    0x38d8c2c4U, 0x4fdff252U, 0xd1bb67f1U, 0xa6bc5767U, 0x3fb506ddU, 0x48b2364bU,
    0xd80d2bdaU, 0xaf0a1b4cU, 0x36034af6U, 0x41047a60U, 0xdf60efc3U, 0xa867df55U,
    0x316e8eefU, 0x4669be79U, 0xcb61b38cU, 0xbc66831aU, 0x256fd2a0U, 0x5268e236U,
    0xcc0c7795U, 0xbb0b4703U, 0x220216b9U, 0x5505262fU, 0xc5ba3bbeU, 0xb2bd0b28U,
    0x2bb45a92U, 0x5cb36a04U, 0xc2d7ffa7U, 0xb5d0cf31U, 0x2cd99e8bU, 0x5bdeae1dU,
    0x9b64c2b0U, 0xec63f226U, 0x756aa39cU, 0x026d930aU, 0x9c0906a9U, 0xeb0e363fU,
    0x72076785U, 0x05005713U, 0x95bf4a82U, 0xe2b87a14U, 0x7bb12baeU, 0x0cb61b38U,
    0x92d28e9bU, 0xe5d5be0dU, 0x7cdcefb7U, 0x0bdbdf21U, 0x86d3d2d4U, 0xf1d4e242U,
    0x68ddb3f8U, 0x1fda836eU, 0x81be16cdU, 0xf6b9265bU, 0x6fb077e1U, 0x18b74777U,
    0x88085ae6U, 0xff0f6a70U, 0x66063bcaU, 0x11010b5cU, 0x8f659effU, 0xf862ae69U,
    0x616bffd3U, 0x166ccf45U, 0xa00ae278U, 0xd70dd2eeU, 0x4e048354U, 0x3903b3c2U,
    0xa7672661U, 0xd06016f7U, 0x4969474dU, 0x3e6e77dbU, 0xaed16a4aU, 0xd9d65adcU,
    0x40df0b66U, 0x37d83bf0U, 0xa9bcae53U, 0xdebb9ec5U, 0x47b2cf7fU, 0x30b5ffe9U,
    0xbdbdf21cU, 0xcabac28aU, 0x53b39330U, 0x24b4a3a6U, 0xbad03605U, 0xcdd70693U,
    0x54de5729U, 0x23d967bfU, 0xb3667a2eU, 0xc4614ab8U, 0x5d681b02U, 0x2a6f2b94U,
    0xb40bbe37U, 0xc30c8ea1U, 0x5a05df1bU, 0x2d02ef8dU,
};

/* ---- a shape's literal values: literals.LiteralStats.observe ------------------------------------------------- */

/* zlib.crc32 (CRC-32, polynomial 0xEDB88320) */
static uint32_t crc32_of(const char *data, Py_ssize_t length)
{
    uint32_t crc = 0xFFFFFFFFU;
    for (Py_ssize_t i = 0; i < length; i++) {
        crc = CRC32_TABLE[(crc ^ (unsigned char)data[i]) & 0xFFU] ^ (crc >> 8);
    }
    return crc ^ 0xFFFFFFFFU;
}

#define LITERALS_MAX 64

typedef struct {
    PyObject *name;    /* borrowed: a key of the filter */
    Py_ssize_t length; /* a string's length in code points; -1 for any other value */
    uint32_t crc;      /* an equality value's checksum: of its UTF-8 (a string), of its repr (anything else) */
    int equality;
} Literal;

typedef struct {
    Literal items[LITERALS_MAX];
    int count;
} Literals;

static int checksum_of_text(PyObject *text, uint32_t *crc)
{
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    if (utf8 == NULL) {
        PyErr_Clear(); /* a lone surrogate: Python's encode() fails the same way on its path */
        return FALLBACK;
    }
    *crc = crc32_of(utf8, size);
    return DONE;
}

/* One value as FieldLiterals.add gets it after literals._scalar: a string, a number, a bool, None or an Extended
 * JSON wrapper's (name, repr); FALLBACK for the documents and arrays Python turns into JSON text. */
static int measure(PyObject *widths, PyObject *name, PyObject *value, int equality, Literals *out)
{
    if (out->count >= LITERALS_MAX) {
        return FALLBACK;
    }
    Literal *literal = &out->items[out->count];
    literal->name = name;
    literal->equality = equality;
    literal->crc = 0;
    literal->length = -1;
    if (PyUnicode_CheckExact(value)) {
        literal->length = PyUnicode_GET_LENGTH(value);
        int status = equality ? checksum_of_text(value, &literal->crc) : DONE;
        out->count += status == DONE;
        return status;
    }
    PyObject *scalar;
    if (PyLong_CheckExact(value) || PyFloat_CheckExact(value) || PyBool_Check(value) || value == Py_None) {
        scalar = Py_NewRef(value);
    } else if (PyDict_CheckExact(value) && PyDict_GET_SIZE(value) > 0) {
        Py_ssize_t position = 0;
        PyObject *wrapper, *inner;
        PyDict_Next(value, &position, &wrapper, &inner);
        int known = PyDict_Contains(widths, wrapper);
        if (known <= 0) {
            return known < 0 ? FAILED : FALLBACK;
        }
        PyObject *text = PyObject_Repr(inner);
        PyObject *cut = text != NULL ? PyUnicode_Substring(text, 0, 64) : NULL;
        scalar = cut != NULL ? PyTuple_Pack(2, wrapper, cut) : NULL;
        Py_XDECREF(text);
        Py_XDECREF(cut);
        if (scalar == NULL) {
            PyErr_Clear(); /* a repr that fails (nesting too deep) fails on Python's path too */
            return FALLBACK;
        }
    } else {
        return FALLBACK;
    }
    int status = DONE;
    if (equality) {
        PyObject *text = PyObject_Repr(scalar);
        if (text == NULL) {
            PyErr_Clear();
            status = FALLBACK;
        } else {
            status = checksum_of_text(text, &literal->crc);
            Py_DECREF(text);
        }
    }
    Py_DECREF(scalar);
    out->count += status == DONE;
    return status;
}

static int is_text(PyObject *object, const char *text)
{
    return PyUnicode_CheckExact(object) && PyUnicode_CompareWithASCIIString(object, text) == 0;
}

/* LiteralStats._field */
static int field_literals(PyObject *widths, Py_ssize_t in_values, PyObject *name, PyObject *value, Literals *out)
{
    if (PyUnicode_CheckExact(value) || PyLong_CheckExact(value) || PyFloat_CheckExact(value) || PyBool_Check(value)) {
        return measure(widths, name, value, 1, out);
    }
    if (PyDict_CheckExact(value) && PyDict_GET_SIZE(value) > 0) {
        PyObject *first = first_key(value);
        if (!PyUnicode_CheckExact(first)) {
            return FALLBACK;
        }
        int wrapper = PyDict_Contains(widths, first);
        if (wrapper < 0) {
            return FAILED;
        }
        if (starts_with_dollar(first) && !wrapper) {
            Py_ssize_t position = 0;
            PyObject *operator, *operand;
            int status = DONE;
            while (status == DONE && PyDict_Next(value, &position, &operator, &operand)) {
                if (is_text(operator, "$in") && PyList_CheckExact(operand)) {
                    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(operand) && i < in_values && status == DONE; i++) {
                        status = measure(widths, name, PyList_GET_ITEM(operand, i), 1, out);
                    }
                } else if (is_text(operator, "$eq") || is_text(operator, "$in")) {
                    status = measure(widths, name, operand, 1, out);
                } else if (is_text(operator, "$gt") || is_text(operator, "$gte") || is_text(operator, "$lt") ||
                           is_text(operator, "$lte")) {
                    status = measure(widths, name, operand, 0, out);
                }
            }
            return status;
        }
    }
    return measure(widths, name, value, 1, out);
}

/* LiteralStats._walk */
static int walk_literals(State *state, PyObject *widths, Py_ssize_t in_values, PyObject *document, int depth,
                         Literals *out)
{
    Py_ssize_t position = 0;
    PyObject *key, *value;
    int status = DONE;
    while (status == DONE && PyDict_Next(document, &position, &key, &value)) {
        if (!PyUnicode_CheckExact(key)) {
            return FALLBACK;
        }
        if (PyUnicode_Compare(key, NAME(AND_OP)) == 0 && PyList_CheckExact(value) && depth < 3) {
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value) && status == DONE; i++) {
                PyObject *branch = PyList_GET_ITEM(value, i);
                if (PyDict_CheckExact(branch)) {
                    status = walk_literals(state, widths, in_values, branch, depth + 1, out);
                }
            }
        } else if (!starts_with_dollar(key)) {
            status = field_literals(widths, in_values, key, value, out);
        }
    }
    return status;
}

/* literals.filter_document, borrowed (NULL: none) */
static PyObject *filter_document(State *state, PyObject *op, PyObject *command)
{
    if (op_is(op, "find")) {
        return item(command, NAME(FILTER));
    }
    if (op_is(op, "count") || op_is(op, "distinct") || op_is(op, "findAndModify")) {
        return item(command, NAME(QUERY));
    }
    if (op_is(op, "update") || op_is(op, "delete")) {
        PyObject *q = item(command, NAME(Q));
        if (q != NULL || PyErr_Occurred()) {
            return q;
        }
        PyObject *listed = item(command, op_is(op, "update") ? NAME(UPDATES) : NAME(DELETES));
        if (listed != NULL && PyList_CheckExact(listed) && PyList_GET_SIZE(listed) == 1 &&
            PyDict_CheckExact(PyList_GET_ITEM(listed, 0))) {
            return item(PyList_GET_ITEM(listed, 0), NAME(Q));
        }
        return NULL;
    }
    if (op_is(op, "aggregate")) {
        PyObject *pipeline = item(command, NAME(PIPELINE));
        if (pipeline != NULL && PyList_CheckExact(pipeline) && PyList_GET_SIZE(pipeline) > 0 &&
            PyDict_CheckExact(PyList_GET_ITEM(pipeline, 0))) {
            return item(PyList_GET_ITEM(pipeline, 0), NAME(MATCH_STAGE));
        }
    }
    return NULL;
}

static int set_number(PyObject *object, const Slot *slot, PyObject *name, long long value)
{
    PyObject *number = PyLong_FromLongLong(value);
    int failed = number == NULL || set_at(object, slot, name, number) < 0;
    Py_XDECREF(number);
    return failed ? -1 : 0;
}

/* An int attribute, or -1 with an error (they are counts: never negative). */
static long long get_number(PyObject *object, const Slot *slot, PyObject *name)
{
    PyObject *number = get_at(object, slot, name);
    if (number == NULL) {
        return -1;
    }
    long long value = PyLong_AsLongLong(number);
    Py_DECREF(number);
    return value;
}

static int add_number(PyObject *object, const Slot *slot, PyObject *name, long long addend)
{
    long long value = get_number(object, slot, name);
    return value == -1 && PyErr_Occurred() ? -1 : set_number(object, slot, name, value + addend);
}

/* FieldLiterals.add(value, equality), from what measure() found. */
static int field_add(State *state, const Context *context, PyObject *found, const Literal *literal,
                     long long distinct_cap)
{
    if (add_number(found, AT(FL_VALUES), NAME(VALUES), 1) < 0) {
        return -1;
    }
    if (literal->length >= 0) {
        long long longest = get_number(found, AT(FL_LONGEST), NAME(LONGEST));
        if ((longest == -1 && PyErr_Occurred()) || add_number(found, AT(FL_STRINGS), NAME(STRINGS), 1) < 0 ||
            add_number(found, AT(FL_STRING_BYTES), NAME(STRING_BYTES), literal->length) < 0 ||
            (literal->length > longest && set_number(found, AT(FL_LONGEST), NAME(LONGEST), literal->length) < 0)) {
            return -1;
        }
    }
    if (!literal->equality) {
        return 0;
    }
    if (add_number(found, AT(FL_EQUALITIES), NAME(EQUALITIES), 1) < 0) {
        return -1;
    }
    PyObject *many = get_at(found, AT(FL_MANY), NAME(MANY));
    int is_many = many != NULL ? PyObject_IsTrue(many) : -1;
    Py_XDECREF(many);
    if (is_many != 0) {
        return is_many < 0 ? -1 : 0;
    }
    /* FieldLiterals.distinct: the checksums, 4 bytes each (big-endian, ascending), in one bytes object */
    PyObject *distinct = get_at(found, AT(FL_DISTINCT), NAME(DISTINCT));
    if (distinct == NULL) {
        return -1;
    }
    if (!PyBytes_Check(distinct)) {
        Py_DECREF(distinct);
        PyErr_SetString(PyExc_TypeError, "FieldLiterals.distinct is not bytes");
        return -1;
    }
    const unsigned char packed[4] = {(unsigned char)(literal->crc >> 24), (unsigned char)(literal->crc >> 16),
                                     (unsigned char)(literal->crc >> 8), (unsigned char)literal->crc};
    const char *known = PyBytes_AS_STRING(distinct);
    Py_ssize_t length = PyBytes_GET_SIZE(distinct) / 4 * 4, at = 0;
    for (; at < length; at += 4) {
        int order = memcmp(known + at, packed, 4);
        if (order == 0) { /* known already: no more distinct values than counted */
            Py_DECREF(distinct);
            return 0;
        }
        if (order > 0) {
            break;
        }
    }
    Py_ssize_t size = length / 4 + 1;
    PyObject *grown = size <= distinct_cap ? PyBytes_FromStringAndSize(NULL, length + 4)
                                           : PyBytes_FromStringAndSize("", 0); /* FieldLiterals._counted: many */
    if (grown != NULL && size <= distinct_cap) {
        char *into = PyBytes_AS_STRING(grown);
        memcpy(into, known, (size_t)at);
        memcpy(into + at, packed, 4);
        memcpy(into + at + 4, known + at, (size_t)(length - at));
    }
    Py_DECREF(distinct);
    if (grown == NULL) {
        return -1;
    }
    int failed = set_at(found, AT(FL_DISTINCT), NAME(DISTINCT), grown) < 0;
    Py_DECREF(grown);
    if (failed) {
        return -1;
    }
    if (size > distinct_cap) {
        return set_at(found, AT(FL_MANY), NAME(MANY), Py_True) < 0
                   ? -1
                   : set_number(found, AT(FL_DISTINCT_COUNT), NAME(DISTINCT_COUNT), 0);
    }
    long long counted = get_number(found, AT(FL_DISTINCT_COUNT), NAME(DISTINCT_COUNT));
    if (counted == -1 && PyErr_Occurred()) {
        return -1;
    }
    return size <= counted ? 0 : set_number(found, AT(FL_DISTINCT_COUNT), NAME(DISTINCT_COUNT), size);
}

PyDoc_STRVAR(observe_literals_doc,
"observe_literals(stats, op, command, field_type, widths, in_values, distinct_cap, /)\n--\n\n"
"literals.LiteralStats.observe(op, command) on stats, for filters of strings, numbers, bools, None and Extended\n"
"JSON wrappers. True when observed; False, with nothing changed, where Python must observe it (a document or\n"
"array as a value, which Python measures by its JSON text).");

/* LiteralStats.observe(op, command) on stats: DONE, FALLBACK (nothing changed: Python must observe it) or FAILED. */
static int literals_into(State *state, const Context *context, PyObject *stats, PyObject *op, PyObject *command,
                         PyObject *field_type, PyObject *widths, Py_ssize_t in_values, long long distinct_cap)
{
    if (!PyUnicode_CheckExact(op) || !PyDict_CheckExact(widths)) {
        return FALLBACK;
    }
    Literals *found = PyMem_Malloc(sizeof(Literals));
    if (found == NULL) {
        PyErr_NoMemory();
        return FAILED;
    }
    found->count = 0;
    int status = DONE;
    PyObject *document = PyDict_CheckExact(command) ? filter_document(state, op, command) : NULL;
    if (document == NULL && PyErr_Occurred()) {
        status = FAILED;
    } else if (document != NULL && PyDict_CheckExact(document)) {
        status = walk_literals(state, widths, in_values, document, 0, found);
    }
    PyObject *fields = NULL;
    if (status != DONE) {
        goto done;
    }
    status = FAILED;
    if ((fields = get_at(stats, AT(LS_FIELDS), NAME(FIELDS))) == NULL) {
        goto done;
    }
    if (!PyDict_CheckExact(fields)) {
        status = FALLBACK;
        goto done;
    }
    if (add_number(stats, AT(LS_EXECUTIONS), NAME(EXECUTIONS), 1) < 0) {
        goto done;
    }
    for (int i = 0; i < found->count; i++) {
        const Literal *literal = &found->items[i];
        PyObject *field = PyDict_GetItemWithError(fields, literal->name);
        if (field == NULL) {
            /* field_type: FieldLiterals, or with a context a FieldLiterals() to make the new one like */
            if (PyErr_Occurred() ||
                (field = context != NULL ? blank_like(state, field_type) : PyObject_CallNoArgs(field_type)) == NULL) {
                goto done;
            }
            int failed = PyDict_SetItem(fields, literal->name, field) < 0;
            Py_DECREF(field); /* the dict holds it */
            if (failed) {
                goto done;
            }
        }
        if (field_add(state, context, field, literal, distinct_cap) < 0) {
            goto done;
        }
    }
    status = DONE;
done:
    Py_XDECREF(fields);
    PyMem_Free(found);
    return status;
}

static PyObject *observe_literals(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    State *state = module_state(module);
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "observe_literals() takes exactly 7 arguments");
        return NULL;
    }
    Py_ssize_t in_values = PyLong_AsSsize_t(args[5]);
    long long distinct_cap = PyLong_AsLongLong(args[6]);
    if ((in_values == -1 || distinct_cap == -1) && PyErr_Occurred()) {
        return NULL;
    }
    return status_result(
        literals_into(state, NULL, args[0], args[1], args[2], args[3], args[4], in_values, distinct_cap));
}

/* ---- a shape's statistics: digest.ShapeStats.add --------------------------------------------------------------- */

/* What ShapeStats.add reads of one execution: strong references (NULL: absent or None, unless said). */
typedef struct {
    PyObject *fields;    /* the event's __dict__ */
    PyObject *ns, *op;   /* present, op a str */
    PyObject *duration;  /* the duration the statistics use: 0.0 for none or a damaged one */
    int histogram;       /* whether the duration goes into the histogram (it is not None) */
    PyObject *keys, *docs, *returned, *plan, *app, *connection, *remote, *ts, *command, *originating, *timing;
    PyObject *internal, *error, *yields, *response, *in_length, *skip;
    PyObject *hashes[4];
    int getmore, written, sort, disk, truncated, unparsed, replanned;
} Execution;

static void execution_clear(Execution *execution)
{
    PyObject **held[] = {&execution->fields, &execution->ns, &execution->op, &execution->duration, &execution->keys,
                         &execution->docs, &execution->returned, &execution->plan, &execution->app,
                         &execution->connection, &execution->remote, &execution->ts, &execution->command,
                         &execution->originating, &execution->timing, &execution->internal, &execution->error,
                         &execution->yields, &execution->response, &execution->in_length, &execution->skip,
                         &execution->hashes[0], &execution->hashes[1], &execution->hashes[2], &execution->hashes[3]};
    for (size_t i = 0; i < COUNT_OF(held); i++) {
        Py_CLEAR(*held[i]);
    }
}

/* An event field as a strong reference into *out, NULL for absent or None. */
static int field_of(PyObject *fields, PyObject *name, PyObject **out)
{
    PyObject *value = PyDict_GetItemWithError(fields, name);
    if (value == NULL) {
        return PyErr_Occurred() ? FAILED : DONE;
    }
    *out = value == Py_None ? NULL : Py_NewRef(value);
    return DONE;
}

/* A counter field: None or an int (anything else: Python). */
static int counter_of(PyObject *fields, PyObject *name, PyObject **out)
{
    int status = field_of(fields, name, out);
    return status == DONE && *out != NULL && !PyLong_CheckExact(*out) ? FALLBACK : status;
}

/* A text field: None or a str. */
static int text_of(PyObject *fields, PyObject *name, PyObject **out)
{
    int status = field_of(fields, name, out);
    return status == DONE && *out != NULL && !PyUnicode_CheckExact(*out) ? FALLBACK : status;
}

/* The truth of a flag field: absent, None, a bool or an int (anything else: Python). */
static int flag_of(PyObject *fields, PyObject *name, int *out)
{
    PyObject *value = PyDict_GetItemWithError(fields, name);
    if (value == NULL) {
        *out = 0;
        return PyErr_Occurred() ? FAILED : DONE;
    }
    if (value != Py_None && !PyBool_Check(value) && !PyLong_CheckExact(value)) {
        return FALLBACK;
    }
    *out = value != Py_None && PyObject_IsTrue(value);
    return DONE;
}

/* A duration the C code adds exactly as Python does: an int within 2**53 or a finite float. */
static int plain_duration(PyObject *value)
{
    if (PyLong_CheckExact(value)) {
        int overflow;
        long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
        return !overflow && number <= (1LL << 53) && number >= -(1LL << 53);
    }
    return PyFloat_CheckExact(value) && isfinite(PyFloat_AS_DOUBLE(value));
}

/* Reads everything ShapeStats.add needs of the event, or says FALLBACK for what the C code leaves to Python. */
static int read_execution(State *state, const Context *context, PyObject *event, PyObject *observation,
                          Execution *execution)
{
    if (Py_TYPE(event) != (PyTypeObject *)context->types[X_EVENT] ||
        Py_TYPE(observation) != (PyTypeObject *)context->types[X_SHAPE_OBSERVATION]) {
        return FALLBACK;
    }
    PyObject *fields = execution->fields = PyObject_GenericGetDict(event, NULL);
    if (fields == NULL) {
        return FAILED;
    }
    if (!PyDict_CheckExact(fields)) {
        return FALLBACK;
    }
    int status = field_of(fields, NAME(NS), &execution->ns);
    if (status == DONE) {
        status = text_of(fields, NAME(OP), &execution->op);
    }
    if (status != DONE || execution->ns == NULL || execution->op == NULL) {
        return status == DONE ? FALLBACK : status;
    }
    PyObject *duration = PyDict_GetItemWithError(fields, NAME(DURATION_MS));
    if (duration == NULL && PyErr_Occurred()) {
        return FAILED;
    }
    execution->histogram = duration != Py_None;
    if (duration == NULL || duration == Py_None) {
        if ((execution->duration = PyFloat_FromDouble(0.0)) == NULL) {
            return FAILED;
        }
    } else if (!plain_duration(duration)) {
        return FALLBACK;
    } else {
        execution->duration = Py_NewRef(duration);
    }
    PyObject *op = execution->op;
    execution->getmore = op_is(op, "getMore");
    execution->written = op_is(op, "update") ? N_S_N_MATCHED : op_is(op, "delete") ? N_S_N_DELETED
                                                             : op_is(op, "insert") ? N_S_N_INSERTED : 0;
    int statement;
    if ((status = counter_of(fields, NAME(S_KEYS), &execution->keys)) != DONE ||
        (status = counter_of(fields, NAME(S_DOCS), &execution->docs)) != DONE ||
        (status = counter_of(fields, NAME(S_NRETURNED), &execution->returned)) != DONE ||
        (status = flag_of(fields, NAME(STATEMENT), &statement)) != DONE) {
        return status;
    }
    if (execution->returned == NULL && (statement || execution->written)) {
        PyObject *name = state->names[execution->written ? execution->written : N_S_N_DELETED];
        if ((status = counter_of(fields, name, &execution->returned)) != DONE) {
            return status;
        }
    }
    int spills;
    if ((status = text_of(fields, NAME(S_PLAN_SUMMARY), &execution->plan)) != DONE ||
        (status = flag_of(fields, NAME(S_HAS_SORT_STAGE), &execution->sort)) != DONE ||
        (status = flag_of(fields, NAME(S_USED_DISK), &execution->disk)) != DONE ||
        (status = flag_of(fields, NAME(S_SPILLS), &spills)) != DONE ||
        (status = field_of(fields, NAME(ERROR), &execution->error)) != DONE ||
        (status = flag_of(fields, NAME(TRUNCATED), &execution->truncated)) != DONE ||
        (status = flag_of(fields, NAME(S_UNPARSED), &execution->unparsed)) != DONE ||
        (status = text_of(fields, NAME(INTERNAL), &execution->internal)) != DONE ||
        (status = counter_of(fields, NAME(S_NUM_YIELDS), &execution->yields)) != DONE ||
        (status = counter_of(fields, NAME(S_RESPONSE_LENGTH), &execution->response)) != DONE ||
        (status = flag_of(fields, NAME(S_REPLANNED), &execution->replanned)) != DONE ||
        (status = field_of(fields, NAME(TIMING), &execution->timing)) != DONE ||
        (status = text_of(fields, NAME(APP_NAME), &execution->app)) != DONE ||
        (status = text_of(fields, NAME(CONNECTION), &execution->connection)) != DONE ||
        (status = field_of(fields, NAME(S_REMOTE), &execution->remote)) != DONE ||
        (status = field_of(fields, NAME(TS), &execution->ts)) != DONE ||
        (status = field_of(fields, NAME(COMMAND), &execution->command)) != DONE ||
        (status = field_of(fields, NAME(ORIGINATING_COMMAND), &execution->originating)) != DONE) {
        return status;
    }
    execution->disk = execution->disk || spills;
    static const int hash_names[4] = {N_S_QUERY_HASH, N_S_PLAN_CACHE_SHAPE_HASH, N_S_QUERY_SHAPE_HASH,
                                      N_S_PLAN_CACHE_KEY};
    for (int i = 0; i < 4; i++) {
        if ((status = text_of(fields, state->names[hash_names[i]], &execution->hashes[i])) != DONE) {
            return status;
        }
    }
    if (execution->ts != NULL && Py_TYPE(execution->ts) != (PyTypeObject *)context->types[X_DATETIME]) {
        return FALLBACK;
    }
    execution->in_length = slot_get(observation, SLOT(OB_IN_LENGTH));
    execution->skip = execution->in_length != NULL ? slot_get(observation, SLOT(OB_SKIP)) : NULL;
    if (execution->skip == NULL) {
        return FAILED;
    }
    return PyLong_CheckExact(execution->in_length) && PyLong_CheckExact(execution->skip) ? DONE : FALLBACK;
}

/* A string, truthy and interned: sys.intern(text) as a new reference. */
static PyObject *interned(PyObject *text)
{
    Py_INCREF(text);
    PyUnicode_InternInPlace(&text);
    return text;
}

/* mapping[key] = mapping.get(key, 0) + 1 */
static int count_in(PyObject *mapping, PyObject *key, PyObject *one)
{
    PyObject *held = PyDict_GetItemWithError(mapping, key);
    if (held == NULL && PyErr_Occurred()) {
        return -1;
    }
    PyObject *count = held != NULL ? PyNumber_Add(held, one) : Py_NewRef(one);
    int failed = count == NULL || PyDict_SetItem(mapping, key, count) < 0;
    Py_XDECREF(count);
    return failed ? -1 : 0;
}

/* A value a blank object may share with its template: one that cannot change. */
static int immutable(PyObject *value)
{
    return value == Py_None || PyBool_Check(value) || PyLong_CheckExact(value) || PyFloat_CheckExact(value) ||
           PyUnicode_CheckExact(value) || PyBytes_CheckExact(value) ||
           (PyTuple_CheckExact(value) && PyTuple_GET_SIZE(value) == 0);
}

/* A new object of the template's slots class with the template's values, as type() makes it: the template is a
 * type() kept for this (its defaults, all immutable), and copying its slots skips a dataclass __init__ in Python.
 * Calls the type for a class that is not a plain slots class of object, has a __post_init__, or holds a value that
 * could change. */
static PyObject *blank_like(State *state, PyObject *template)
{
    PyTypeObject *type = Py_TYPE(template);
    PyMemberDef *members = type->tp_members;
    int plain = (type->tp_flags & Py_TPFLAGS_HEAPTYPE) && type->tp_base == &PyBaseObject_Type &&
                type->tp_new == PyBaseObject_Type.tp_new && type->tp_dictoffset == 0 &&
                type->tp_weaklistoffset == 0 && members != NULL && type->tp_dict != NULL &&
                PyDict_GetItemWithError(type->tp_dict, NAME(S_POST_INIT)) == NULL; /* __init__ does no more */
    for (PyMemberDef *member = members; plain && member->name != NULL; member++) {
        PyObject *value = *(PyObject **)((char *)template + member->offset);
        plain = member->type == T_OBJECT_EX && value != NULL && immutable(value);
    }
    if (!plain) {
        return PyErr_Occurred() ? NULL : PyObject_CallNoArgs((PyObject *)type);
    }
    PyObject *made = type->tp_alloc(type, 0);
    if (made == NULL) {
        return NULL;
    }
    for (PyMemberDef *member = members; member->name != NULL; member++) {
        *(PyObject **)((char *)made + member->offset) = Py_NewRef(*(PyObject **)((char *)template + member->offset));
    }
    return made;
}

/* A slot that must hold a dict, as a new reference (a TypeError for anything else). */
static PyObject *dict_slot(PyObject *object, const Slot *slot)
{
    PyObject *value = slot_get(object, slot);
    if (value != NULL && !PyDict_CheckExact(value)) {
        PyErr_Format(PyExc_TypeError, "%U is not a dict", slot->name);
        Py_CLEAR(value);
    }
    return value;
}

/* dict[key], made like template (blank_like) when missing (a new reference). */
static PyObject *item_or_new(State *state, PyObject *dict, PyObject *key, PyObject *template)
{
    PyObject *value = PyDict_GetItemWithError(dict, key);
    if (value != NULL) {
        return Py_NewRef(value);
    }
    if (PyErr_Occurred() || (value = blank_like(state, template)) == NULL) {
        return NULL;
    }
    if (PyDict_SetItem(dict, key, value) < 0) {
        Py_DECREF(value);
        return NULL;
    }
    return value;
}

/* object.name(args...) through Python (the reference method), its result dropped. */
static int call_method(PyObject *object, PyObject *name, PyObject *first, PyObject *second, PyObject *third,
                       PyObject *fourth)
{
    PyObject *args[5] = {object, first, second, third, fourth};
    size_t count = 1 + (first != NULL) + (second != NULL) + (third != NULL) + (fourth != NULL);
    PyObject *result = PyObject_VectorcallMethod(name, args, count | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    Py_XDECREF(result);
    return result == NULL ? -1 : 0;
}

/* DurationHistogram.add(value) for an int within 2**53 or a finite float (Python's method past exact_limit). */
static int histogram_add_value(State *state, const Context *context, PyObject *histogram, PyObject *value)
{
    long long bucket, exact_limit = context->exact_limit;
    if (PyLong_CheckExact(value)) {
        bucket = PyLong_AsLongLong(value);
        if (bucket < 0) {
            return bucket == -1 && PyErr_Occurred() ? -1 : 0;
        }
    } else {
        double number = PyFloat_AS_DOUBLE(value);
        if (!(number >= 0)) {
            return 0; /* NaN or negative: not a duration */
        }
        bucket = number < (double)exact_limit ? (long long)number : exact_limit;
        if (bucket < exact_limit && (double)bucket < number) {
            bucket += 1; /* math.ceil */
        }
    }
    if (bucket >= exact_limit) { /* sketch._bucket: EXACT_LIMIT + ceil(log(value / EXACT_LIMIT) / _LOG_GAMMA) */
        double number = PyLong_CheckExact(value) ? (double)PyLong_AsLongLong(value) : PyFloat_AS_DOUBLE(value);
        PyObject *ratio = PyFloat_FromDouble(number / (double)exact_limit); /* both exact: one rounding, as Python */
        PyObject *logarithm = ratio != NULL ? PyObject_Vectorcall(context->types[X_LOG], &ratio, 1, NULL) : NULL;
        Py_XDECREF(ratio);
        if (logarithm == NULL) {
            return -1;
        }
        double steps = PyFloat_Check(logarithm) ? PyFloat_AS_DOUBLE(logarithm) / context->log_gamma : -1.0;
        Py_DECREF(logarithm);
        if (!(steps >= 0 && steps < 1e15)) {
            return call_method(histogram, NAME(S_ADD), value, NULL, NULL, NULL); /* not reached for a finite value */
        }
        long long whole = (long long)steps;
        bucket = exact_limit + whole + ((double)whole < steps); /* math.ceil */
    }
    PyObject *counts = dict_slot(histogram, SLOT(HI_COUNTS));
    PyObject *key = counts != NULL ? (PyLong_CheckExact(value) && bucket < exact_limit ? Py_NewRef(value)
                                                                                          : PyLong_FromLongLong(bucket))
                                   : NULL;
    int failed = key == NULL || count_in(counts, key, state->one) < 0 ||
                 slot_add(histogram, SLOT(HI_N), state->one) < 0 ||
                 slot_add(histogram, SLOT(HI_TOTAL), value) < 0 || slot_raise(histogram, SLOT(HI_MAXIMUM), value) < 0;
    Py_XDECREF(counts);
    Py_XDECREF(key);
    return failed ? -1 : 0;
}

/* sketch.coarse_bin(value): 0 under 1 ms, then 8 bins per power of two (frexp without the maths library). */
static int coarse_bin_of(PyObject *value, long long *out)
{
    double number = PyFloat_Check(value) ? PyFloat_AS_DOUBLE(value) : PyLong_AsDouble(value);
    if (number == -1.0 && PyErr_Occurred()) {
        return -1;
    }
    if (number < 1) {
        *out = 0;
        return 0;
    }
    if (!isfinite(number)) {
        PyErr_SetString(number != number ? PyExc_ValueError : PyExc_OverflowError, "coarse_bin of a non-finite value");
        return -1;
    }
    uint64_t bits;
    memcpy(&bits, &number, sizeof bits);
    long long exponent = (long long)((bits >> 52) & 0x7ffU) - 1022; /* a normal number: value >= 1 */
    bits = (bits & ~(0x7ffULL << 52)) | (1022ULL << 52);
    double mantissa;
    memcpy(&mantissa, &bits, sizeof mantissa);
    *out = exponent * 8 + (long long)((mantissa - 0.5) * 2 * 8) - 7;
    return 0;
}

/* TimeBucket.add(duration, docs, keys) */
static int bucket_add(State *state, const Context *context, PyObject *bucket, PyObject *duration, PyObject *docs,
                      PyObject *keys)
{
    PyObject *bins = slot_get(bucket, SLOT(TB_BINS));
    PyObject *count = bins != NULL ? slot_get(bucket, SLOT(TB_COUNT)) : NULL;
    PyObject *maximum = count != NULL ? slot_get(bucket, SLOT(TB_MAX_MS)) : NULL;
    PyObject *index = NULL, *top = NULL, *made = NULL;
    int failed = -1;
    if (maximum == NULL) {
        goto done;
    }
    long long index_value, top_value;
    if (bins != Py_None) {
        if (!PyDict_CheckExact(bins)) {
            PyErr_SetString(PyExc_TypeError, "TimeBucket.bins is not a dict");
            goto done;
        }
        if (coarse_bin_of(duration, &index_value) < 0 || (index = PyLong_FromLongLong(index_value)) == NULL ||
            count_in(bins, index, state->one) < 0) {
            goto done;
        }
    } else {
        int counted = PyObject_IsTrue(count), differs = 0;
        if (counted < 0 || (counted && (differs = PyObject_RichCompareBool(duration, maximum, Py_NE)) < 0)) {
            goto done;
        }
        if (counted && differs) {
            if (coarse_bin_of(duration, &index_value) < 0 || coarse_bin_of(maximum, &top_value) < 0) {
                goto done;
            }
            if (index_value != top_value) {
                if ((index = PyLong_FromLongLong(index_value)) == NULL ||
                    (top = PyLong_FromLongLong(top_value)) == NULL || (made = PyDict_New()) == NULL ||
                    PyDict_SetItem(made, top, count) < 0 || PyDict_SetItem(made, index, state->one) < 0 ||
                    slot_set(bucket, SLOT(TB_BINS), made) < 0) {
                    goto done;
                }
            }
        }
    }
    if (slot_add(bucket, SLOT(TB_COUNT), state->one) < 0 || slot_add(bucket, SLOT(TB_TOTAL_MS), duration) < 0 ||
        slot_raise(bucket, SLOT(TB_MAX_MS), duration) < 0 || slot_add(bucket, SLOT(TB_DOCS_EXAMINED), docs) < 0 ||
        slot_add(bucket, SLOT(TB_KEYS_EXAMINED), keys) < 0) {
        goto done;
    }
    failed = 0;
done:
    Py_XDECREF(bins);
    Py_XDECREF(count);
    Py_XDECREF(maximum);
    Py_XDECREF(index);
    Py_XDECREF(top);
    Py_XDECREF(made);
    return failed;
}

/* Timeline.add_at(epoch_seconds, duration, docs, keys); Python's method when the timeline must coarsen. */
static int timeline_add(State *state, const Context *context, PyObject *timeline, PyObject *epoch_seconds,
                        PyObject *duration, PyObject *docs, PyObject *keys)
{
    PyObject *sixty = PyLong_FromLong(60);
    PyObject *floored = sixty != NULL ? PyNumber_FloorDivide(epoch_seconds, sixty) : NULL;
    PyObject *minute = floored != NULL ? PyNumber_Long(floored) : NULL;
    PyObject *width = minute != NULL ? slot_get(timeline, SLOT(TL_WIDTH_MINUTES)) : NULL;
    PyObject *start = NULL, *remainder = NULL, *buckets = NULL, *bucket = NULL;
    int failed = -1;
    if (width == NULL) {
        goto done;
    }
    int single = PyObject_RichCompareBool(width, state->one, Py_EQ);
    if (single < 0) {
        goto done;
    }
    if (single) {
        start = Py_NewRef(minute);
    } else if ((remainder = PyNumber_Remainder(minute, width)) == NULL ||
               (start = PyNumber_Subtract(minute, remainder)) == NULL) {
        goto done;
    }
    if ((buckets = dict_slot(timeline, SLOT(TL_BUCKETS))) == NULL) {
        goto done;
    }
    bucket = PyDict_GetItemWithError(buckets, start);
    if (bucket == NULL) {
        if (PyErr_Occurred()) {
            goto done;
        }
        if (PyDict_GET_SIZE(buckets) >= context->max_buckets) { /* a new bucket past the cap: Python coarsens */
            failed = call_method(timeline, NAME(S_ADD_AT), epoch_seconds, duration, docs, keys);
            goto done;
        }
        if ((bucket = blank_like(state, context->types[X_BLANK_TIME_BUCKET])) == NULL) {
            goto done;
        }
        if (PyDict_SetItem(buckets, start, bucket) < 0) {
            Py_CLEAR(bucket);
            goto done;
        }
    } else {
        Py_INCREF(bucket);
    }
    failed = bucket_add(state, context, bucket, duration, docs, keys);
done:
    Py_XDECREF(sixty);
    Py_XDECREF(floored);
    Py_XDECREF(minute);
    Py_XDECREF(width);
    Py_XDECREF(start);
    Py_XDECREF(remainder);
    Py_XDECREF(buckets);
    Py_XDECREF(bucket);
    return failed;
}

/* PlanOrder.add(end, plan) for an execution after the last one; Python's method for the first or an earlier one. */
static int plan_order_add(State *state, const Context *context, PyObject *order, PyObject *end, PyObject *plan)
{
    PyObject *runs = slot_get(order, SLOT(PO_RUNS));
    if (runs == NULL) {
        return -1;
    }
    PyObject *last = NULL, *last_ms = NULL, *last_plan = NULL;
    int failed = -1, later = 0;
    if (PyList_CheckExact(runs) && PyList_GET_SIZE(runs) > 0) {
        last = Py_NewRef(PyList_GET_ITEM(runs, PyList_GET_SIZE(runs) - 1));
        if ((last_ms = slot_get(last, SLOT(PR_LAST_MS))) == NULL ||
            (later = PyObject_RichCompareBool(end, last_ms, Py_GE)) < 0) {
            goto done;
        }
    }
    if (!later) {
        failed = call_method(order, NAME(S_ADD), end, plan, NULL, NULL);
        goto done;
    }
    if ((last_plan = slot_get(last, SLOT(PR_LAST_PLAN))) == NULL) {
        goto done;
    }
    int changed = PyObject_RichCompareBool(plan, last_plan, Py_NE);
    if (changed < 0 || (changed && slot_add(last, SLOT(PR_SWITCHES), state->one) < 0) ||
        slot_set(last, SLOT(PR_LAST_MS), end) < 0 || slot_set(last, SLOT(PR_LAST_PLAN), plan) < 0) {
        goto done;
    }
    failed = 0;
done:
    Py_DECREF(runs);
    Py_XDECREF(last);
    Py_XDECREF(last_ms);
    Py_XDECREF(last_plan);
    return failed;
}

/* CappedSet.add(value): members in a tuple up to small_set, then a set; Python's method for a trim or another form. */
static int capped_add(State *state, const Context *context, PyObject *capped, PyObject *value)
{
    PyObject *members = slot_get(capped, SLOT(CS_MEMBERS));
    if (members == NULL) {
        return -1;
    }
    PyObject *cutoff = NULL, *grown = NULL;
    int failed = -1;
    int known = PySequence_Contains(members, value);
    if (known != 0) {
        failed = known < 0 ? -1 : 0;
        goto done;
    }
    if ((cutoff = slot_get(capped, SLOT(CS_CUTOFF))) == NULL) {
        goto done;
    }
    if (cutoff != Py_None) {
        int above = PyObject_RichCompareBool(value, cutoff, Py_GT);
        if (above != 0) {
            failed = above < 0 ? -1 : 0;
            goto done;
        }
    }
    Py_ssize_t size;
    if (PyTuple_CheckExact(members)) {
        size = PyTuple_GET_SIZE(members);
        if (size < context->small_set) {
            if ((grown = PyTuple_New(size + 1)) == NULL) {
                goto done;
            }
            for (Py_ssize_t i = 0; i < size; i++) {
                PyTuple_SET_ITEM(grown, i, Py_NewRef(PyTuple_GET_ITEM(members, i)));
            }
            PyTuple_SET_ITEM(grown, size, Py_NewRef(value));
        } else if ((grown = PySet_New(members)) == NULL || PySet_Add(grown, value) < 0) {
            goto done;
        }
        if (slot_set(capped, SLOT(CS_MEMBERS), grown) < 0) {
            goto done;
        }
        size = PyObject_Size(grown);
    } else if (PySet_CheckExact(members)) {
        if (PySet_Add(members, value) < 0) {
            goto done;
        }
        size = PySet_GET_SIZE(members);
    } else {
        failed = call_method(capped, NAME(S_ADD), value, NULL, NULL, NULL);
        goto done;
    }
    failed = size > 2 * context->set_cap ? call_method(capped, NAME(S_TRIM), NULL, NULL, NULL, NULL) : 0;
done:
    Py_DECREF(members);
    Py_XDECREF(cutoff);
    Py_XDECREF(grown);
    return failed;
}

/* literals.first_reply_cap(shape_op, command) for a find, or an aggregation with a $limit stage, whose limit is an int
 * and whose batch size is absent or an int; Python's function for the rest. A new reference: an int, or None. */
static PyObject *first_reply_cap(State *state, const Context *context, PyObject *shape_op, PyObject *command)
{
    PyObject *limit = NULL, *batch = NULL;
    if (PyDict_CheckExact(command) && op_is(shape_op, "find")) {
        limit = PyDict_GetItemWithError(command, NAME(LIMIT));
        batch = limit != NULL ? PyDict_GetItemWithError(command, NAME(S_BATCH_SIZE)) : NULL;
    } else if (PyDict_CheckExact(command) && op_is(shape_op, "aggregate")) {
        PyObject *pipeline = PyDict_GetItemWithError(command, NAME(PIPELINE));
        for (Py_ssize_t i = 0; pipeline != NULL && PyList_CheckExact(pipeline) && i < PyList_GET_SIZE(pipeline); i++) {
            PyObject *stage = PyList_GET_ITEM(pipeline, i);
            if (PyDict_CheckExact(stage) && (limit = PyDict_GetItemWithError(stage, NAME(LIMIT_STAGE))) != NULL) {
                break;
            }
            if (PyErr_Occurred()) {
                return NULL;
            }
        }
        PyObject *cursor = limit != NULL ? PyDict_GetItemWithError(command, NAME(S_CURSOR)) : NULL;
        if (cursor != NULL && !PyDict_CheckExact(cursor)) {
            limit = NULL; /* a cursor that is not a dict: Python */
        } else if (cursor != NULL) {
            batch = PyDict_GetItemWithError(cursor, NAME(S_BATCH_SIZE));
        }
    }
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (limit != NULL && PyLong_CheckExact(limit) && (batch == NULL || batch == Py_None || PyLong_CheckExact(batch))) {
        int overflow, batch_overflow = 0;
        long long number = PyLong_AsLongLongAndOverflow(limit, &overflow);
        long long size = batch != NULL && batch != Py_None ? PyLong_AsLongLongAndOverflow(batch, &batch_overflow) : -1;
        if (!overflow && !batch_overflow && number > -(1LL << 62) && number < (1LL << 62)) {
            long long first_batch = context->first_batch, cap;
            if (number > 0 && number <= first_batch) {
                cap = number;
            } else {
                cap = number < 0 ? -number : number;
                cap = cap < first_batch ? cap : first_batch;
            }
            if (size >= 0 && size < cap) {
                cap = size;
            }
            return cap ? PyLong_FromLongLong(cap) : Py_NewRef(Py_None);
        }
    }
    PyObject *args[2] = {shape_op, command};
    return PyObject_Vectorcall(context->types[X_FIRST_REPLY_CAP], args, 2, NULL);
}

/* ShapeStats._offer_representative(event). The kept LatestExecution is refilled in place when the statistics hold
 * the only reference to it (nothing else can tell it from a new one: it has no __dict__ and no weak references). */
static int offer_representative(State *state, const Context *context, PyObject *stats, const Execution *execution)
{
    (void)state;
    if (execution->truncated || execution->unparsed) {
        return 0;
    }
    PyObject *command = execution->getmore ? execution->originating : execution->command;
    if (command == NULL) {
        return 0;
    }
    PyObject *values[4] = {execution->ns, execution->op, execution->ts ? execution->ts : Py_None, command};
    PyObject *held = slot_peek(stats, SLOT(ST_LATEST));
    if (held != NULL && Py_REFCNT(held) == 1 && Py_TYPE(held) == SLOT(LE_NS)->type &&
        SLOT(LE_NS)->type == (PyTypeObject *)context->types[X_LATEST_EXECUTION]) {
        const Slot *slots[4] = {SLOT(LE_NS), SLOT(LE_OP), SLOT(LE_TS), SLOT(LE_KEPT_COMMAND)};
        for (int i = 0; i < 4; i++) {
            if (slot_set(held, slots[i], values[i]) < 0) {
                return -1;
            }
        }
        return 0;
    }
    PyObject *latest = PyObject_Vectorcall(context->types[X_LATEST_EXECUTION], values, 4, NULL);
    int failed = latest == NULL || slot_set(stats, SLOT(ST_LATEST), latest) < 0;
    Py_XDECREF(latest);
    return failed ? -1 : 0;
}

/* A slot that starts as a shared empty object (shared): replaced by a fresh type() first. New reference. */
static PyObject *own_slot(PyObject *stats, const Slot *slot, PyObject *shared, PyObject *type)
{
    PyObject *value = slot_get(stats, slot);
    if (value != shared) {
        return value;
    }
    Py_DECREF(value);
    if ((value = PyObject_CallNoArgs(type)) == NULL || slot_set(stats, slot, value) < 0) {
        Py_XDECREF(value);
        return NULL;
    }
    return value;
}

/* digest.literal_fingerprint(command): a CRC-32 of the pipeline as orjson writes it, None without one (or for one
 * orjson cannot write); Python's function where orjson.dumps gives something else than bytes. New reference. */
static PyObject *literal_fingerprint(State *state, const Context *context, PyObject *command)
{
    PyObject *pipeline =
        command != NULL && PyDict_CheckExact(command) ? PyDict_GetItemWithError(command, NAME(PIPELINE)) : NULL;
    if (pipeline == NULL || !PyList_CheckExact(pipeline)) {
        return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    }
    Py_INCREF(pipeline);
    PyObject *text = PyObject_Vectorcall(context->types[X_DUMPS], &pipeline, 1, NULL);
    Py_DECREF(pipeline);
    if (text == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) { /* orjson.JSONEncodeError is a TypeError */
            return NULL;
        }
        PyErr_Clear();
        return Py_NewRef(Py_None);
    }
    if (!PyBytes_CheckExact(text)) {
        Py_DECREF(text);
        return PyObject_Vectorcall(context->types[X_LITERAL_FINGERPRINT], &command, 1, NULL);
    }
    uint32_t crc = crc32_of(PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text));
    Py_DECREF(text);
    return PyLong_FromUnsignedLong(crc);
}

/* LiteralValues.add(fingerprint): Python's _trim past twice MAX_KEPT. */
static int literal_values_add(State *state, const Context *context, PyObject *values, PyObject *fingerprint)
{
    if (slot_add(values, SLOT(LV_RUNS), state->one) < 0) {
        return -1;
    }
    PyObject *cutoff = slot_get(values, SLOT(LV_CUTOFF));
    int above = cutoff == NULL ? -1 : cutoff == Py_None ? 0 : PyObject_RichCompareBool(fingerprint, cutoff, Py_GT);
    Py_XDECREF(cutoff);
    if (above != 0) {
        return above < 0 ? -1 : 0;
    }
    PyObject *counts = dict_slot(values, SLOT(LV_COUNTS));
    if (counts == NULL || count_in(counts, fingerprint, state->one) < 0) {
        Py_XDECREF(counts);
        return -1;
    }
    Py_ssize_t size = PyDict_GET_SIZE(counts);
    Py_DECREF(counts);
    return size > 2 * context->max_kept ? call_method(values, NAME(S_TRIM), NULL, NULL, NULL, NULL) : 0;
}

/* An aggregation's run (RunLog.add) and the fingerprint of its literal values (LiteralValues.add). */
static int add_run(State *state, const Context *context, PyObject *stats, PyObject *end, const Execution *execution)
{
    PyObject *log = own_slot(stats, SLOT(ST_RUNS), context->types[X_NO_RUNS], context->types[X_RUN_LOG]);
    PyObject *runs = log != NULL ? slot_get(log, SLOT(RL_RUNS)) : NULL;
    PyObject *start = runs != NULL ? PyNumber_Subtract(end, execution->duration) : NULL;
    PyObject *run = start != NULL ? PyTuple_Pack(2, start, execution->duration) : NULL;
    PyObject *fingerprint = NULL, *values = NULL;
    int failed = -1;
    if (run == NULL) {
        goto done;
    }
    if (!PyList_CheckExact(runs)) {
        if (call_method(log, NAME(S_ADD), start, execution->duration, NULL, NULL) < 0) {
            goto done;
        }
    } else if (PyList_Append(runs, run) < 0 ||
               (PyList_GET_SIZE(runs) > 2 * context->max_runs &&
                call_method(log, NAME(S_TRIM), NULL, NULL, NULL, NULL) < 0)) {
        goto done;
    }
    if ((fingerprint = literal_fingerprint(state, context, execution->command)) == NULL) {
        goto done;
    }
    if (fingerprint != Py_None) {
        values = own_slot(stats, SLOT(ST_LITERAL_VALUES), context->types[X_NO_LITERAL_VALUES],
                          context->types[X_LITERAL_VALUES]);
        if (values == NULL || literal_values_add(state, context, values, fingerprint) < 0) {
            goto done;
        }
    }
    failed = 0;
done:
    Py_XDECREF(log);
    Py_XDECREF(runs);
    Py_XDECREF(start);
    Py_XDECREF(run);
    Py_XDECREF(fingerprint);
    Py_XDECREF(values);
    return failed;
}

/* object.slot += 1 where flag is set */
static int count_if(PyObject *object, const Slot *slot, int flag, PyObject *one)
{
    return flag ? slot_add(object, slot, one) : 0;
}

/* The statistics of one execution, in ShapeStats.add's order: everything is read and nothing can decline any more
 * (the pieces the C code leaves to Python are called here, each one whole). */
static int add_read_execution(State *state, const Context *context, PyObject *stats, PyObject *shape,
                              const Execution *execution)
{
    PyObject *one = PyLong_FromLong(1), *histogram = NULL, *plans = NULL, *costs = NULL, *cost = NULL;
    PyObject *shape_op = NULL, *options = NULL, *cap = NULL, *literals = NULL, *plan = NULL, *breakdown = NULL;
    PyObject *apps = NULL, *app = NULL, *count = NULL, *connections = NULL, *hashes = NULL, *set = NULL;
    PyObject *first = NULL, *last = NULL, *latest = NULL, *latest_ts = NULL, *epoch = NULL, *timeline = NULL;
    PyObject *end = NULL, *order = NULL, *lookup = NULL, *reason = NULL, *skip_max = NULL, *longest = NULL;
    PyObject *duration = execution->duration, *keys = execution->keys, *docs = execution->docs;
    PyObject *returned = execution->returned;
    int failed = -1, truth;
    if (one == NULL || slot_add(stats, SLOT(ST_COUNT), one) < 0) {
        goto done;
    }
    if (execution->histogram && ((histogram = slot_get(stats, SLOT(ST_DURATION))) == NULL ||
                                 histogram_add_value(state, context, histogram, duration) < 0)) {
        goto done;
    }
    if (keys != NULL && (slot_add(stats, SLOT(ST_KEYS_EXAMINED), keys) < 0 ||
                         slot_add(stats, SLOT(ST_KEYS_MEASURED), one) < 0)) {
        goto done;
    }
    if (docs != NULL && (slot_add(stats, SLOT(ST_DOCS_EXAMINED), docs) < 0 ||
                         slot_add(stats, SLOT(ST_DOCS_MEASURED), one) < 0)) {
        goto done;
    }
    if ((shape_op = slot_get(shape, SLOT(SH_OP))) == NULL) {
        goto done;
    }
    if (returned != NULL) {
        if (slot_add(stats, SLOT(ST_NRETURNED), returned) < 0 ||
            ((keys != NULL || docs != NULL) && slot_add(stats, SLOT(ST_MEASURED), one) < 0) ||
            (options = slot_get(shape, SLOT(SH_OPTIONS))) == NULL ||
            (truth = PySequence_Contains(options, NAME(LIMIT))) < 0) {
            goto done;
        }
        if (truth && !execution->getmore) { /* ShapeStats._count_under_limit */
            if ((cap = first_reply_cap(state, context, shape_op, execution->command ? execution->command : Py_None)) ==
                NULL) {
                goto done;
            }
            if (cap != Py_None) {
                int under = PyObject_RichCompareBool(returned, cap, Py_LT);
                if (under < 0 || (under && (slot_add(stats, SLOT(ST_UNDER_LIMIT), one) < 0 ||
                                            slot_add(stats, SLOT(ST_UNDER_LIMIT_RETURNED), returned) < 0))) {
                    goto done;
                }
            }
        }
    }
    if (execution->plan != NULL && PyUnicode_GET_LENGTH(execution->plan) > 0) { /* a str (read_execution) */
        plan = interned(execution->plan);
        if ((plans = dict_slot(stats, SLOT(ST_PLANS))) == NULL || count_in(plans, plan, one) < 0 ||
            (costs = dict_slot(stats, SLOT(ST_PLAN_COSTS))) == NULL ||
            (cost = item_or_new(state, costs, plan, context->types[X_BLANK_PLAN_COST])) == NULL ||
            slot_add(cost, SLOT(PC_COUNT), one) < 0 || slot_add(cost, SLOT(PC_TOTAL_MS), duration) < 0) {
            goto done;
        }
        PyObject *parts[3] = {keys, docs, returned};
        const Slot *cost_slots[3] = {SLOT(PC_KEYS_EXAMINED), SLOT(PC_DOCS_EXAMINED), SLOT(PC_NRETURNED)};
        for (int i = 0; i < 3; i++) {
            if (parts[i] != NULL && PyObject_IsTrue(parts[i]) && /* ints (read_execution) */
                slot_add(cost, cost_slots[i], parts[i]) < 0) {
                goto done;
            }
        }
    }
    if (execution->getmore) {
        if (slot_add(stats, SLOT(ST_GETMORES), one) < 0) {
            goto done;
        }
    } else {
        PyObject *command = execution->command ? execution->command : Py_None;
        if ((literals = slot_get(stats, SLOT(ST_LITERALS))) == NULL) {
            goto done;
        }
        int status = literals_into(state, context, literals, shape_op, command, context->types[X_BLANK_FIELD_LITERALS],
                                   context->types[X_WIDTHS], context->in_values, context->distinct_cap);
        if (status == FAILED ||
            (status == FALLBACK && call_method(literals, NAME(S_OBSERVE), shape_op, command, NULL, NULL) < 0)) {
            goto done;
        }
    }
    if (count_if(stats, SLOT(ST_BLOCKING_SORTS), execution->sort, one) < 0 ||
        count_if(stats, SLOT(ST_USED_DISK), execution->disk, one) < 0 ||
        count_if(stats, SLOT(ST_ERRORS), execution->error != NULL, one) < 0 ||
        count_if(stats, SLOT(ST_TRUNCATED), execution->truncated, one) < 0) {
        goto done;
    }
    if (execution->internal != NULL) {
        if (slot_add(stats, SLOT(ST_INTERNAL), one) < 0 ||
            (reason = slot_get(stats, SLOT(ST_INTERNAL_REASON))) == NULL) {
            goto done;
        }
        int smaller = reason == Py_None ? 1 : PyObject_RichCompareBool(execution->internal, reason, Py_LT);
        if (smaller < 0 || (smaller && slot_set(stats, SLOT(ST_INTERNAL_REASON), execution->internal) < 0)) {
            goto done;
        }
    }
    if ((longest = slot_get(stats, SLOT(ST_MAX_IN_LENGTH))) == NULL ||
        (truth = PyObject_RichCompareBool(execution->in_length, longest, Py_GT)) < 0 ||
        (truth && slot_set(stats, SLOT(ST_MAX_IN_LENGTH), execution->in_length) < 0)) {
        goto done;
    }
    if (PyObject_IsTrue(execution->skip)) { /* an int (read_execution) */
        if (slot_add(stats, SLOT(ST_SKIPPED_EXECUTIONS), one) < 0 ||
            slot_add(stats, SLOT(ST_SKIP_TOTAL), execution->skip) < 0 ||
            (skip_max = slot_get(stats, SLOT(ST_SKIP_MAX))) == NULL ||
            (truth = PyObject_RichCompareBool(execution->skip, skip_max, Py_GT)) < 0 ||
            (truth && slot_set(stats, SLOT(ST_SKIP_MAX), execution->skip) < 0)) {
            goto done;
        }
    }
    if (execution->yields != NULL && (slot_add(stats, SLOT(ST_NUM_YIELDS), execution->yields) < 0 ||
                                      slot_add(stats, SLOT(ST_YIELDS_MEASURED), one) < 0)) {
        goto done;
    }
    if (execution->response != NULL && (slot_add(stats, SLOT(ST_RESPONSE_BYTES), execution->response) < 0 ||
                                        slot_add(stats, SLOT(ST_RESPONSES_MEASURED), one) < 0)) {
        goto done;
    }
    if (count_if(stats, SLOT(ST_REPLANNED), execution->replanned, one) < 0) {
        goto done;
    }
    if (execution->timing != NULL) {
        breakdown = own_slot(stats, SLOT(ST_TIMING), Py_None, context->types[X_TIME_BREAKDOWN]);
        if (breakdown == NULL) {
            goto done;
        }
        int status = timing_into(state, context, breakdown, execution->timing, duration, context->types[X_WHOLE],
                                 context->types[X_SKETCHED], context->types[X_HISTOGRAM], context->exact_limit);
        if (status == FAILED ||
            (status == FALLBACK && call_method(breakdown, NAME(S_ADD), execution->timing, duration, NULL, NULL) < 0)) {
            goto done;
        }
    }
    if (execution->app != NULL && PyUnicode_GET_LENGTH(execution->app) > 0) { /* a str (read_execution) */
        if ((apps = dict_slot(stats, SLOT(ST_APPS))) == NULL) {
            goto done;
        }
        PyObject *held = PyDict_GetItemWithError(apps, execution->app);
        if (held == NULL && PyErr_Occurred()) {
            goto done;
        }
        app = held == NULL ? interned(execution->app) : Py_NewRef(execution->app);
        count = held == NULL ? Py_NewRef(one) : PyNumber_Add(held, one);
        if (count == NULL || PyDict_SetItem(apps, app, count) < 0) {
            goto done;
        }
        if (returned != NULL && PyObject_IsTrue(returned) && execution->written) {
            PyObject *bulk = PyObject_Vectorcall(context->types[X_IS_BULK_TOOL], &app, 1, NULL);
            truth = bulk != NULL ? PyObject_IsTrue(bulk) : -1;
            Py_XDECREF(bulk);
            if (truth < 0 || (truth && slot_add(stats, SLOT(ST_BULK_WRITTEN), returned) < 0)) {
                goto done;
            }
        }
    }
    if (execution->connection != NULL && PyUnicode_GET_LENGTH(execution->connection) > 0) {
        PyObject *connection = NULL;
        if ((connections = slot_get(stats, SLOT(ST_CONNECTIONS))) == NULL ||
            (set = slot_get(connections, SLOT(CS_MEMBERS))) == NULL ||
            (truth = PySequence_Contains(set, execution->connection)) < 0) {
            goto done;
        }
        if (!truth) {
            connection = interned(execution->connection);
            truth = capped_add(state, context, connections, connection);
            Py_DECREF(connection);
            if (truth < 0) {
                goto done;
            }
        }
    }
    static const int report_names[4] = {N_S_QUERY_HASH_REPORT, N_S_PLAN_CACHE_SHAPE_HASH_REPORT,
                                        N_S_QUERY_SHAPE_HASH_REPORT, N_S_PLAN_CACHE_KEY_REPORT};
    for (int i = 0; i < 4; i++) {
        PyObject *value = execution->hashes[i];
        if (value == NULL || PyUnicode_GET_LENGTH(value) == 0) {
            continue;
        }
        if (hashes == NULL && (hashes = dict_slot(stats, SLOT(ST_SERVER_HASHES))) == NULL) {
            goto done;
        }
        PyObject *capped =
            item_or_new(state, hashes, state->names[report_names[i]], context->types[X_BLANK_CAPPED_SET]);
        truth = capped != NULL ? capped_add(state, context, capped, value) : -1;
        Py_XDECREF(capped);
        if (truth < 0) {
            goto done;
        }
    }
    PyObject *ts = execution->ts;
    if (ts != NULL) {
        if ((first = slot_get(stats, SLOT(ST_FIRST_SEEN))) == NULL ||
            (last = slot_get(stats, SLOT(ST_LAST_SEEN))) == NULL) {
            goto done;
        }
        if (first == Py_None || last == Py_None) {
            int earlier = first == Py_None ? 1 : PyObject_RichCompareBool(ts, first, Py_LT);
            if (earlier < 0 || (earlier && slot_set(stats, SLOT(ST_FIRST_SEEN), ts) < 0)) {
                goto done;
            }
            int later = last == Py_None ? 1 : PyObject_RichCompareBool(ts, last, Py_GE);
            if (later < 0 || (later && slot_set(stats, SLOT(ST_LAST_SEEN), ts) < 0)) {
                goto done;
            }
        } else {
            int later = PyObject_RichCompareBool(ts, last, Py_GE);
            if (later < 0 || (later && slot_set(stats, SLOT(ST_LAST_SEEN), ts) < 0)) {
                goto done;
            }
            if (!later) {
                int earlier = PyObject_RichCompareBool(ts, first, Py_LT);
                if (earlier < 0 || (earlier && slot_set(stats, SLOT(ST_FIRST_SEEN), ts) < 0)) {
                    goto done;
                }
            }
        }
        if ((latest = slot_get(stats, SLOT(ST_LATEST))) == NULL) {
            goto done;
        }
        truth = 1;
        if (latest != Py_None) {
            if ((latest_ts = slot_get(latest, SLOT(LE_TS))) == NULL) {
                goto done;
            }
            truth = latest_ts == Py_None ? 1 : PyObject_RichCompareBool(ts, latest_ts, Py_GE);
        }
        if (truth < 0 || (truth && offer_representative(state, context, stats, execution) < 0)) {
            goto done;
        }
        PyObject *zero = state->zero;
        PyObject *docs_or_zero = docs != NULL && PyObject_IsTrue(docs) ? docs : zero;
        PyObject *keys_or_zero = keys != NULL && PyObject_IsTrue(keys) ? keys : zero;
        if ((epoch = PyObject_CallMethodNoArgs(ts, NAME(S_TIMESTAMP))) == NULL ||
            (timeline = slot_get(stats, SLOT(ST_TIMELINE))) == NULL ||
            timeline_add(state, context, timeline, epoch, duration, docs_or_zero, keys_or_zero) < 0) {
            goto done;
        }
        if (!execution->getmore) {
            end = PyFloat_CheckExact(epoch) ? PyFloat_FromDouble(PyFloat_AS_DOUBLE(epoch) * 1000.0) : NULL;
            if (end == NULL) {
                if (!PyErr_Occurred()) {
                    PyErr_SetString(PyExc_TypeError, "datetime.timestamp() did not return a float");
                }
                goto done;
            }
            if (plan != NULL && ((order = slot_get(stats, SLOT(ST_PLAN_ORDER))) == NULL ||
                                 plan_order_add(state, context, order, end, plan) < 0)) {
                goto done;
            }
            if (op_is(shape_op, "aggregate")) {
                if (add_run(state, context, stats, end, execution) < 0) {
                    goto done;
                }
            } else {
                if ((lookup = slot_get(stats, SLOT(ST_POINT_LOOKUP))) == NULL) {
                    goto done;
                }
                if (lookup != Py_False) {
                    PyObject *caller = execution->connection != NULL && PyUnicode_GET_LENGTH(execution->connection)
                                           ? execution->connection
                                           : (execution->remote ? execution->remote : Py_None);
                    if (call_method(stats, NAME(S_RECORD_LOOKUP), end, duration, caller,
                                    app != NULL ? app : (execution->app ? execution->app : Py_None)) < 0) {
                        goto done;
                    }
                }
            }
        }
    } else {
        if ((latest = slot_get(stats, SLOT(ST_LATEST))) == NULL ||
            (latest == Py_None && offer_representative(state, context, stats, execution) < 0)) {
            goto done;
        }
    }
    failed = 0;
done:
    Py_XDECREF(one);
    Py_XDECREF(histogram);
    Py_XDECREF(plans);
    Py_XDECREF(costs);
    Py_XDECREF(cost);
    Py_XDECREF(shape_op);
    Py_XDECREF(options);
    Py_XDECREF(cap);
    Py_XDECREF(literals);
    Py_XDECREF(plan);
    Py_XDECREF(breakdown);
    Py_XDECREF(apps);
    Py_XDECREF(app);
    Py_XDECREF(count);
    Py_XDECREF(connections);
    Py_XDECREF(hashes);
    Py_XDECREF(set);
    Py_XDECREF(first);
    Py_XDECREF(last);
    Py_XDECREF(latest);
    Py_XDECREF(latest_ts);
    Py_XDECREF(epoch);
    Py_XDECREF(timeline);
    Py_XDECREF(end);
    Py_XDECREF(order);
    Py_XDECREF(lookup);
    Py_XDECREF(reason);
    Py_XDECREF(skip_max);
    Py_XDECREF(longest);
    return failed;
}

static int context_number(PyObject *const *types, int index, long long *out)
{
    *out = PyLong_AsLongLong(types[index]);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

PyDoc_STRVAR(add_execution_doc,
"add_execution(stats, event, observation, context, /)\n--\n\n"
"digest.ShapeStats.add(event, observation) on stats, for the usual execution (context: digest.execution_context()).\n"
"True when added; False, with nothing changed, where Python must add it: an event or statistics of another type, a\n"
"field of a type the parsers do not produce, a duration that is not an int within 2**53 or a finite float.");

static PyObject *add_execution(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    State *state = module_state(module);
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "add_execution() takes exactly 4 arguments");
        return NULL;
    }
    PyObject *stats = args[0], *event = args[1], *observation = args[2], *tuple = args[3];
    if (!PyTuple_CheckExact(tuple) || PyTuple_GET_SIZE(tuple) != CONTEXT_SIZE) {
        PyErr_SetString(PyExc_TypeError, "add_execution() needs digest.execution_context()");
        return NULL;
    }
    Context context = {.types = &PyTuple_GET_ITEM(tuple, 0)};
    long long in_values;
    if (context_number(context.types, X_EXACT_LIMIT, &context.exact_limit) < 0 ||
        context_number(context.types, X_FIRST_BATCH, &context.first_batch) < 0 ||
        context_number(context.types, X_SMALL_SET, &context.small_set) < 0 ||
        context_number(context.types, X_SET_CAP, &context.set_cap) < 0 ||
        context_number(context.types, X_MAX_BUCKETS, &context.max_buckets) < 0 ||
        context_number(context.types, X_MAX_RUNS, &context.max_runs) < 0 ||
        context_number(context.types, X_DISTINCT_CAP, &context.distinct_cap) < 0 ||
        context_number(context.types, X_IN_VALUES, &in_values) < 0 ||
        context_number(context.types, X_MAX_KEPT, &context.max_kept) < 0) {
        return NULL;
    }
    if ((context.log_gamma = PyFloat_AsDouble(context.types[X_LOG_GAMMA])) == -1.0 && PyErr_Occurred()) {
        return NULL;
    }
    context.in_values = (Py_ssize_t)in_values;
    const SlotTable *table = PyCapsule_GetPointer(context.types[X_SLOTS], SLOTS_CAPSULE);
    if (table == NULL) {
        return NULL; /* not a slot table of execution_slots(): a TypeError or ValueError says so */
    }
    context.slots = table->slots;
    if (Py_TYPE(stats) != (PyTypeObject *)context.types[X_SHAPE_STATS]) {
        Py_RETURN_FALSE;
    }
    Execution execution;
    memset(&execution, 0, sizeof execution);
    PyObject *shape = NULL, *result = NULL;
    int status = read_execution(state, &context, event, observation, &execution);
    if (status == DONE) {
        shape = slot_get(stats, &context.slots[SL_ST_SHAPE]);
        if (shape == NULL) {
            status = FAILED;
        }
    }
    if (status == DONE) {
        result = add_read_execution(state, &context, stats, shape, &execution) < 0 ? NULL : Py_NewRef(Py_True);
    } else {
        result = status_result(status);
    }
    Py_XDECREF(shape);
    execution_clear(&execution);
    return result;
}

static PyMethodDef speedups_methods[] = {
    {"scan_json_block", (PyCFunction)(void (*)(void))scan_json_block, METH_FASTCALL, scan_json_block_doc},
    {"scan_text_block", (PyCFunction)(void (*)(void))scan_text_block, METH_FASTCALL, scan_text_block_doc},
    {"event_fields", event_fields, METH_O, event_fields_doc},
    {"text_slow_line", (PyCFunction)(void (*)(void))text_slow_line, METH_FASTCALL, text_slow_line_doc},
    {"text_event", (PyCFunction)(void (*)(void))text_event, METH_FASTCALL, text_event_doc},
    {"shape_command", (PyCFunction)(void (*)(void))shape_command, METH_FASTCALL, shape_command_doc},
    {"add_timing", (PyCFunction)(void (*)(void))add_timing, METH_FASTCALL, add_timing_doc},
    {"observe_literals", (PyCFunction)(void (*)(void))observe_literals, METH_FASTCALL, observe_literals_doc},
    {"add_execution", (PyCFunction)(void (*)(void))add_execution, METH_FASTCALL, add_execution_doc},
    {"execution_slots", execution_slots, METH_O, execution_slots_doc},
    {"tables", tables, METH_NOARGS, tables_doc},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot speedups_slots[] = {
    {Py_mod_exec, speedups_exec},
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
    .m_size = sizeof(State),
    .m_methods = speedups_methods,
    .m_slots = speedups_slots,
    .m_traverse = state_traverse,
    .m_clear = state_clear,
    .m_free = state_free,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    return PyModuleDef_Init(&speedups_module);
}
