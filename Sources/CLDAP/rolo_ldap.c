#include "CLDAP.h"
#include <string.h>
#include <sys/time.h>

int rolo_ldap_open(const char *url, const char *ca_file, int verify,
                   int network_seconds, int operation_seconds, LDAP **out) {
    LDAP *ld = NULL;
    *out = NULL;
    int rc = ldap_initialize(&ld, url);
    if (rc != LDAP_SUCCESS) return rc;
    int version = LDAP_VERSION3;
    struct timeval network = { network_seconds, 0 };
    struct timeval operation = { operation_seconds, 0 };
    if ((rc = ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &version)) != LDAP_OPT_SUCCESS
        || (rc = ldap_set_option(ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF)) != LDAP_OPT_SUCCESS
        || (rc = ldap_set_option(ld, LDAP_OPT_NETWORK_TIMEOUT, &network)) != LDAP_OPT_SUCCESS
        || (rc = ldap_set_option(ld, LDAP_OPT_TIMEOUT, &operation)) != LDAP_OPT_SUCCESS
        || (rc = ldap_set_option(ld, LDAP_OPT_X_TLS_REQUIRE_CERT, &verify)) != LDAP_OPT_SUCCESS
        || (ca_file != NULL && (rc = ldap_set_option(ld, LDAP_OPT_X_TLS_CACERTFILE, ca_file)) != LDAP_OPT_SUCCESS)) {
        ldap_unbind_ext_s(ld, NULL, NULL);
        return rc == -1 ? LDAP_PARAM_ERROR : rc;
    }
    /* The TLS options above apply to this handle only once it has a context of its own. */
    int server = 0;
    if ((rc = ldap_set_option(ld, LDAP_OPT_X_TLS_NEWCTX, &server)) != LDAP_OPT_SUCCESS) {
        ldap_unbind_ext_s(ld, NULL, NULL);
        return LDAP_CONNECT_ERROR;
    }
    *out = ld;
    return LDAP_SUCCESS;
}

int rolo_ldap_simple_bind(LDAP *ld, const char *dn, const char *password, size_t length) {
    struct berval credentials = { (ber_len_t)length, (char *)password };
    return ldap_sasl_bind_s(ld, dn, LDAP_SASL_SIMPLE, &credentials, NULL, NULL, NULL);
}

int rolo_ldap_search(LDAP *ld, const char *base, int scope, const char *filter,
                     char **attributes, int time_limit_seconds, int size_limit, LDAPMessage **result) {
    struct timeval limit = { time_limit_seconds, 0 };
    *result = NULL;
    return ldap_search_ext_s(ld, base, scope, filter, attributes, 0, NULL, NULL,
                             &limit, size_limit, result);
}

int rolo_ldap_search_page(LDAP *ld, const char *base, int scope, const char *filter,
                          char **attributes, int time_limit_seconds, int page_size,
                          struct berval *cookie, LDAPMessage **result, struct berval **next_cookie) {
    struct timeval limit = { time_limit_seconds, 0 };
    LDAPControl *page = NULL;
    *result = NULL;
    *next_cookie = NULL;
    int rc = ldap_create_page_control(ld, page_size, cookie, 0, &page);
    if (rc != LDAP_SUCCESS) return rc;
    LDAPControl *controls[2] = { page, NULL };
    rc = ldap_search_ext_s(ld, base, scope, filter, attributes, 0, controls, NULL, &limit, 0, result);
    ldap_control_free(page);
    if (rc != LDAP_SUCCESS) return rc;
    int code = LDAP_SUCCESS;
    LDAPControl **returned = NULL;
    rc = ldap_parse_result(ld, *result, &code, NULL, NULL, NULL, &returned, 0);
    if (rc != LDAP_SUCCESS) return rc;
    LDAPControl *response = ldap_control_find(LDAP_CONTROL_PAGEDRESULTS, returned, NULL);
    if (response != NULL) {
        ber_int_t estimate = 0;
        struct berval next = { 0, NULL };
        rc = ldap_parse_pageresponse_control(ld, response, &estimate, &next);
        if (rc == LDAP_SUCCESS && next.bv_len > 0) *next_cookie = ber_bvdup(&next);
        if (next.bv_val != NULL) ber_memfree(next.bv_val);
    }
    ldap_controls_free(returned);
    return rc == LDAP_SUCCESS ? code : rc;
}

rolo_ldap_kind rolo_ldap_kind_of(int code) {
    switch (code) {
    case LDAP_SUCCESS: return ROLO_LDAP_OK;
    case LDAP_SERVER_DOWN: case LDAP_CONNECT_ERROR: case LDAP_TIMEOUT: case LDAP_TIMELIMIT_EXCEEDED:
    case LDAP_UNAVAILABLE: case LDAP_BUSY:
        return ROLO_LDAP_UNAVAILABLE;
    case LDAP_INVALID_CREDENTIALS: return ROLO_LDAP_INVALID_CREDENTIALS;
    default: return ROLO_LDAP_OTHER;
    }
}

char *rolo_ldap_diagnostic(LDAP *ld) {
    char *message = NULL;
    if (ld == NULL || ldap_get_option(ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &message) != LDAP_OPT_SUCCESS) return NULL;
    return message;
}
