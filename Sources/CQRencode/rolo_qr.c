#include "CQRencode.h"
#include <errno.h>
#include <stdlib.h>
#include <qrencode.h>

int rolo_qr_encode(const unsigned char *data, size_t length, int level, int *width, unsigned char **modules) {
    if (length == 0 || level < QR_ECLEVEL_L || level > QR_ECLEVEL_H) return EINVAL;
    /* No version holds more than 2,953 bytes; this only keeps the cast to int honest. */
    if (length > 65536) return ERANGE;
    errno = 0;
    QRcode *code = QRcode_encodeData((int)length, data, 0, (QRecLevel)level);
    if (code == NULL) return errno != 0 ? errno : ENOMEM;
    size_t count = (size_t)code->width * (size_t)code->width;
    unsigned char *out = malloc(count);
    if (out == NULL) {
        QRcode_free(code);
        return ENOMEM;
    }
    /* Bit 0 of each byte is the module's colour; the other bits are libqrencode's bookkeeping. */
    for (size_t i = 0; i < count; i++) out[i] = code->data[i] & 1;
    *width = code->width;
    *modules = out;
    QRcode_free(code);
    return 0;
}
