#include "CLibXML2.h"
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t rolo_xml_once = PTHREAD_ONCE_INIT;
static void rolo_xml_init_once(void) { xmlInitParser(); }
int rolo_xml_init(void) { pthread_once(&rolo_xml_once, rolo_xml_init_once); return 0; }

/* Namespace URIs come from the parser's dictionary, so equal URIs share a pointer:
 * remember where the last few were stored to keep the arena (and Swift's strings) small. */
#define ROLO_NS_CACHE 8

typedef struct {
    rolo_xml_result *result;
    xmlParserCtxtPtr ctxt;
    int depth;
    int elements;
    int max_depth;
    int max_elements;
    const xmlChar *ns_keys[ROLO_NS_CACHE];
    rolo_xml_span ns_spans[ROLO_NS_CACHE];
    int ns_next;
    int first_error_line;
    char first_error[256];
} rolo_state;

static void rolo_fail(rolo_state *state, int status, const char *message) {
    if (state->result->status != ROLO_XML_OK) return;
    state->result->status = status;
    state->result->error_line = xmlSAX2GetLineNumber(state->ctxt);
    snprintf(state->result->error_message, sizeof state->result->error_message, "%s", message);
    xmlStopParser(state->ctxt);
}

static int rolo_append(rolo_state *state, const xmlChar *bytes, size_t length, rolo_xml_span *span) {
    rolo_xml_result *r = state->result;
    if (r->arena_length + length > UINT32_MAX) { rolo_fail(state, ROLO_XML_TOO_LARGE, "document too large"); return 0; }
    if (r->arena_length + length > r->arena_capacity) {
        size_t capacity = r->arena_capacity ? r->arena_capacity * 2 : 4096;
        while (capacity < r->arena_length + length) capacity *= 2;
        uint8_t *grown = realloc(r->arena, capacity);
        if (!grown) { rolo_fail(state, ROLO_XML_OUT_OF_MEMORY, "out of memory"); return 0; }
        r->arena = grown; r->arena_capacity = capacity;
    }
    if (length) memcpy(r->arena + r->arena_length, bytes, length);
    span->offset = (uint32_t)r->arena_length;
    span->length = (uint32_t)length;
    r->arena_length += length;
    return 1;
}

static int rolo_append_string(rolo_state *state, const xmlChar *s, rolo_xml_span *span) {
    return rolo_append(state, s, s ? strlen((const char *)s) : 0, span);
}

/* Without entity substitution libxml2 hands attribute values over with every `&` (from
 * `&amp;` or `&#38;`) written as `&#38;`; no other reference can remain since no DTD is
 * accepted. Decode those back to `&`. */
static int rolo_append_attribute_value(rolo_state *state, const xmlChar *start, const xmlChar *end,
                                       rolo_xml_span *span) {
    const xmlChar *amp = memchr(start, '&', (size_t)(end - start));
    if (!amp) return rolo_append(state, start, (size_t)(end - start), span);
    if (!rolo_append(state, start, (size_t)(amp - start), span)) return 0;
    const xmlChar *p = amp;
    while (p < end) {
        rolo_xml_span piece;
        if (*p == '&' && end - p >= 5 && memcmp(p, "&#38;", 5) == 0) {
            if (!rolo_append(state, (const xmlChar *)"&", 1, &piece)) return 0;
            p += 5;
        } else {
            if (!rolo_append(state, p, 1, &piece)) return 0;
            p += 1;
        }
        span->length += 1;
    }
    return 1;
}

static int rolo_append_namespace(rolo_state *state, const xmlChar *uri, rolo_xml_span *span) {
    if (!uri) { span->offset = 0; span->length = 0; return 1; }
    for (int i = 0; i < ROLO_NS_CACHE; i++) {
        if (state->ns_keys[i] == uri) { *span = state->ns_spans[i]; return 1; }
    }
    if (!rolo_append_string(state, uri, span)) return 0;
    state->ns_keys[state->ns_next] = uri;
    state->ns_spans[state->ns_next] = *span;
    state->ns_next = (state->ns_next + 1) % ROLO_NS_CACHE;
    return 1;
}

static rolo_xml_event *rolo_push(rolo_state *state, int kind) {
    rolo_xml_result *r = state->result;
    if (r->count == r->capacity) {
        size_t capacity = r->capacity ? r->capacity * 2 : 64;
        rolo_xml_event *grown = realloc(r->events, capacity * sizeof *grown);
        if (!grown) { rolo_fail(state, ROLO_XML_OUT_OF_MEMORY, "out of memory"); return NULL; }
        r->events = grown; r->capacity = capacity;
    }
    rolo_xml_event *event = &r->events[r->count++];
    memset(event, 0, sizeof *event);
    event->kind = kind;
    event->line = xmlSAX2GetLineNumber(state->ctxt);
    return event;
}

static void rolo_start(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri,
                       int nb_namespaces, const xmlChar **namespaces, int nb_attributes,
                       int nb_defaulted, const xmlChar **attributes) {
    (void)prefix; (void)nb_namespaces; (void)namespaces; (void)nb_defaulted;
    rolo_state *state = ctx;
    if (state->result->status != ROLO_XML_OK) return;
    if (++state->depth > state->max_depth) { rolo_fail(state, ROLO_XML_TOO_DEEP, "elements nested too deeply"); return; }
    if (++state->elements > state->max_elements) { rolo_fail(state, ROLO_XML_TOO_MANY_ELEMENTS, "too many elements"); return; }
    rolo_xml_span ns, name;
    if (!rolo_append_namespace(state, uri, &ns) || !rolo_append_string(state, localname, &name)) return;
    rolo_xml_event *event = rolo_push(state, ROLO_XML_START);
    if (!event) return;
    event->ns = ns; event->name = name;
    /* attributes: localname, prefix, URI, value start, value end (5 pointers each). */
    for (int i = 0; i < nb_attributes; i++) {
        const xmlChar **a = attributes + 5 * i;
        rolo_xml_span ans, aname, avalue;
        if (!rolo_append_namespace(state, a[2], &ans) || !rolo_append_string(state, a[0], &aname)
            || !rolo_append_attribute_value(state, a[3], a[4], &avalue)) return;
        rolo_xml_event *attribute = rolo_push(state, ROLO_XML_ATTRIBUTE);
        if (!attribute) return;
        attribute->ns = ans; attribute->name = aname; attribute->value = avalue;
    }
}

