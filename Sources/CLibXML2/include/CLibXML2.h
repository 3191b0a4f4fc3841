#ifndef ROLO_CLIBXML2_H
#define ROLO_CLIBXML2_H
/* Public header deliberately does not include libxml2 (its ICU headers clash with Foundation).
 * libxml2 is driven by SAX2 callbacks in rolo_xml.c, which record a flat list of events whose
 * strings live in one byte arena; Swift turns the events into an XMLElement tree. */
#include <stddef.h>
#include <stdint.h>

/// Initialises libxml2 once per process (idempotent, thread-safe).
int rolo_xml_init(void);

typedef enum {
    ROLO_XML_START = 1,     /* element start: ns, name */
    ROLO_XML_ATTRIBUTE = 2, /* attribute of the preceding start: ns, name, value */
    ROLO_XML_END = 3,       /* element end */
    ROLO_XML_TEXT = 4       /* character data or CDATA: value */
} rolo_xml_event_kind;

/* A string stored in the arena: offset and length in bytes (UTF-8). */
typedef struct {
    uint32_t offset;
    uint32_t length;
} rolo_xml_span;

typedef struct {
    int32_t kind;
    int32_t line;
    rolo_xml_span ns;
    rolo_xml_span name;
    rolo_xml_span value;
} rolo_xml_event;

typedef enum {
    ROLO_XML_OK = 0,
    ROLO_XML_MALFORMED = 1,
    ROLO_XML_DOCTYPE = 2,
    ROLO_XML_TOO_DEEP = 3,
    ROLO_XML_TOO_MANY_ELEMENTS = 4,
    ROLO_XML_OUT_OF_MEMORY = 5,
    ROLO_XML_TOO_LARGE = 6
} rolo_xml_status;

typedef struct {
    rolo_xml_event *events;
    size_t count;
    size_t capacity;
    uint8_t *arena;
    size_t arena_length;
    size_t arena_capacity;
    int32_t status;
    int32_t error_line;
    char error_message[256];
} rolo_xml_result;

/* Parses `length` bytes into `result` (which the caller zero-initialises and later releases
 * with rolo_xml_result_free). Refuses DOCTYPE, never expands entities nor touches the network.
 * Returns result->status. */
int rolo_xml_parse(const uint8_t *bytes, size_t length, int max_depth, int max_elements,
                   rolo_xml_result *result);

void rolo_xml_result_free(rolo_xml_result *result);

#endif
