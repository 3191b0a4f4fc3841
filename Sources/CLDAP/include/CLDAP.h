#ifndef ROLO_CLDAP_H
#define ROLO_CLDAP_H
/* OpenLDAP's client library (libldap, Debian's libldap-dev). Swift calls most of ldap.h
 * directly; the helpers below cover what Swift cannot import (macros with casts, option
 * values passed as `void *` of different types) and name the few decisions in one place. */
#include <ldap.h>
#include <lber.h>

/* The search scopes (LDAP_SCOPE_* are cast macros, which Swift does not import). */
enum { ROLO_LDAP_SCOPE_BASE = 0, ROLO_LDAP_SCOPE_ONE = 1, ROLO_LDAP_SCOPE_SUBTREE = 2 };

/* What a result code means to a caller. */
typedef enum {
    ROLO_LDAP_OK = 0,
    ROLO_LDAP_UNAVAILABLE = 1,         /* server down, connect error, timeout, TLS failure */
    ROLO_LDAP_INVALID_CREDENTIALS = 2, /* a bind refused for its DN or password */
    ROLO_LDAP_OTHER = 3
} rolo_ldap_kind;

/* A handle for `url` (ldap:// or ldaps://, nothing connected yet), speaking LDAPv3, never
 * following referrals (a referral could send the user's password to another server), with
 * `network_seconds` to connect and `operation_seconds` for each synchronous call.
 * TLS: `ca_file` (or NULL for the system's), `verify` one of LDAP_OPT_X_TLS_NEVER/ALLOW/TRY/DEMAND,
 * set on this handle only (a new TLS context), never process-wide. Returns an LDAP result code. */
int rolo_ldap_open(const char *url, const char *ca_file, int verify,
                   int network_seconds, int operation_seconds, LDAP **out);

/* A simple bind with `password` (`length` bytes); the caller has refused an empty one. */
int rolo_ldap_simple_bind(LDAP *ld, const char *dn, const char *password, size_t length);

/* A synchronous search; `attributes` NULL-terminated (NULL for all); `time_limit_seconds`
 * for the server and the client alike. The caller frees `*result` with ldap_msgfree. */
int rolo_ldap_search(LDAP *ld, const char *base, int scope, const char *filter,
                     char **attributes, int time_limit_seconds, int size_limit, LDAPMessage **result);

/* The kind of `code`. */
/* One page of a search with the paged results control (RFC 2696), so a listing of every
   user passes a server's size limit (Active Directory's 1000, OpenLDAP's 500). `cookie` is
   NULL or the last page's; `*next_cookie` is NULL after the last page, else a berval the
   caller frees with ber_bvfree. The control is not critical: a server without it answers
   in one go, up to its size limit. */
int rolo_ldap_search_page(LDAP *ld, const char *base, int scope, const char *filter,
                          char **attributes, int time_limit_seconds, int page_size,
                          struct berval *cookie, LDAPMessage **result, struct berval **next_cookie);

rolo_ldap_kind rolo_ldap_kind_of(int code);

/* The handle's last diagnostic message (ldap_get_option LDAP_OPT_DIAGNOSTIC_MESSAGE), or NULL;
 * the caller frees it with ldap_memfree. */
char *rolo_ldap_diagnostic(LDAP *ld);

#endif