static void rolo_end(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri) {
    (void)localname; (void)prefix; (void)uri;
    rolo_state *state = ctx;
    if (state->result->status != ROLO_XML_OK) return;
    state->depth--;
    rolo_push(state, ROLO_XML_END);
}

static void rolo_characters(void *ctx, const xmlChar *chars, int length) {
    rolo_state *state = ctx;
    if (state->result->status != ROLO_XML_OK) return;
    rolo_xml_result *r = state->result;
    /* Coalesce adjacent chunks: the previous text's bytes are the arena's tail. */
    if (r->count > 0 && r->events[r->count - 1].kind == ROLO_XML_TEXT) {
        rolo_xml_event *last = &r->events[r->count - 1];
        if ((size_t)last->value.offset + last->value.length == r->arena_length) {
            rolo_xml_span extra;
            if (!rolo_append(state, chars, (size_t)length, &extra)) return;
            r->events[r->count - 1].value.length += (uint32_t)length;
            return;
        }
    }
    rolo_xml_span value;
    if (!rolo_append(state, chars, (size_t)length, &value)) return;
    rolo_xml_event *event = rolo_push(state, ROLO_XML_TEXT);
    if (event) event->value = value;
}

/* Called as soon as `<!DOCTYPE name ...` is read, before any internal subset (entity
 * declarations) is parsed: the document is refused right there. */
static void rolo_internal_subset(void *ctx, const xmlChar *name, const xmlChar *external_id,
                                 const xmlChar *system_id) {
    (void)name; (void)external_id; (void)system_id;
    rolo_fail(ctx, ROLO_XML_DOCTYPE, "DOCTYPE is not allowed");
}

static xmlEntityPtr rolo_get_entity(void *ctx, const xmlChar *name) {
    (void)ctx;
    return xmlGetPredefinedEntity(name);
}

/* Keeps the first error (later ones are usually consequences of it); never prints. */
static void rolo_structured_error(void *ctx, xmlErrorPtr error) {
    rolo_state *state = ctx;
    if (!error || error->level < XML_ERR_ERROR || state->first_error[0]) return;
    state->first_error_line = error->line;
    snprintf(state->first_error, sizeof state->first_error, "%s", error->message ? error->message : "malformed XML");
    size_t n = strlen(state->first_error);
    while (n > 0 && (state->first_error[n - 1] == '\n' || state->first_error[n - 1] == ' '))
        state->first_error[--n] = '\0';
}

int rolo_xml_parse(const uint8_t *bytes, size_t length, int max_depth, int max_elements,
                   rolo_xml_result *result) {
    rolo_xml_init();
    memset(result, 0, sizeof *result);
    if (length > INT32_MAX) {
        result->status = ROLO_XML_TOO_LARGE;
        snprintf(result->error_message, sizeof result->error_message, "document too large");
        return result->status;
    }
    xmlParserCtxtPtr ctxt = xmlCreateMemoryParserCtxt((const char *)bytes, (int)length);
    if (!ctxt) {
        result->status = length == 0 ? ROLO_XML_MALFORMED : ROLO_XML_OUT_OF_MEMORY;
        snprintf(result->error_message, sizeof result->error_message,
                 length == 0 ? "empty document" : "cannot create XML parser");
        return result->status;
    }
    xmlCtxtUseOptions(ctxt, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOCDATA);

    xmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = rolo_start;
    sax.endElementNs = rolo_end;
    sax.characters = rolo_characters;
    sax.ignorableWhitespace = rolo_characters;
    sax.internalSubset = rolo_internal_subset;
    sax.getEntity = rolo_get_entity;
    sax.serror = rolo_structured_error;
    memcpy(ctxt->sax, &sax, sizeof sax);

    rolo_state state;
    memset(&state, 0, sizeof state);
    state.result = result;
    state.ctxt = ctxt;
    state.max_depth = max_depth;
    state.max_elements = max_elements;
    ctxt->userData = &state;

    xmlParseDocument(ctxt);

    if (result->status == ROLO_XML_OK && (!ctxt->wellFormed || !ctxt->nsWellFormed)) {
        result->status = ROLO_XML_MALFORMED;
        result->error_line = state.first_error[0] ? state.first_error_line : xmlSAX2GetLineNumber(ctxt);
        snprintf(result->error_message, sizeof result->error_message, "%s",
                 state.first_error[0] ? state.first_error : "malformed XML");
    }
    if (ctxt->myDoc) { xmlFreeDoc(ctxt->myDoc); ctxt->myDoc = NULL; }
    xmlFreeParserCtxt(ctxt);
    return result->status;
}

void rolo_xml_result_free(rolo_xml_result *result) {
    free(result->events);
    free(result->arena);
    result->events = NULL; result->arena = NULL;
    result->count = result->capacity = result->arena_length = result->arena_capacity = 0;
}
