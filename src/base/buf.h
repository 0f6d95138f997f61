/* buf.h - growable byte buffer (owned memory, always NUL-terminated). */
#ifndef CP_BASE_BUF_H
#define CP_BASE_BUF_H

#include <stddef.h>

typedef struct cp_buf {
    char *data; /* owned; NULL until the first append */
    size_t len;
    size_t cap;
} cp_buf;

#define CP_BUF_INIT { NULL, 0, 0 }

void cp_buf_free(cp_buf *b);
void cp_buf_reset(cp_buf *b); /* len = 0, keeps the memory */
void cp_buf_reserve(cp_buf *b, size_t extra);
void cp_buf_append(cp_buf *b, const void *data, size_t n);
void cp_buf_puts(cp_buf *b, const char *s);
void cp_buf_putc(cp_buf *b, char c);
void cp_buf_printf(cp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append n copies of c. */
void cp_buf_fill(cp_buf *b, char c, size_t n);
/* Returns a C string view ("" when empty); valid until the next append. */
const char *cp_buf_str(const cp_buf *b);

#endif
