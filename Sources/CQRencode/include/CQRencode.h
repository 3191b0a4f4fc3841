#ifndef ROLO_CQRENCODE_H
#define ROLO_CQRENCODE_H
/* libqrencode (Debian's libqrencode-dev) behind one call that hands Swift plain bytes, so the
 * QRcode struct and its free function never cross into Swift. */
#include <stddef.h>

/* Encodes `length` bytes in 8-bit mode at the smallest version that holds them, with error
 * correction `level` (0 L, 1 M, 2 Q, 3 H). On success returns 0, sets `*width` to the modules
 * per side and `*modules` to width*width bytes, row by row, 1 for dark and 0 for light, which
 * the caller frees with free(3). On failure returns an errno value (ERANGE: too long for any
 * version) and sets nothing. */
int rolo_qr_encode(const unsigned char *data, size_t length, int level, int *width, unsigned char **modules);

#endif
